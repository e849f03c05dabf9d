package metrics

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ValidadeGauges is how long the gauges read from the database are served
// again before they are read anew, unless SetValidadeGauges says otherwise
// (D6A_METRICAS_VALIDADE): a scrape runs about eight aggregate queries, and
// /metrics is as public as the listener it shares (issue 50 item 4).
const ValidadeGauges = 5 * time.Second

// SetValidadeGauges sets how long the database gauges are kept; 0 reads
// them at every scrape.
func (m *Metrics) SetValidadeGauges(d time.Duration) { m.validade.Store(int64(d)) }

// emCache serves a collector's metrics again for the validity of its
// Metrics. Scrapes that find them stale wait for the one collection in
// flight rather than each running their own: a flood of scrapes costs one
// round of queries per validity. The metrics are constant (MustNewConst…),
// so sending them again is safe.
type emCache struct {
	c        prometheus.Collector
	validade *atomic.Int64

	mu    sync.Mutex
	ms    []prometheus.Metric
	em    time.Time
	feita bool
}

func (e *emCache) Describe(ch chan<- *prometheus.Desc) { e.c.Describe(ch) }

func (e *emCache) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.feita || time.Since(e.em) >= time.Duration(e.validade.Load()) {
		buf := make(chan prometheus.Metric, 16)
		go func() {
			e.c.Collect(buf)
			close(buf)
		}()
		e.ms = e.ms[:0]
		for m := range buf {
			e.ms = append(e.ms, m)
		}
		e.em, e.feita = time.Now(), true
	}
	for _, m := range e.ms {
		ch <- m
	}
}
