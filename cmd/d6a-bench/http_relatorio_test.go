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

func TestSubstituirSecao(t *testing.T) {
	sec := tituloHTTP + "\n\nnovo\n\n### Results\n\nx\n"
	outra := "## Draws at national scale\n\n<!-- a -->\nfoo\n<!-- b -->\n"
	casos := []struct{ nome, antes, depois string }{
		{"empty file", "", "# Benchmarks\n\n" + sec},
		{"appended at the end", "# Benchmarks\n\n" + outra, "# Benchmarks\n\n" + outra + "\n" + sec},
		{"appended after trailing blank lines", "# Benchmarks\n\n" + outra + "\n\n", "# Benchmarks\n\n" + outra + "\n" + sec},
		{"replaced at the end", "# Benchmarks\n\n" + outra + "\n" + tituloHTTP + "\n\nvelho\n### Targets\nold\n", "# Benchmarks\n\n" + outra + "\n" + sec},
		{"replaced in the middle", "# Benchmarks\n\n" + tituloHTTP + "\n\nvelho\n\n" + outra, "# Benchmarks\n\n" + sec + "\n" + outra},
		{"replaced at the start", tituloHTTP + "\nvelho\n" + outra, sec + "\n" + outra},
	}
	for _, c := range casos {
		if got := substituirSecao(c.antes, sec); got != c.depois {
			t.Errorf("%s:\n got %q\nwant %q", c.nome, got, c.depois)
		}
	}
	// A heading that merely starts like ours is another section.
	antes := "# B\n\n" + tituloHTTP + " (old)\n\nx\n"
	if got, want := substituirSecao(antes, sec), antes+"\n"+sec; got != want {
		t.Errorf("similar heading:\n got %q\nwant %q", got, want)
	}
}

func TestAtualizarDocKeepsOthers(t *testing.T) {
	p := filepath.Join(t.TempDir(), "docs", "bench.md")
	sec := tituloHTTP + "\n\nprimeiro\n"
	if err := atualizarDoc(p, sec); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, append(b, "\n## Depois\n\nalheio\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := atualizarDoc(p, tituloHTTP+"\n\nsegundo\n"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(p)
	if want := "# Benchmarks\n\n" + tituloHTTP + "\n\nsegundo\n\n## Depois\n\nalheio\n"; string(b) != want {
		t.Errorf("got %q\nwant %q", b, want)
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
`
	if got, want := situacaoDe(lerMetricas(strings.NewReader(corpo))), (metricasHTTP{contadas: 1200010, hit: 12345, miss: 300}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// The section holds the cache: the setup bullet, the cache-off row last in
// the results table, the hit ratio under it and the cache bullet of the
// analysis; and no unformatted or non-finite number.
func TestMarkdownCache(t *testing.T) {
	c := func(carga, srv, pg, kern float64, n int, hit, miss float64) usoCPU {
		return usoCPU{Eu: carga, D6A: srv, PG: pg, Kernel: kern, Maquina: carga + srv + pg + kern, Nucleos: 2, Janela: time.Second, N: n,
			Lidas: 2 * float64(n), Escritas: 2 * float64(n), CacheHit: hit, CacheMiss: miss}
	}
	run := func(nome string, n int, cp usoCPU) resultado {
		return resultado{Nome: nome, Modo: "closed", Conexoes: 32, Janela: time.Second, OK: n, CPU: cp,
			Lat: latency.Summary{N: n, P50: time.Millisecond, P90: 2 * time.Millisecond, P99: 3 * time.Millisecond, Max: 9 * time.Millisecond}}
	}
	a := &ambienteHTTP{versao: "15", poolMax: 4, tamanhoCache: 100000, tokens: make([]string, 3), cidadaos: make([]uuid.UUID, 3), comAtribuicao: 1,
		cacheInicial: metricasHTTP{hit: 4, miss: 4}}
	r := &relatorioHTTP{o: opcoesHTTP{d: time.Second, c: 32, taxa: 1000, conexoesAbrt: 128, diag: true, comando: "go run ./cmd/d6a-bench http"}, a: a, data: time.Unix(0, 0).UTC(),
		bare:       run("bare fiber handler", 60000, c(0.9, 0.9, 0, 0.2, 60000, 0, 0)),
		situacao:   run("situacao route", 20000, c(0.5, 1.1, 0.01, 0.2, 20000, 19990, 10)),
		semBanco:   run("situacao route, 401 (no database)", 24000, c(0.6, 1.1, 0, 0.2, 24000, 0, 0)),
		semCache:   run(nomeSemCache, 7000, c(0.3, 0.9, 0.5, 0.2, 7000, 0, 0)),
		cacheAntes: metricasHTTP{hit: 4, miss: 4}, cacheDepois: metricasHTTP{hit: 30000, miss: 10}}
	r.aberto = run("situacao route", 1000, c(0.2, 0.2, 0, 0.1, 1000, 1000, 0))
	r.aberto.Modo, r.aberto.Taxa, r.aberto.Conexoes = "open", 1000, 128
	for _, f := range formasConsulta {
		x := run("database only: "+f.rotulo, 15000, c(0.8, 0, 0.9, 0.2, 15000, 0, 0))
		x.Detalhe, x.Viagens = f.nome, f.viagens
		r.banco = append(r.banco, x)
	}
	md := r.markdown()
	for _, want := range []string{"- situacao cache: `httpapi.NovoCache(cfg.SituacaoCache)`", "**99.95% hits**", "- **The cache.**", "NOTIFY every change"} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in:\n%s", want, md)
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
}
