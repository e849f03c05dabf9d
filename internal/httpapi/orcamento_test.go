package httpapi

import (
	"net/http/httptest"
	"sync"
	"testing"
)

// TestOrcamentoPublico: every public route shares one budget whatever the
// address. At 1 answer a second, of five requests at once to each public
// route at most two get their turn within the second a request waits (the
// burst's one and the next), the others 503 with Retry-After; /healthz is
// outside the budget. With no budget all are answered.
func TestOrcamentoPublico(t *testing.T) {
	t.Parallel()
	rotas := []string{RotaMetrics, RotaReadyz, RotaTransparencia + "/chave", RotaTransparencia + "/", RotaTransparencia + "/tile/0/000"}
	for _, porSegundo := range []int{1, 0} {
		s := novoServidor(t, func(o *Options) { o.Config.PublicoPorSegundo = porSegundo })
		for _, rota := range rotas {
			const n = 5
			status, retry := make([]int, n), make([]string, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					res, err := s.app.Test(httptest.NewRequest("GET", rota, nil), 10_000)
					if err != nil {
						t.Error(err)
						return
					}
					res.Body.Close()
					status[i], retry[i] = res.StatusCode, res.Header.Get("Retry-After")
				})
			}
			wg.Wait()
			recusadas := 0
			for i, st := range status {
				if st == 503 && retry[i] == "1" {
					recusadas++
				}
			}
			switch {
			case porSegundo == 1 && recusadas < n-2:
				t.Errorf("%s at 1/s: statuses %v (Retry-After %q), want at least %d answered 503 with Retry-After: 1", rota, status, retry, n-2)
			case porSegundo == 0 && recusadas > 0:
				t.Errorf("%s with no budget: statuses %v, want none refused", rota, status)
			}
		}
		if r := s.get(t, RotaHealthz); r.status != 200 {
			t.Errorf("/healthz with budget %d/s spent: %d, want 200 (outside the budget)", porSegundo, r.status)
		}
	}
}
