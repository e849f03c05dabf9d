package main

import (
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/httpapi"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/tiles"
	"github.com/formigueiro/d6a/internal/transparencia"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// BenchmarkTilesRota compares, in the same run, the full tiles served by
// d6a's tile route (PostgreSQL behind, per-IP limit off) with the same
// bytes served by Go's http.FileServer from a mirror (`--espelhar`): 8
// clients fetch random full level-0 tiles and entry bundles for 3 s each
// (issue 39's target ≥ 0.5×):
//
//	go test -run '^$' -bench TilesRota -benchtime 1x ./cmd/d6a
func BenchmarkTilesRota(b *testing.B) {
	ctx := context.Background()
	const n = 51_200 // 200 full tiles
	skey, _, err := transparencia.GerarChave(registro.OrigemPadrao)
	if err != nil {
		b.Fatal(err)
	}
	chave, _ := transparencia.NovaChave(skey)
	st := pgtest.New(b)
	for de := 0; de < n; de += 1000 {
		regs := make([]registro.Registro, 0, 1000)
		for i := de; i < min(de+1000, n); i++ {
			regs = append(regs, historico.RegistroSintetico("tiles", i))
		}
		if err := pgx.BeginTxFunc(ctx, st.Pool, pgx.TxOptions{}, func(tx pgx.Tx) error { return transparencia.Anexar(ctx, tx, regs) }); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := transparencia.Assinar(ctx, st.Pool, chave, registro.OrigemPadrao); err != nil {
		b.Fatal(err)
	}
	app, err := httpapi.New(httpapi.Options{Config: config.Config{}, Store: st, ChaveLog: chave.Verificador})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = httpapi.Servir(app, ln) }()
	b.Cleanup(func() { _ = app.Shutdown() })
	rota := "http://" + ln.Addr().String()
	dir := b.TempDir()
	c := &log.Cliente{Base: rota, Chave: chave.Verificador}
	if _, err := c.Espelhar(ctx, dir, nil); err != nil {
		b.Fatal(err)
	}
	fs := httptest.NewServer(http.FileServer(http.Dir(dir)))
	b.Cleanup(fs.Close)

	taxa := func(base string) float64 {
		tr := &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}
		defer tr.CloseIdleConnections()
		hc := &http.Client{Transport: tr}
		var feitos atomic.Int64
		fim := time.Now().Add(3 * time.Second)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(g), 1))
				for time.Now().Before(fim) {
					k := int64(r.IntN(n / tiles.Width))
					t := tiles.Hash(0, k, tiles.Width)
					if r.IntN(2) == 0 {
						t = tiles.Bundle(k, tiles.Width)
					}
					res, err := hc.Get(base + "/d6a/transparencia/" + tiles.Path(t))
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != 200 {
						b.Errorf("%s: %d", tiles.Path(t), res.StatusCode)
						return
					}
					feitos.Add(1)
				}
			}()
		}
		wg.Wait()
		return float64(feitos.Load()) / 3
	}
	b.ResetTimer()
	for b.Loop() {
		d6a, arquivos := taxa(rota), taxa(fs.URL)
		b.ReportMetric(d6a, "rota-req/s")
		b.ReportMetric(arquivos, "fileserver-req/s")
		b.ReportMetric(d6a/arquivos, "razao")
	}
}
