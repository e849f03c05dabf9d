package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/httpapi"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// BenchmarkVerifyURLAll times the real `d6a verify --url BASE --all`
// against the real public API (default per-IP limit) over a log of
// D6A_BENCH_REGISTROS valid draws (default 100,000), made with
// internal/sorteio and appended with transparencia.Anexar in batches of
// 1,000 (docs/bench.md):
//
//	go test -run '^$' -bench VerifyURLAll -benchtime 3x ./cmd/d6a
func BenchmarkVerifyURLAll(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("D6A_BENCH_REGISTROS")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	bin := d6aBin(b)
	skey, _, err := transparencia.GerarChave(registro.OrigemPadrao)
	if err != nil {
		b.Fatal(err)
	}
	chave, _ := transparencia.NovaChave(skey)
	st := pgtest.New(b)
	inicio := time.Now()
	for de := 0; de < n; de += 1000 {
		regs := make([]registro.Registro, 0, 1000)
		for i := de; i < min(de+1000, n); i++ {
			regs = append(regs, historico.RegistroSintetico("bench", i))
		}
		if err := pgx.BeginTxFunc(ctx, st.Pool, pgx.TxOptions{}, func(tx pgx.Tx) error { return transparencia.Anexar(ctx, tx, regs) }); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := transparencia.Assinar(ctx, st.Pool, chave, registro.OrigemPadrao); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d records generated, appended and signed in %s", n, time.Since(inicio).Round(time.Millisecond))
	url := servirLog(b, st, chave)
	want := "transparencia: registros=" + strconv.Itoa(n) + " verificados=" + strconv.Itoa(n) + " falhas=0 raiz="
	b.ResetTimer()
	for b.Loop() {
		out, err := exec.Command(bin, "verify", "--url", url, "--all", "--chave", chave.Verificador).Output()
		if err != nil || !strings.Contains(string(out), want) {
			b.Fatalf("verify --all: %v %q", err, out)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/verify-all")
}

// BenchmarkVerifyURLReplay times the real `d6a verify --url BASE --all
// --replay` over a consistent log (transparencia.HistoriaSintetica: 5,000
// registrations, then D6A_BENCH_DECISOES draws, default 50,000, each
// followed by its winner's cycle end: 105,000 records), and reports the
// verifier's peak RSS (docs/bench.md):
//
//	go test -run '^$' -bench VerifyURLReplay -benchtime 3x ./cmd/d6a
func BenchmarkVerifyURLReplay(b *testing.B) {
	n := 50_000
	if v, err := strconv.Atoi(os.Getenv("D6A_BENCH_DECISOES")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	bin := d6aBin(b)
	skey, _, err := transparencia.GerarChave(registro.OrigemPadrao)
	if err != nil {
		b.Fatal(err)
	}
	chave, _ := transparencia.NovaChave(skey)
	st := pgtest.New(b)
	regs := historico.HistoriaSintetica("bench", n)
	for de := 0; de < len(regs); de += 1000 {
		parte := regs[de:min(de+1000, len(regs))]
		if err := pgx.BeginTxFunc(ctx, st.Pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
			e, err := transparencia.LerEstado(ctx, tx)
			if err != nil {
				return err
			}
			return e.AnexarRegistraveis(ctx, tx, parte)
		}); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := transparencia.Assinar(ctx, st.Pool, chave, registro.OrigemPadrao); err != nil {
		b.Fatal(err)
	}
	url := servirLog(b, st, chave)
	want := "replay: registros=" + strconv.Itoa(len(regs)) + " decisoes=" + strconv.Itoa(n) + " divergencias=0 "
	var rss int64
	b.ResetTimer()
	for b.Loop() {
		cmd := exec.Command(bin, "verify", "--url", url, "--all", "--replay", "--chave", chave.Verificador)
		out, err := cmd.Output()
		if err != nil || !strings.Contains(string(out), want) {
			b.Fatalf("verify --all --replay: %v %q", err, out)
		}
		if u, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = max(rss, u.Maxrss)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/verify-replay")
	b.ReportMetric(float64(rss)/1024, "MiB-rss")
}

// servirLog serves st's log through the real public API (default per-IP
// limit) on loopback until the benchmark ends, and returns its URL.
func servirLog(b testing.TB, st *store.Store, chave transparencia.Chave) string {
	b.Helper()
	cfg, _ := config.Parse(func(string) (string, bool) { return "", false })
	app, err := httpapi.New(httpapi.Options{Config: cfg, Store: st, ChaveLog: chave.Verificador})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = httpapi.Servir(app, ln) }()
	b.Cleanup(func() { _ = app.Shutdown() })
	return "http://" + ln.Addr().String()
}
