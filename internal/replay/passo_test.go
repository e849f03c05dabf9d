package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
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

// The replay applies the draw step's effects (decisao.Sortear) to its
// queue: a sweep's draw takes the demand it served out, so the next sweep
// of the unit owes the demand that waited after it. A log whose second
// sweep served the first demand again, or whose draws left the queue as it
// was, diverges at that draw.
func TestPassoDoSorteioNaFila(t *testing.T) {
	uc, x := uuid.New(), uuid.New()
	d1, d2 := uuid.New(), uuid.New()
	T := "2026-12-07T03:00:00.000Z"
	seq := func(n int64) *int64 { return &n }
	sortear := func(id, d uuid.UUID, s int64) registro.Registro {
		res, err := sorteio.Sortear(id.String(), T, []string{x.String()})
		if err != nil {
			t.Fatal(err)
		}
		r, err := registro.NovoRegistro(id, d, uc, id.String(), seq(s), T, res, uc, []uuid.UUID{uc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	log := func(segundo uuid.UUID) []registro.Registravel {
		return []registro.Registravel{
			registro.NovaHierarquia(uuid.New(), seq(1), uc, nil, 1),
			registro.NovoSemCandidatos(uuid.New(), d1, uc, seq(1), T, elegibilidade.NenhumCadastrado, []uuid.UUID{uc}, 0, 0, nil),
			registro.NovoSemCandidatos(uuid.New(), d2, uc, seq(2), T, elegibilidade.NenhumCadastrado, []uuid.UUID{uc}, 0, 0, nil),
			// x registers: the sweep of uc serves d1, the oldest.
			registro.NovoCadastro(uuid.New(), seq(3), x, uc, 1, elegibilidade.Disponivel, true),
			registro.NovaVarredura(uuid.New(), seq(3), &uc, nil, "conselheiro.cadastrado"),
			sortear(uuid.New(), d1, 3),
			// x's cycle of d1 ends: the sweep of uc owes d2.
			registro.NovoCicloConcluido(uuid.New(), seq(4), x, d1, elegibilidade.Disponivel),
			registro.NovaVarredura(uuid.New(), seq(4), &uc, nil, "conselheiro.ciclo_concluido"),
			sortear(uuid.New(), segundo, 4),
		}
	}
	aplicar := func(regs []registro.Registravel) *Replay {
		rp := Novo(uuid.Nil)
		for i, r := range regs {
			rp.Aplicar(int64(i), r)
		}
		rp.Fechar()
		return rp
	}
	if rp := aplicar(log(d2)); len(rp.Divergencias) != 0 || rp.Decisoes != 4 {
		t.Fatalf("honest log: %d decisions, divergences %v", rp.Decisoes, rp.Divergencias)
	}
	rp := aplicar(log(d1))
	if len(rp.Divergencias) == 0 || rp.Divergencias[0].Indice != 8 || !strings.Contains(rp.Divergencias[0].Motivo, "a devida era a demanda "+d2.String()) {
		t.Fatalf("the second sweep serving d1 again: %v", rp.Divergencias)
	}
}
