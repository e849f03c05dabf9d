package metrics

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Testemunhas is what the log's witnesses report to /metrics (CONTRACT §7
// "Witnesses"): the age of each witness's latest cosignature, computed at
// scrape time so a stalled submitter still shows it ageing, and refusals
// by HTTP status (0: no answer).
type Testemunhas struct {
	mu       sync.Mutex
	ultima   map[string]time.Time
	now      func() time.Time
	idade    *prometheus.Desc
	recusas  *prometheus.CounterVec
	cossinou *prometheus.CounterVec
}

// Testemunhas returns the witnesses' metrics, registered on first use.
func (m *Metrics) Testemunhas() *Testemunhas {
	m.testemunhasUma.Do(func() {
		m.testemunhas = &Testemunhas{
			ultima: map[string]time.Time{}, now: time.Now,
			idade: prometheus.NewDesc("d6a_testemunha_cossinatura_idade_segundos",
				"Age of each witness's latest cosignature of the transparency log (alert when it grows while the log grows).",
				[]string{"testemunha"}, nil),
			recusas: prometheus.NewCounterVec(prometheus.CounterOpts{
				Name: "d6a_testemunha_recusas_total",
				Help: "add-checkpoint requests a witness refused or did not answer, by HTTP status (0: no answer).",
			}, []string{"testemunha", "status"}),
			cossinou: prometheus.NewCounterVec(prometheus.CounterOpts{
				Name: "d6a_testemunha_cossinaturas_total",
				Help: "Cosignatures received from each witness.",
			}, []string{"testemunha"}),
		}
		m.reg.MustRegister(m.testemunhas, m.testemunhas.recusas, m.testemunhas.cossinou)
	})
	return m.testemunhas
}

// Acompanhar starts a witness's age at desde (its latest cosignature, or
// the start when it never cosigned).
func (t *Testemunhas) Acompanhar(nome string, desde time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if desde.After(t.ultima[nome]) {
		t.ultima[nome] = desde
	}
}

// Cossinou records a cosignature made at em.
func (t *Testemunhas) Cossinou(nome string, em time.Time) {
	t.mu.Lock()
	if em.After(t.ultima[nome]) {
		t.ultima[nome] = em
	}
	t.mu.Unlock()
	t.cossinou.WithLabelValues(nome).Inc()
}

// Recusou records a refusal (status 0: no answer).
func (t *Testemunhas) Recusou(nome string, status int) {
	t.recusas.WithLabelValues(nome, strconv.Itoa(status)).Inc()
}

// Describe implements prometheus.Collector.
func (t *Testemunhas) Describe(ch chan<- *prometheus.Desc) { ch <- t.idade }

// Collect implements prometheus.Collector.
func (t *Testemunhas) Collect(ch chan<- prometheus.Metric) {
	t.mu.Lock()
	defer t.mu.Unlock()
	agora := t.now()
	for nome, em := range t.ultima {
		ch <- prometheus.MustNewConstMetric(t.idade, prometheus.GaugeValue, agora.Sub(em).Seconds(), nome)
	}
}

// EstatisticaPValor is the fairness test's p-value (CONTRACT §7 "Fairness
// statistics"), registered on first use; the alert fires below 0.001.
func (m *Metrics) EstatisticaPValor() prometheus.Gauge {
	m.pValorUma.Do(func() {
		m.pValor = prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "d6a_estatistica_p_valor",
			Help: "p-value of the public fairness test over the signed draws (GET /d6a/transparencia/estatisticas); low means counsellors won unlike a fair lottery.",
		})
		m.reg.MustRegister(m.pValor)
	})
	return m.pValor
}
