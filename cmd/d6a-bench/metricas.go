package main

import (
	"bufio"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// histograma is d6a serve's own d6a_handler_duracao_segundos for
// agenda.item_disponível handled ok: the time of one unit of work (the
// transaction, its commit and the seed's bus lookup), without the bus
// delivery, the ack or the relay. The gap between it and the end-to-end
// latency is what the bus and the outbox relay add.
type histograma map[float64]float64 // upper bound (s) → cumulative count

func lerHistograma(httpAddr string) histograma {
	cli := &http.Client{Timeout: 5 * time.Second}
	r, err := cli.Get("http://" + httpAddr + "/metrics")
	if err != nil {
		return nil
	}
	defer r.Body.Close()
	h := histograma{}
	s := bufio.NewScanner(r.Body)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		l := s.Text()
		if !strings.HasPrefix(l, "d6a_handler_duracao_segundos_bucket{") || !strings.Contains(l, "agenda") || !strings.Contains(l, `"ok"`) {
			continue
		}
		i := strings.Index(l, `le="`)
		j := strings.LastIndexByte(l, ' ')
		if i < 0 || j < 0 {
			continue
		}
		leTxt := l[i+4:]
		leTxt = leTxt[:strings.IndexByte(leTxt, '"')]
		le := math.Inf(1)
		if leTxt != "+Inf" {
			le, _ = strconv.ParseFloat(leTxt, 64)
		}
		n, _ := strconv.ParseFloat(l[j+1:], 64)
		h[le] += n
	}
	return h
}

// quantis returns the p50 and p99 of after−before as the upper bounds of
// their buckets (the histogram's resolution: 0.5 ms doubling).
func quantis(antes, depois histograma) (p50, p99 time.Duration, n int) {
	if depois == nil {
		return 0, 0, 0
	}
	var les []float64
	for le := range depois {
		les = append(les, le)
	}
	sort.Float64s(les)
	total := depois[math.Inf(1)] - antes[math.Inf(1)]
	if total <= 0 {
		return 0, 0, 0
	}
	q := func(p float64) time.Duration {
		for _, le := range les {
			if depois[le]-antes[le] >= p*total {
				if math.IsInf(le, 1) {
					return -1
				}
				return time.Duration(le * float64(time.Second))
			}
		}
		return -1
	}
	return q(0.5), q(0.99), int(total)
}
