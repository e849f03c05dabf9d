package httpapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/estatisticas"
	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// BenchmarkEstatisticasRota is GET /d6a/transparencia/estatisticas over a
// log of 10, 10,000 and 100,000 synthetic draws (lists of 1 to 8 drawn
// from 5,000 counsellors, all of whom appear by 10,000 draws): the route
// reads one row per counsellor, so its latency follows the counsellors
// seen, not the draws. It also reports what the service's
// pass costs per record (estatisticas.Apurar, run once over the log).
//
//	go test -run '^$' -bench EstatisticasRota -benchtime 200x ./internal/httpapi
func BenchmarkEstatisticasRota(b *testing.B) {
	for _, n := range []int{10, 10000, 100000} {
		b.Run(fmt.Sprintf("sorteios=%d", n), func(b *testing.B) {
			ctx := context.Background()
			st := pgtest.New(b)
			skey, vkey, err := transparencia.GerarChave(registro.OrigemPadrao)
			if err != nil {
				b.Fatal(err)
			}
			chave, _ := transparencia.NovaChave(skey)
			for de := 0; de < n; de += 5000 {
				regs := make([]registro.Registro, 0, 5000)
				for i := de; i < min(n, de+5000); i++ {
					regs = append(regs, historico.RegistroSintetico("bench", i))
				}
				if err := st.InTx(ctx, func(tx store.Tx) error { return transparencia.Anexar(ctx, tx.ParaOLog(), regs) }); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := transparencia.Assinar(ctx, st.Pool, chave, registro.OrigemPadrao); err != nil {
				b.Fatal(err)
			}
			inicio := time.Now()
			for {
				k, err := estatisticas.Apurar(ctx, st, 5000)
				if err != nil {
					b.Fatal(err)
				}
				if k == 0 {
					break
				}
			}
			apuracao := float64(time.Since(inicio).Microseconds()) / float64(n)
			app, err := New(Options{Config: config.Config{}, Store: st, ChaveLog: vkey})
			if err != nil {
				b.Fatal(err)
			}
			url := escutar(b, app) + "/d6a/transparencia/estatisticas"
			b.ResetTimer()
			for b.Loop() {
				res, err := http.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					b.Fatalf("status %d", res.StatusCode)
				}
			}
			b.ReportMetric(apuracao, "µs-apuracao/registro")
		})
	}
}
