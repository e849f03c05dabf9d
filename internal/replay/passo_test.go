package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/registro"
)

// The replay runs the executor's own step (decisao.Passo) on each input
// record and names, at its index, a record whose status the step does not
// give: a log that shows a counsellor freed, suspended or registered
// against the rules of spec 3.10–3.12 and 4.6.
func TestPassoDoExecutorNosRegistros(t *testing.T) {
	uc := uuid.New()
	x, y := uuid.New(), uuid.New()
	ate := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	regs := []registro.Registravel{
		registro.NovoCadastro(uuid.New(), nil, x, uc, 1, elegibilidade.Disponivel, true),
		registro.NovoCadastro(uuid.New(), nil, y, uc, 1, elegibilidade.Inativo, true),
		// 2: a cycle end of a counsellor holding nothing leaves them
		// disponivel, not ocupado.
		registro.NovoCicloConcluido(uuid.New(), nil, x, uuid.New(), elegibilidade.Ocupado),
		// 3: a suspension of an inactive counsellor: spec 4.6 forbids it.
		registro.NovaSuspensao(uuid.New(), nil, y, ate),
		// 4: the same citizen registered twice: the executor ignores it.
		registro.NovoCadastro(uuid.New(), nil, x, uc, 1, elegibilidade.Disponivel, true),
		// 5: an honest one: x suspended from disponivel …
		registro.NovaSuspensao(uuid.New(), nil, x, ate),
		// 6: … and a cycle end whose record keeps x suspenso: a record
		// carries no time, so either side of the suspension's end is
		// accepted.
		registro.NovoCicloConcluido(uuid.New(), nil, x, uuid.New(), elegibilidade.Suspenso),
	}
	rp := Novo(uuid.Nil)
	for i, r := range regs {
		rp.Aplicar(int64(i), r)
	}
	rp.Fechar()
	quer := map[int64]string{2: "spec 4.6", 3: "spec 4.6", 4: "já estava cadastrado"}
	vistos := map[int64]bool{}
	for _, d := range rp.Divergencias {
		if d.Conselheiro == nil {
			continue // the sweeps the cycle ends owe (not in this log)
		}
		m, ok := quer[d.Indice]
		if !ok || !strings.Contains(d.Motivo, m) {
			t.Errorf("unexpected divergence at %d: %s", d.Indice, d.Motivo)
			continue
		}
		vistos[d.Indice] = true
	}
	for i, m := range quer {
		if !vistos[i] {
			t.Errorf("record %d: no divergence naming %q; got %v", i, m, rp.Divergencias)
		}
	}
}
