package manutencao_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicaotest"
	"github.com/formigueiro/d6a/internal/manutencao"
)

func TestMain(m *testing.M) { atribuicaotest.Main(m) }

// The automatic check leaves alone assignments younger than the timeout in
// force.
func TestVerificarTimeoutsRespeitaOPrazo(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	uc := a.UC(uuid.Nil)
	a.Conselheiro(uc)
	a.SortearComSucesso(atribuicaotest.Pedido(uc))
	a.Clk.Avancar(71 * time.Hour)
	if n, err := manutencao.VerificarTimeouts(a.Ctx, a.Svc, slog.Default()); err != nil || n != 0 {
		t.Fatalf("at 71 h: %d, %v; want none", n, err)
	}
	a.Clk.Avancar(2 * time.Hour)
	if n, err := manutencao.VerificarTimeouts(a.Ctx, a.Svc, slog.Default()); err != nil || n != 1 {
		t.Fatalf("at 73 h: %d, %v; want 1", n, err)
	}
	if n, err := manutencao.VerificarTimeouts(a.Ctx, a.Svc, slog.Default()); err != nil || n != 0 {
		t.Fatalf("second pass: %d, %v; want none", n, err)
	}
}
