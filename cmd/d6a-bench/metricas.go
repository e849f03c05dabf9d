package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// metricas is one scrape of d6a serve's /metrics: series ("name{labels}")
// → value.
type metricas map[string]float64

func raspar(httpAddr string) metricas {
	cli := &http.Client{Timeout: 5 * time.Second}
	r, err := cli.Get("http://" + httpAddr + "/metrics")
	if err != nil {
		return nil
	}
	defer r.Body.Close()
	return lerMetricas(r.Body)
}

// lerMetricas parses the Prometheus text format.
func lerMetricas(corpo io.Reader) metricas {
	m := metricas{}
	s := bufio.NewScanner(corpo)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		l := s.Text()
		j := strings.LastIndexByte(l, ' ')
		if strings.HasPrefix(l, "#") || j < 0 {
			continue
		}
		v, err := strconv.ParseFloat(l[j+1:], 64)
		if err == nil {
			m[l[:j]] = v
		}
	}
	return m
}

// histograma is a cumulative Prometheus histogram: upper bound → count.
type histograma map[float64]float64

// histograma sums the buckets of metric nome over the series whose labels
// contain every one of filtros.
func (m metricas) histograma(nome string, filtros ...string) histograma {
	h := histograma{}
serie:
	for s, v := range m {
		if !strings.HasPrefix(s, nome+"_bucket{") {
			continue
		}
		for _, f := range filtros {
			if !strings.Contains(s, f) {
				continue serie
			}
		}
		i := strings.Index(s, `le="`)
		if i < 0 {
			continue
		}
		leTxt := s[i+4:]
		leTxt = leTxt[:strings.IndexByte(leTxt, '"')]
		le := math.Inf(1)
		if leTxt != "+Inf" {
			le, _ = strconv.ParseFloat(leTxt, 64)
		}
		h[le] += v
	}
	return h
}

// menos is h − antes, bucket by bucket.
func (h histograma) menos(antes histograma) histograma {
	d := histograma{}
	for le, n := range h {
		d[le] = n - antes[le]
	}
	return d
}

func (h histograma) limites() []float64 {
	var les []float64
	for le := range h {
		les = append(les, le)
	}
	sort.Float64s(les)
	return les
}

// quantil is the upper bound of the bucket holding quantile p (the
// histogram's resolution); +Inf as -1, no observations as 0.
func (h histograma) quantil(p float64) float64 {
	total := h[math.Inf(1)]
	if total <= 0 {
		return 0
	}
	for _, le := range h.limites() {
		if h[le] >= p*total {
			if math.IsInf(le, 1) {
				return -1
			}
			return le
		}
	}
	return -1
}

// quantis are the bucket upper bounds at p50 and p99 of d6a serve's
// histogram nome (in seconds, series with every one of filtros) over a pass.
func quantis(antes, depois metricas, nome string, filtros ...string) [2]time.Duration {
	h := depois.histograma(nome, filtros...).menos(antes.histograma(nome, filtros...))
	d := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	return [2]time.Duration{d(h.quantil(0.5)), d(h.quantil(0.99))}
}

// handler is d6a serve's own d6a_handler_duracao_segundos for
// agenda.item_disponível handled ok over a pass: the time of a unit of work
// in the executor, without the bus delivery, the ack or the publication.
func handler(antes, depois metricas) (p50, p99 time.Duration) {
	q := quantis(antes, depois, "d6a_handler_duracao_segundos", "agenda", `"ok"`)
	return q[0], q[1]
}

// divisao is where d6a serve says a pass's time went, p50 and p99 each:
// the bus's delivery of each message (d6a_entrega_atraso_segundos) and the
// three parts of each transaction (d6a_transacao_fase_segundos).
type divisao struct {
	Entrega, Abertura, Decisoes, Fechamento [2]time.Duration
}

func lerDivisao(antes, depois metricas) divisao {
	fase := func(f string) [2]time.Duration {
		return quantis(antes, depois, "d6a_transacao_fase_segundos", `fase="`+f+`"`)
	}
	return divisao{
		Entrega:  quantis(antes, depois, "d6a_entrega_atraso_segundos"),
		Abertura: fase("abertura"), Decisoes: fase("decisoes"), Fechamento: fase("fechamento"),
	}
}

// String is "delivery · opening · decisions · closing" at p50, then at p99.
func (d divisao) String() string {
	todos := []string{}
	for i := range 2 {
		var ps []string
		for _, q := range [][2]time.Duration{d.Entrega, d.Abertura, d.Decisoes, d.Fechamento} {
			ps = append(ps, "≤ "+limite(q[i]))
		}
		todos = append(todos, strings.Join(ps, " · "))
	}
	return strings.Join(todos, " / ")
}

// lotes is d6a_lote_unidades over a pass: how many units of work each
// committed transaction of the executor carried.
type lotes struct {
	Transacoes, Unidades float64
	Desfeitos            float64 // d6a_lotes_desfeitos_total
	Faixas               []faixaLote
}

type faixaLote struct {
	Ate float64 // bucket upper bound (units); +Inf for the last
	N   float64 // transactions in this bucket only
}

func lerLotes(antes, depois metricas) lotes {
	h := depois.histograma("d6a_lote_unidades").menos(antes.histograma("d6a_lote_unidades"))
	l := lotes{
		Transacoes: depois["d6a_lote_unidades_count"] - antes["d6a_lote_unidades_count"],
		Unidades:   depois["d6a_lote_unidades_sum"] - antes["d6a_lote_unidades_sum"],
		Desfeitos:  depois["d6a_lotes_desfeitos_total"] - antes["d6a_lotes_desfeitos_total"],
	}
	ant := 0.0
	for _, le := range h.limites() {
		l.Faixas = append(l.Faixas, faixaLote{Ate: le, N: h[le] - ant})
		ant = h[le]
	}
	return l
}

// String is the histogram in one line: "1: 40%, 2: 10%, 3–4: …" of the
// transactions, then the mean.
func (l lotes) String() string {
	if l.Transacoes <= 0 {
		return "no transactions"
	}
	var p []string
	de := 1.0
	for _, f := range l.Faixas {
		if f.N > 0 {
			nome := fmt.Sprintf("%g–%g", de, f.Ate)
			switch {
			case math.IsInf(f.Ate, 1):
				nome = fmt.Sprintf("> %g", de-1)
			case de == f.Ate:
				nome = fmt.Sprintf("%g", f.Ate)
			}
			p = append(p, fmt.Sprintf("%s: %.0f%%", nome, 100*f.N/l.Transacoes))
		}
		de = f.Ate + 1
	}
	s := fmt.Sprintf("%.0f tx, mean %.1f units/tx (%s)", l.Transacoes, l.Unidades/l.Transacoes, strings.Join(p, ", "))
	if l.Desfeitos > 0 {
		s += fmt.Sprintf("; %.0f batches redone one unit per transaction", l.Desfeitos)
	}
	return s
}
