package main

// The verifier's CPU profile at scale, in-process (the bench times the
// real binary, which writes no profile):
//
//	D6A_BENCH_REGISTROS=300000 go test -run '^$' -bench VerificarEspelho -benchtime 1x -cpuprofile /tmp/verificar.cpu ./cmd/d6a-bench
//	go tool pprof -top /tmp/verificar.cpu

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/transparencia"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// espelhoSintetico writes the first n records of the synthetic history as
// a signed tiles mirror under dir/d6a/transparencia.
func espelhoSintetico(tb testing.TB, dir string, n int) (transparencia.Chave, int) {
	tb.Helper()
	skey, _, err := transparencia.GerarChave(registro.OrigemPadrao)
	if err != nil {
		tb.Fatal(err)
	}
	chave, err := transparencia.NovaChave(skey)
	if err != nil {
		tb.Fatal(err)
	}
	e := &escritorTiles{raiz: filepath.Join(dir, "d6a", "transparencia"), chave: chave}
	if err := os.MkdirAll(e.raiz, 0o755); err != nil {
		tb.Fatal(err)
	}
	_, cp, _, err := e.escreverHistoria(int64(n), int64(n), n/2+1)
	if err != nil {
		tb.Fatal(err)
	}
	return chave, int(cp.Tamanho)
}

func BenchmarkVerificarEspelho(b *testing.B) {
	n := 100_000
	if s := os.Getenv("D6A_BENCH_REGISTROS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	chave, n := espelhoSintetico(b, dir, n)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir))}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	cpu := func() float64 {
		var u syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &u)
		return float64(u.Utime.Nano()+u.Stime.Nano()) / 1e3
	}
	b.ResetTimer()
	antes := cpu()
	for range b.N {
		c := &log.Cliente{Base: "http://" + ln.Addr().String(), Chave: chave.Verificador}
		res, err := c.Reproduzir(context.Background(), uuid.Nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		if l := res.Linha(); !strings.Contains(l, fmt.Sprintf("registros=%d ", n)) || !strings.Contains(l, "divergencias=0 ") || res.Resumo.Falhas != 0 {
			b.Fatalf("%s (falhas %d: %v)", l, res.Resumo.Falhas, res.Resumo.Primeira)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "registros/s")
	// CPU of this process (verifier and file server) per record: what the
	// machine's load does not change.
	b.ReportMetric((cpu()-antes)/float64(n*b.N), "µs_cpu/registro")
}
