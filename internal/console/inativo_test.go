package console_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicaotest"
	"github.com/formigueiro/d6a/internal/console"
	"github.com/formigueiro/d6a/internal/elegibilidade"
)

// A suspended counsellor set inativo keeps the suspension's date, and the
// reactivation gives what the state machine says (spec 4.6): suspenso
// while it runs, with no sweep of the unit; disponivel once it has ended,
// with one. An occupied or already inativo counsellor is refused, an
// unknown one not found, and only what was done is journaled.
func TestInativoGuardaSuspensao(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	uc := a.UC(uuid.Nil)
	ate := a.Clk.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	id := a.Conselheiro(uc, atribuicaotest.SuspensoAte(ate))
	con := novoConsole(a, a.Svc)
	op := console.Acao{Sub: "op", Justificativa: "teste"}
	varreduras := func() int {
		return a.Contar(`SELECT count(*) FROM d6a.outbox WHERE tipo = 'd6a.varredura' AND correlacao_id = $1`, uc.String())
	}
	status := func(want string) {
		t.Helper()
		c := a.LinhaConselheiro(id)
		if c.Status != want || c.DataSuspensaoAte == nil || !c.DataSuspensaoAte.Equal(ate) {
			t.Fatalf("status %s, data_suspensao_ate %v; want %s, %v", c.Status, c.DataSuspensaoAte, want, ate)
		}
	}

	m, err := con.Inativar(a.Ctx, op, id)
	if err != nil || m.StatusAnterior != elegibilidade.Suspenso || m.Status != elegibilidade.Inativo {
		t.Fatalf("Inativar: %+v, %v", m, err)
	}
	status(elegibilidade.Inativo)
	if _, err := con.Inativar(a.Ctx, op, id); !errors.Is(err, console.ErrConflito) {
		t.Fatalf("Inativar twice: %v", err)
	}

	m, err = con.Reativar(a.Ctx, op, id)
	if err != nil || m.Status != elegibilidade.Suspenso {
		t.Fatalf("Reativar during the suspension: %+v, %v", m, err)
	}
	status(elegibilidade.Suspenso)
	if n := varreduras(); n != 0 {
		t.Fatalf("%d sweeps queued for a counsellor still suspenso", n)
	}
	if _, err := con.Reativar(a.Ctx, op, id); !errors.Is(err, console.ErrConflito) {
		t.Fatalf("Reativar a suspenso: %v", err)
	}

	if _, err := con.Inativar(a.Ctx, op, id); err != nil {
		t.Fatalf("Inativar again: %v", err)
	}
	a.Clk.Avancar(72 * time.Hour)
	m, err = con.Reativar(a.Ctx, op, id)
	if err != nil || m.StatusAnterior != elegibilidade.Inativo || m.Status != elegibilidade.Disponivel {
		t.Fatalf("Reativar after the suspension: %+v, %v", m, err)
	}
	status(elegibilidade.Disponivel)
	if n := varreduras(); n != 1 {
		t.Fatalf("%d sweeps queued for the unit, want 1", n)
	}

	ocupado := a.Conselheiro(uc, atribuicaotest.ComAtribuicaoAtiva)
	if _, err := con.Inativar(a.Ctx, op, ocupado); !errors.Is(err, console.ErrConflito) {
		t.Fatalf("Inativar an occupied counsellor: %v", err)
	}
	if s := a.LinhaConselheiro(ocupado).Status; s != elegibilidade.Ocupado {
		t.Fatalf("occupied counsellor now %s", s)
	}
	if _, err := con.Inativar(a.Ctx, op, uuid.New()); !errors.Is(err, console.ErrNaoEncontrado) {
		t.Fatalf("Inativar an unknown counsellor: %v", err)
	}
	if _, err := con.Reativar(a.Ctx, op, uuid.New()); !errors.Is(err, console.ErrNaoEncontrado) {
		t.Fatalf("Reativar an unknown counsellor: %v", err)
	}
	for acao, want := range map[string]int{console.AcaoInativar: 2, console.AcaoReativar: 2} {
		if n := a.Contar(`SELECT count(*) FROM d6a.acoes_administrativas WHERE acao = $1 AND alvo = $2`, acao, id.String()); n != want {
			t.Errorf("%d %s journal rows, want %d", n, acao, want)
		}
	}
	if n := a.Contar(`SELECT count(*) FROM d6a.acoes_administrativas`); n != 4 {
		t.Errorf("%d journal rows, want 4 (refusals are not journaled)", n)
	}
}
