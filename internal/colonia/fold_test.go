package colonia

import (
	"testing"
	"time"
)

// The fairness fold yields to the executor, but never for longer than
// AtrasoEstatisticas since it last reached the signed log.
func TestEsperaDoFold(t *testing.T) {
	agora := time.Date(2026, 12, 2, 20, 0, 0, 0, time.UTC)
	casos := []struct {
		nome              string
		ultimoLote, emDia time.Duration // before agora
		quer              time.Duration
	}{
		{"executor never ran", 0, 0, 0},
		{"idle a second", OciosoEstatisticas, time.Second, 0},
		{"busy, fold just caught up", 200 * time.Millisecond, 2 * time.Second, OciosoEstatisticas - 200*time.Millisecond},
		{"busy, lag near its bound", 0, AtrasoEstatisticas - 100*time.Millisecond, 100 * time.Millisecond},
		{"busy past the lag bound", 0, AtrasoEstatisticas, 0},
		{"busy long past the lag bound", 0, 5 * AtrasoEstatisticas, 0},
	}
	for _, c := range casos {
		ultimo := agora.Add(-c.ultimoLote)
		if c.nome == "executor never ran" {
			ultimo = time.Unix(0, 0) // Instancia.ultimoLote's zero value
		}
		if got := esperaDoFold(agora, ultimo, agora.Add(-c.emDia)); got != c.quer {
			t.Errorf("%s: esperaDoFold = %v, want %v", c.nome, got, c.quer)
		}
	}
}
