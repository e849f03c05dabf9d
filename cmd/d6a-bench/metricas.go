package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// metricas is one scrape of d6a serve's /metrics: series ("name{labels}")
// → value.
type metricas map[string]float64

func raspar(httpAddr string) metricas {
	r, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + httpAddr + "/metrics")
	if err != nil {
		return nil
	}
	defer r.Body.Close()
	return lerMetricas(r.Body)
}

func lerMetricas(corpo io.Reader) metricas {
	b, _ := io.ReadAll(corpo)
	m := metricas{}
	for _, l := range strings.Split(string(b), "\n") {
		if j := strings.LastIndexByte(l, ' '); j >= 0 && !strings.HasPrefix(l, "#") {
			if v, err := strconv.ParseFloat(l[j+1:], 64); err == nil {
				m[l[:j]] = v
			}
		}
	}
	return m
}

// histograma is a cumulative Prometheus histogram: upper bound → count.
type histograma map[float64]float64

// delta is histogram nome over a pass (depois − antes), summed over the
// series whose labels contain every one of filtros: its buckets, and its
// mean (Δsum ÷ Δcount; 0 without observations).
func delta(antes, depois metricas, nome string, filtros ...string) (histograma, time.Duration) {
	h, soma, n := histograma{}, 0.0, 0.0
	for i, m := range []metricas{depois, antes} {
		for s, v := range m {
			if slices.ContainsFunc(filtros, func(f string) bool { return !strings.Contains(s, f) }) {
				continue
			}
			v *= float64(1 - 2*i)
			j := strings.Index(s, `le="`)
			switch {
			case strings.HasPrefix(s, nome+"_sum"):
				soma += v
			case strings.HasPrefix(s, nome+"_count"):
				n += v
			case strings.HasPrefix(s, nome+"_bucket{") && j >= 0:
				if le, err := strconv.ParseFloat(s[j+4:j+4+strings.IndexByte(s[j+4:], '"')], 64); err == nil { // "+Inf" parses
					h[le] += v
				}
			}
		}
	}
	return h, time.Duration(razao(soma, max(n, 0)) * float64(time.Second))
}

// quantil is the upper bound of the bucket holding quantile p (the
// histogram's resolution), as a duration of seconds; +Inf as -1, no
// observations as 0.
func (h histograma) quantil(p float64) time.Duration {
	if h[math.Inf(1)] <= 0 {
		return 0
	}
	for _, le := range slices.Sorted(maps.Keys(h)) {
		if h[le] >= p*h[math.Inf(1)] && !math.IsInf(le, 1) {
			return time.Duration(le * float64(time.Second))
		}
	}
	return -1
}

// quantis are p50 and p99 of histogram nome over a pass.
func quantis(antes, depois metricas, nome string, filtros ...string) [2]time.Duration {
	h, _ := delta(antes, depois, nome, filtros...)
	return [2]time.Duration{h.quantil(0.5), h.quantil(0.99)}
}

// histogramasFases are d6a serve's histograms of where a message's time
// goes: the bus's delivery of each message and the opening, decisions and
// closing of each transaction (name, label filter).
var histogramasFases = [4][2]string{{"d6a_entrega_atraso_segundos", ""}, {"d6a_transacao_fase_segundos", `fase="abertura"`},
	{"d6a_transacao_fase_segundos", `fase="decisoes"`}, {"d6a_transacao_fase_segundos", `fase="fechamento"`}}

// fasesD6A is d6a serve's mean delivery and transaction phases over a pass.
func fasesD6A(antes, depois metricas, total time.Duration) fases {
	var m [4]time.Duration
	for i, h := range histogramasFases {
		_, m[i] = delta(antes, depois, h[0], h[1])
	}
	return fases{Entrega: m[0], Abertura: m[1], Decisoes: m[2], Escrita: m[3], Total: total}
}

// divisao is where d6a serve says a pass's time went (histogramasFases),
// p50 and p99 each.
type divisao [4][2]time.Duration

func lerDivisao(antes, depois metricas) (d divisao) {
	for i, h := range histogramasFases {
		d[i] = quantis(antes, depois, h[0], h[1])
	}
	return d
}

// String is "delivery · opening · decisions · closing" at p50, then at p99.
func (d divisao) String() string {
	q := func(i int) string {
		return juntar(d[:], " · ", func(q [2]time.Duration) string { return "≤ " + limite(q[i]) })
	}
	return q(0) + " / " + q(1)
}

// limite prints a histogram bucket bound in ms ("?" when unknown).
func limite(d time.Duration) string {
	return se(d == 0, "?", se(d < 0, "∞", strconv.FormatFloat(ms(d), 'f', -1, 64)))
}

// lotes is d6a_lote_unidades over a pass: how many units of work each
// committed transaction of the executor carried, and
// d6a_lotes_desfeitos_total; and the eligibility decisions with the
// further round trips they made because a whole step read was ineligible
// (d6a_elegibilidade_decisoes_total, d6a_elegibilidade_releituras_total).
type lotes struct {
	Transacoes, Unidades, Desfeitos float64
	Decisoes, Releituras            float64
	h                               histograma
}

func lerLotes(antes, depois metricas) lotes {
	d := func(s string) float64 { return depois[s] - antes[s] }
	h, _ := delta(antes, depois, "d6a_lote_unidades")
	return lotes{d("d6a_lote_unidades_count"), d("d6a_lote_unidades_sum"), d("d6a_lotes_desfeitos_total"),
		d("d6a_elegibilidade_decisoes_total"), d("d6a_elegibilidade_releituras_total"), h}
}

// String is the histogram in one line: "1: 40%, 2: 10%, 3–4: …" of the
// transactions, then the mean.
func (l lotes) String() string {
	if l.Transacoes <= 0 {
		return "no transactions"
	}
	var p []string
	de, ant := 1.0, 0.0
	for _, ate := range slices.Sorted(maps.Keys(l.h)) {
		if n := l.h[ate] - ant; n > 0 {
			nome := se(math.IsInf(ate, 1), fmt.Sprintf("> %g", de-1), se(de == ate, fmt.Sprintf("%g", ate), fmt.Sprintf("%g–%g", de, ate)))
			p = append(p, fmt.Sprintf("%s: %.0f%%", nome, 100*n/l.Transacoes))
		}
		de, ant = ate+1, l.h[ate]
	}
	s := fmt.Sprintf("%.0f tx, mean %.1f units/tx (%s)", l.Transacoes, l.Unidades/l.Transacoes, strings.Join(p, ", "))
	s += se(l.Desfeitos > 0, fmt.Sprintf("; %.0f batches redone one unit per transaction", l.Desfeitos), "")
	return s + se(l.Decisoes > 0, fmt.Sprintf("; eligibility: %.0f decisions, %.0f further step reads (%.1f%%)",
		l.Decisoes, l.Releituras, 100*l.Releituras/max(l.Decisoes, 1)), "")
}
