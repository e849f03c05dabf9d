package main

// The draws report, fixed inputs against files in testdata: the report's
// wording and layout are docs/bench.md's, so a refactor of the tool must
// leave them byte for byte (go test ./cmd/d6a-bench -atualizar rewrites
// the files after an intended change).

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/latency"
)

func goldenMetricas(f float64) (metricas, metricas) {
	var a, b strings.Builder
	for _, w := range []*strings.Builder{&a, &b} {
		k := 1.0
		if w == &b {
			k = 1 + f
		}
		fmt.Fprintf(w, "# HELP x\n")
		les := []string{"1", "2", "4", "8", "16", "+Inf"}
		acc := 0.0
		for i, le := range les {
			if i != 2 {
				acc += k * float64(10*(i+1))
			}
			fmt.Fprintf(w, "d6a_lote_unidades_bucket{le=\"%s\"} %g\n", le, acc)
		}
		fmt.Fprintf(w, "d6a_lote_unidades_sum %g\nd6a_lote_unidades_count %g\nd6a_lotes_desfeitos_total %g\n", acc*3.3, acc, k*3-3)
		fmt.Fprintf(w, "d6a_elegibilidade_decisoes_total %g\nd6a_elegibilidade_releituras_total %g\n", acc*3.3, k*7)
		for _, fase := range []string{"abertura", "decisoes", "fechamento"} {
			acc := 0.0
			for i, le := range []string{"0.0005", "0.001", "0.0025", "0.005", "0.01", "+Inf"} {
				acc += k * float64(len(fase)*(i+1))
				fmt.Fprintf(w, "d6a_transacao_fase_segundos_bucket{fase=\"%s\",le=\"%s\"} %g\n", fase, le, acc)
			}
			fmt.Fprintf(w, "d6a_transacao_fase_segundos_sum{fase=\"%s\"} %g\nd6a_transacao_fase_segundos_count{fase=\"%s\"} %g\n", fase, acc*0.0013, fase, acc)
		}
		acc = 0
		for i, le := range []string{"0.0001", "0.001", "0.01", "+Inf"} {
			acc += k * float64(7*(i+2))
			fmt.Fprintf(w, "d6a_entrega_atraso_segundos_bucket{le=\"%s\"} %g\n", le, acc)
			fmt.Fprintf(w, "d6a_sorteio_handler_segundos_bucket{le=\"%s\"} %g\n", le, acc*2)
		}
		fmt.Fprintf(w, "d6a_entrega_atraso_segundos_sum %g\nd6a_entrega_atraso_segundos_count %g\n", acc*0.0007, acc)
	}
	return lerMetricas(strings.NewReader(a.String())), lerMetricas(strings.NewReader(b.String()))
}

func goldenPasse(i int, m int, taxa float64) passe {
	d := func(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }
	antes, depois := goldenMetricas(float64(i+1) * 0.7)
	p := passe{M: m, TaxaOfertada: taxa, Publicacao: d(float64(m) * 0.3), Duracao: d(float64(m)*0.41 + float64(i)), Recebidos: m - (i % 3 / 2), Sorteados: m * 9 / 10, SemCandidatos: m / 10,
		Lat:     latency.Summary{N: m, P50: d(1.23 + float64(i)), P99: d(4.56 + 2*float64(i))},
		Quietas: latency.Summary{N: m / 2, P50: d(1.1 + float64(i)), P99: d(3.3 + float64(i))},
		Handler: quantis(antes, depois, "d6a_sorteio_handler_segundos"),
		Divisao: lerDivisao(antes, depois),
		Lotes:   lerLotes(antes, depois),
	}
	p.Fases = fasesD6A(antes, depois, d(2.5+float64(i)))
	a0 := amostraCPU{quando: time.Unix(1000, 0), total: 1000, ocupado: 500, irq: 10, d6a: 100, pg: 200, nats: 50, eu: 30}
	a1 := amostraCPU{quando: time.Unix(1010, 0), total: 3000 + uint64(i)*10, ocupado: 1500 + uint64(i)*7, irq: 40, d6a: 400 + uint64(i)*13, pg: 600, nats: 90, eu: 70}
	p.CPU = calcularUso(a0, a1, m)
	return p
}

func goldenPG(i int) estatisticasPG {
	pg := estatisticasPG{wal: wal{WalSyncs: int64(1000 + i), WalBytes: int64(5 << 20), Commits: int64(900 + i), WalSyncMs: 123.4 + float64(i)}, AtualizacoesConselheiros: int64(i * 100), HOTConselheiros: int64(i * 37)}
	for j := range 18 {
		pg.Instrucoes = append(pg.Instrucoes, instrucao{Nome: fmt.Sprintf("Query%d|x", j), Chamadas: int64(1000 * (j + 1)), TotalMs: 50 - float64(j), MediaMs: 0.05 * float64(j+1), WalBytes: int64(j * 4096)})
	}
	return pg
}

func goldenRelatorio(completo bool) *relatorio {
	o := opcoes{m: 20000, leve: 2000, laco: 20000, taxaLeve: 100, carga: 0.5, comando: "go run ./cmd/d6a-bench -quick", pgbenchT: 10, sossego: 30 * time.Second}
	if !completo {
		o.leve, o.laco, o.sossego = 0, 0, 0
	}
	a := &ambiente{base: &base{raiz: "/nonexistent-d6a", versao: "17.2"}, o: o, pais: &pais{ids: make([]uuid.UUID, 255598)}}
	if completo {
		a.ruido = []string{"pgbench at K=1,000 (0.40 cores)", "burst (0.31 cores)"}
	}
	cs := []cenario{{1000, "sparse", false, false}, {100000, "sparse", false, false}, {100000, "dense", false, false}, {100000, "dense", true, false},
		{100000, "dense", true, true}, {1000000, "sparse", false, false}, {1000000, "dense", false, false}}
	r := &relatorio{a: a, dur: 93 * time.Minute, data: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}
	for i, c := range cs {
		x := resultadoK{cenario: c, UCs: 255598, PgbenchTPS: 800 + 17*float64(i), Hierarquia: cargaHierarquia{UCs: 255598, Duracao: time.Duration(1.2e9 + float64(i)*1e8)},
			MemAntes: memoria{RSS: 50 << 20, HWM: 55 << 20}, MemDepois: memoria{RSS: int64(90+i) << 20, HWM: 95 << 20}, MemFim: memoria{RSS: int64(100+i) << 20, HWM: int64(130+i*5) << 20},
			Leve: goldenPasse(i, 2000, 100), Maxima: goldenPasse(i+1, 20000, 0), Ritmada: goldenPasse(i+2, 20000, 600),
			PGLeve: goldenPG(i), PG: goldenPG(i + 1), PGRitmada: goldenPG(i + 2)}
		if completo {
			x.NATSMem = memoria{HWM: int64(20+i) << 20}
			x.LevesP50 = []time.Duration{time.Duration(1.1e6 + float64(i)*1e4), time.Duration(1.3e6), time.Duration(1.05e6 + float64(i)*2e4)}
		}
		if completo && c.K == 100000 && !c.Tmpfs {
			x.LacoAntes, x.LacoDepois = goldenLaco(256, 20000, 1.0+0.1*float64(i)), goldenLaco(256, 20000, 1.2)
		}
		if i == 3 && completo {
			x.Estatisticas = 4
			x.Avisos = []string{"level=WARN msg=x", "y"}
		}
		if !completo {
			x.Leve = passe{}
		}
		r.rs = append(r.rs, x)
	}
	if completo {
		d := func(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }
		mk := func(lote, m int, taxa float64) laco {
			l := laco{Lote: lote, M: m, Taxa: taxa, Lat: latency.Summary{P50: d(0.8 + float64(lote)/100), P99: d(2.1 + float64(lote)/50)}, Duracao: d(float64(m) * 0.2 / float64(lote)), Publicacao: d(float64(m) * 0.1)}
			l.CPU = goldenPasse(lote%5, m, 0).CPU
			l.Fases = fases{Entrega: d(0.3), Escrita: d(0.9), Publicacao: d(0.2), Total: d(1.7)}
			l.WAL = wal{WalSyncs: int64(m), WalBytes: int64(m * 300), Commits: int64(m), WalSyncMs: float64(m) * 0.6}
			return l
		}
		r.lacos = resultadoLacos{PgbenchTPS: 850, Lacos: []laco{mk(1, 20000, 0), mk(64, 20000, 0), mk(256, 20000, 0)}, Leve: mk(1, 2000, 100), Ritmado: mk(256, 20000, 3000)}
	}
	return r
}

var atualizar = flag.Bool("atualizar", false, "rewrite testdata/relatorio-* from the current code")

func TestRelatorioDourado(t *testing.T) {
	// The machine line is the host's.
	maquinaLinha := regexp.MustCompile(`(?m)^- machine: .*$`)
	for _, completo := range []bool{true, false} {
		r := goldenRelatorio(completo)
		nome := se(completo, "relatorio-completo", "relatorio-sem-laco")
		for ext, saida := range map[string]string{
			".md":        maquinaLinha.ReplaceAllString(r.markdown(), "- machine: (host)"),
			".passes.md": r.passes(),
			".svg":       desenharSVG(r.rs, r.a.o.carga),
		} {
			arquivo := filepath.Join("testdata", nome+ext)
			if *atualizar {
				if err := os.WriteFile(arquivo, []byte(saida), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			quer, err := os.ReadFile(arquivo)
			if err != nil {
				t.Fatal(err)
			}
			if saida != string(quer) {
				t.Errorf("%s: the report differs from %s (go test -atualizar rewrites it after an intended change)", nome, arquivo)
			}
		}
	}
}

// goldenLaco is a bare-loop measurement of m messages at lote whose
// duration is escala × the golden 256-batch's.
func goldenLaco(lote, m int, escala float64) laco {
	return laco{Lote: lote, M: m, Duracao: time.Duration(escala * float64(m) * 0.2 / float64(lote) * float64(time.Millisecond))}
}
