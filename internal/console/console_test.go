package console_test

import (
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/atribuicaotest"
	"github.com/formigueiro/d6a/internal/console"
	"github.com/formigueiro/d6a/internal/manutencao"
)

// A timeout asked again before its refusal is consumed answers the same
// event id and queues nothing more; two services (instances) asked at once,
// by the console and the automatic check, queue one refusal.
func TestTimeoutUmaRecusaPorAtribuicao(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	uc := a.UC(uuid.Nil)
	a.Conselheiro(uc)
	r := a.SortearComSucesso(atribuicaotest.Pedido(uc))
	op := console.Acao{Sub: "op", Justificativa: "teste"}

	outra := a.NovoServico(a.St, nil)
	a.Clk.Avancar(100 * time.Hour)
	start := make(chan struct{})
	var wg sync.WaitGroup
	ids := make([]uuid.UUID, 4)
	errs := make([]error, 4)
	for i, f := range []func() (uuid.UUID, error){
		func() (uuid.UUID, error) { return novoConsole(a, a.Svc).Timeout(a.Ctx, op, r.EventIDSorteio) },
		func() (uuid.UUID, error) { return novoConsole(a, outra).Timeout(a.Ctx, op, r.EventIDSorteio) },
		func() (uuid.UUID, error) {
			_, err := manutencao.VerificarTimeouts(a.Ctx, a.Svc, slog.Default())
			return atribuicao.IDTimeout(r.EventIDSorteio), err
		},
		func() (uuid.UUID, error) {
			_, err := manutencao.VerificarTimeouts(a.Ctx, outra, slog.Default())
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
	if n := a.Contar(`SELECT count(*) FROM d6a.outbox WHERE tipo = 'conselheiro.atribuicao_recusada'`); n != 1 {
		t.Fatalf("%d refusals queued, want 1", n)
	}
	if n := a.Contar(`SELECT count(*) FROM d6a.acoes_administrativas WHERE acao = 'timeout' AND event_id = $1`, want); n != 2 {
		t.Fatalf("%d journal rows, want one per console call", n)
	}
	if _, err := novoConsole(a, a.Svc).Timeout(a.Ctx, console.Acao{Sub: "op", Justificativa: " "}, r.EventIDSorteio); !errors.Is(err, console.ErrJustificativa) {
		t.Fatalf("blank justificativa: %v", err)
	}
}

// novoConsole is the operators' console over svc, on the ambiente's store and
// clock.
func novoConsole(a *atribuicaotest.Ambiente, svc *atribuicao.Servico) *console.Console {
	return console.New(console.Options{Executor: svc, Store: a.St, Now: a.Clk.Now})
}

func TestMain(m *testing.M) { atribuicaotest.Main(m) }
