package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/latency"
)

// The generated block is replaced in place, wherever it is; a file
// without it gets the section appended; everything else is kept.
func TestReescrever(t *testing.T) {
	p := filepath.Join(t.TempDir(), "docs", "bench.md")
	if err := reescrever(p, "http", tituloHTTP, "primeiro\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if !strings.HasPrefix(string(b), "# Benchmarks\n\n"+tituloHTTP+"\n\n<!-- d6a-bench:http:begin") || !strings.HasSuffix(string(b), "\nprimeiro\n<!-- d6a-bench:http:end -->\n") {
		t.Fatalf("new file: %q", b)
	}
	antes := "# B\n\nescrito à mão\n\n" + string(b) + "\nmais à mão\n\n## Depois\n\nalheio\n"
	if err := os.WriteFile(p, []byte(antes), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := reescrever(p, "http", tituloHTTP, "segundo"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(p)
	want := strings.Replace(antes, "\nprimeiro\n", "\nsegundo\n", 1)
	if string(b) != want {
		t.Errorf("got %q\nwant %q", b, want)
	}
	// Another block is another section.
	if err := reescrever(p, "draws", "## Draws", "x"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(p)
	if !strings.HasPrefix(string(b), want) || !strings.Contains(string(b), "\n\n## Draws\n\n<!-- d6a-bench:draws:begin") {
		t.Errorf("appended: %q", b)
	}
}

func TestMilhares(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4500: "-4,500", -999: "-999"} {
		if got := milhares(n); got != want {
			t.Errorf("milhares(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestLerMetricas(t *testing.T) {
	corpo := `# HELP d6a_situacao_cache_total Situacao reads by resultado.
# TYPE d6a_situacao_cache_total counter
d6a_situacao_cache_total{resultado="hit"} 12345
d6a_situacao_cache_total{resultado="miss"} 300
d6a_http_duracao_segundos_count{rota="/d6a/conselheiros/me/situacao",status="200"} 1.2e+06
d6a_http_duracao_segundos_count{rota="/d6a/conselheiros/me/situacao",status="401"} 10
d6a_http_duracao_segundos_count{rota="/metrics",status="200"} 7
d6a_http_duracao_segundos_sum{rota="/d6a/conselheiros/me/situacao",status="200"} 3.5
d6a_tokens_cache_total{resultado="hit"} 7
d6a_tokens_cache_total{resultado="miss"} 3
d6a_jwks_cache_total{resultado="hit"} 3
d6a_jwks_cache_total{resultado="miss"} 1
`
	want := metricasHTTP{situacao: [2]float64{12345, 300}, tokens: [2]float64{7, 3}, jwks: [2]float64{3, 1}}
	if got := lerCaches(lerMetricas(strings.NewReader(corpo))); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// The section holds the cache: the setup bullet, the cache-off row last in
// the results table, the hit ratio under it and the cache bullet of the
// analysis; and no unformatted or non-finite number.
func TestMarkdownCache(t *testing.T) {
	c := func(carga, srv, pg, kern float64, n int, hit, miss float64) usoCPU {
		return usoCPU{Eu: carga, D6A: srv, PG: pg, Kernel: kern, Maquina: carga + srv + pg + kern, Nucleos: 2, Janela: time.Second, N: n,
			Lidas: 2 * float64(n), Escritas: 2 * float64(n), Cache: metricasHTTP{situacao: [2]float64{hit, miss}}}
	}
	run := func(nome string, n int, cp usoCPU) resultado {
		return resultado{Nome: nome, Conexoes: 32, Janela: time.Second, OK: n, CPU: cp,
			Lat: latency.Summary{N: n, P50: time.Millisecond, P90: 2 * time.Millisecond, P99: 3 * time.Millisecond, Max: 9 * time.Millisecond}}
	}
	a := &ambienteHTTP{base: &base{versao: "15"}, poolMax: 4, tamanhoCache: 100000, tokens: make([]string, 3), cidadaos: make([]uuid.UUID, 3),
		cacheInicial: metricasHTTP{situacao: [2]float64{4, 4}}}
	r := &relatorioHTTP{o: opcoesHTTP{d: time.Second, c: 32, taxa: 1000, conexoesAbrt: 128, ativos: 1, diag: true, comando: "go run ./cmd/d6a-bench http"}, a: a, data: time.Unix(0, 0).UTC(),
		bare:        run("bare fiber handler", 60000, c(0.9, 0.9, 0, 0.2, 60000, 0, 0)),
		situacao:    run("situacao route", 20000, c(0.5, 1.1, 0.01, 0.2, 20000, 19990, 10)),
		semBanco:    run("situacao route, 401 (no database)", 24000, c(0.6, 1.1, 0, 0.2, 24000, 0, 0)),
		semCache:    run(nomeSemCache, 7000, c(0.3, 0.9, 0.5, 0.2, 7000, 0, 0)),
		cacheRodada: metricasHTTP{situacao: [2]float64{29996, 6}}}
	r.aberto = run("situacao route", 1000, c(0.2, 0.2, 0, 0.1, 1000, 1000, 0))
	r.aberto.Taxa, r.aberto.Conexoes = 1000, 128
	for _, f := range formasConsulta {
		x := run("database only, 1 round trip: "+f.nome, 15000, c(0.8, 0, 0.9, 0.2, 15000, 0, 0))
		x.Viagens = f.viagens
		r.banco = append(r.banco, x)
	}
	md := r.markdown()
	for _, want := range []string{"situacao cache `D6A_SITUACAO_CACHE` = 100,000, `httpapi.CacheTTL`", "**99.95% hits**", "| cache, closed-loop window: hits"} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in:\n%s", want, md)
		}
	}
	// How the cache is set up is written once, by hand, below the block.
	doc, err := os.ReadFile("../../docs/bench.md")
	if err != nil {
		t.Fatal(err)
	}
	_, fora, _ := strings.Cut(string(doc), "<!-- d6a-bench:http:end -->")
	for _, want := range []string{"- situacao cache: `httpapi.NovoCache(cfg.SituacaoCache)`", "NOTIFY every change"} {
		if !strings.Contains(fora, want) {
			t.Errorf("no %q after the generated HTTP block of docs/bench.md", want)
		}
	}
	var filas []string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "| ") && (strings.Contains(l, " | closed loop") || strings.Contains(l, " | open loop")) {
			filas = append(filas, l)
		}
	}
	if len(filas) != len(r.linhas()) || !strings.HasPrefix(filas[len(filas)-1], "| "+nomeSemCache+" (") {
		t.Errorf("results rows: %q", filas)
	}
	for _, bad := range []string{"%!", "NaN", "Inf"} {
		if strings.Contains(md, bad) {
			t.Errorf("%q in:\n%s", bad, md)
		}
	}

	// The working-set run: its rows (the bare handler again, then the
	// route) after the open loop, its paragraph and two targets more,
	// judged against that second bare run.
	r.conjunto = &conjuntoHTTP{n: 1000, ativos: 333, bare: r.bare, rodada: run("situacao route, 1,000 citizens at random", 35000, c(0.6, 1.1, 0.05, 0.2, 35000, 34000, 1000)),
		aleatorios: metricasHTTP{situacao: [2]float64{34000, 1000}, tokens: [2]float64{35000, 0}},
		memInicio:  memoria{RSS: 40 << 20}, memCheia: memoria{RSS: 41 << 20}, memFim: memoria{RSS: 41 << 20, HWM: 42 << 20}}
	md = r.markdown()
	for _, want := range []string{"**Working set**", "**100.00% hits** (35,000 hits, 0 misses)", "| working set (1,000 citizens, RS256 through a JWKS): req/s ≥ 50% of the bare fiber handler's measured just before (closed loop) | **58.3%** (35,000 ÷ 60,000 req/s) | **met** — met by 8.3 points |",
		"| working set: p99 ≤ 2× the bare fiber handler's p99 (closed loop) | **3.00 ms** (bare 3.00 ms, so at most 6.00 ms) | **met** — met by 3.00 ms |", "1,048 bytes per citizen"} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in:\n%s", want, md)
		}
	}
	if !strings.Contains(md, "| **situacao route, 1,000 citizens at random** | closed loop, 32 connections | **35,000** |") {
		t.Errorf("no working-set row in:\n%s", md)
	}
	for _, bad := range []string{"%!", "NaN", "Inf"} {
		if strings.Contains(md, bad) {
			t.Errorf("%q in:\n%s", bad, md)
		}
	}
}
