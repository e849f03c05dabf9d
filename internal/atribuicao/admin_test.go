package atribuicao_test

import (
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/console"
	"github.com/formigueiro/d6a/internal/manutencao"
)

// A timeout asked again before its refusal is consumed answers the same
// event id and queues nothing more; two services (instances) asked at once,
// by the console and the automatic check, queue one refusal.
func TestTimeoutUmaRecusaPorAtribuicao(t *testing.T) {
	t.Parallel()
	a := novoAmbiente(t, nil)
	uc := a.uc(uuid.Nil)
	a.conselheiro(uc)
	r := a.sortearComSucesso(pedido(uc))
	op := console.Acao{Sub: "op", Justificativa: "teste"}

	outra := a.novoServico(a.st, nil)
	a.clk.Avancar(100 * time.Hour)
	start := make(chan struct{})
	var wg sync.WaitGroup
	ids := make([]uuid.UUID, 4)
	errs := make([]error, 4)
	for i, f := range []func() (uuid.UUID, error){
		func() (uuid.UUID, error) { return a.console(a.svc).Timeout(a.ctx, op, r.EventIDSorteio) },
		func() (uuid.UUID, error) { return a.console(outra).Timeout(a.ctx, op, r.EventIDSorteio) },
		func() (uuid.UUID, error) {
			_, err := manutencao.VerificarTimeouts(a.ctx, a.svc, slog.Default())
			return atribuicao.IDTimeout(r.EventIDSorteio), err
		},
		func() (uuid.UUID, error) {
			_, err := manutencao.VerificarTimeouts(a.ctx, outra, slog.Default())
			return atribuicao.IDTimeout(r.EventIDSorteio), err
		},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ids[i], errs[i] = f()
		}()
	}
	close(start)
	wg.Wait()
	want := atribuicao.IDTimeout(r.EventIDSorteio)
	for i := range ids {
		if errs[i] != nil || ids[i] != want {
			t.Fatalf("call %d: %v, %v (want %v)", i, ids[i], errs[i], want)
		}
	}
	if n := a.contar(`SELECT count(*) FROM d6a.outbox WHERE tipo = 'conselheiro.atribuicao_recusada'`); n != 1 {
		t.Fatalf("%d refusals queued, want 1", n)
	}
	if n := a.contar(`SELECT count(*) FROM d6a.acoes_administrativas WHERE acao = 'timeout' AND event_id = $1`, want); n != 2 {
		t.Fatalf("%d journal rows, want one per console call", n)
	}
	if _, err := a.console(a.svc).Timeout(a.ctx, console.Acao{Sub: "op", Justificativa: " "}, r.EventIDSorteio); !errors.Is(err, console.ErrJustificativa) {
		t.Fatalf("blank justificativa: %v", err)
	}
}

// The automatic check leaves alone assignments younger than the timeout in
// force.
func TestVerificarTimeoutsRespeitaOPrazo(t *testing.T) {
	t.Parallel()
	a := novoAmbiente(t, nil)
	uc := a.uc(uuid.Nil)
	a.conselheiro(uc)
	a.sortearComSucesso(pedido(uc))
	a.clk.Avancar(71 * time.Hour)
	if n, err := manutencao.VerificarTimeouts(a.ctx, a.svc, slog.Default()); err != nil || n != 0 {
		t.Fatalf("at 71 h: %d, %v; want none", n, err)
	}
	a.clk.Avancar(2 * time.Hour)
	if n, err := manutencao.VerificarTimeouts(a.ctx, a.svc, slog.Default()); err != nil || n != 1 {
		t.Fatalf("at 73 h: %d, %v; want 1", n, err)
	}
	if n, err := manutencao.VerificarTimeouts(a.ctx, a.svc, slog.Default()); err != nil || n != 0 {
		t.Fatalf("second pass: %d, %v; want none", n, err)
	}
}

// console is the operators' console over svc, on the ambiente's store and
// clock.
func (a *ambiente) console(svc *atribuicao.Servico) *console.Console {
	return console.New(console.Options{Executor: svc, Store: a.st, Now: a.clk.Now})
}
