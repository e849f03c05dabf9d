// Package metrics owns d6a's Prometheus registry (CONTRACT §6, GET /metrics):
// the counters and histograms the worker updates as it goes, and the gauges
// read from the database and the bus at scrape time.
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/formigueiro/d6a/internal/store"
)

// Label values known in advance. Their series are created at zero so that
// every counter of CONTRACT §6 is on the page from the first scrape and
// rate() sees the first increment.
var (
	// MotivosSemCandidatos are the reasons of spec 3.8.
	MotivosSemCandidatos = []string{"nenhum_cadastrado", "todos_ocupados", "todos_inativos"}
	// MotivosRecusa are the refusal reasons of spec 3.4.
	MotivosRecusa = []string{"recusa_explicita", "risco_pessoal", "timeout_resposta", "fora_do_territorio"}
	// StatusConselheiro are the counsellor states of spec 2.2.
	StatusConselheiro = []string{"disponivel", "ocupado", "suspenso", "inativo"}
)

// Outcomes of an event handler, the resultado label of HandlerDuracao.
const (
	ResultadoOK       = "ok"
	ResultadoErro     = "erro"
	ResultadoDLQ      = "dlq"
	ResultadoIgnorado = "ignorado"
)

// ScrapeTimeout bounds the queries a scrape makes, so a slow database delays
// the page by at most this long instead of hanging the scraper.
const ScrapeTimeout = 2 * time.Second

// Fonte is where the scrape-time gauges come from. Each method is called once
// per scrape; an error drops that gauge from the page, not the page.
type Fonte interface {
	// Pendentes counts the rows of d6a.fila_pendentes.
	Pendentes(ctx context.Context) (int64, error)
	// ConselheirosPorStatus counts counsellors by their status column.
	ConselheirosPorStatus(ctx context.Context) (map[string]int64, error)
	// OutboxPendentes counts outbox rows not yet published.
	OutboxPendentes(ctx context.Context) (int64, error)
	// ConsumerLag gives, per consumed event type, the messages the durable
	// consumer has yet to deliver.
	ConsumerLag(ctx context.Context) (map[string]uint64, error)
}

// Metrics is the registry and every metric d6a updates directly. The fields
// are safe for concurrent use.
type Metrics struct {
	// Sorteios counts successful draws (d6a_sorteios_total).
	Sorteios prometheus.Counter
	// SemCandidatos counts draws that found nobody, by motivo
	// (d6a_sem_candidatos_total).
	SemCandidatos *prometheus.CounterVec
	// Recusas counts processed refusals, by motivo (d6a_recusas_total).
	Recusas *prometheus.CounterVec
	// HandlerDuracao times event handlers, by tipo and resultado
	// (ok|erro|dlq|ignorado) (d6a_handler_duracao_segundos).
	HandlerDuracao *prometheus.HistogramVec
	// SorteioDuracao times one draw, eligibility to commit
	// (d6a_sorteio_duracao_segundos).
	SorteioDuracao prometheus.Histogram
	// DeadLetters counts messages copied to the dead-letter stream, by tipo
	// (d6a_dead_letters_total).
	DeadLetters *prometheus.CounterVec
	// OutboxPublicados counts outbox rows the relay published
	// (d6a_outbox_publicados_total).
	OutboxPublicados prometheus.Counter
	// HTTPDuracao times HTTP requests by route pattern and status code
	// (d6a_http_duracao_segundos). The route is the registered pattern, never
	// the raw path, so unknown paths cannot grow the label set.
	HTTPDuracao *prometheus.HistogramVec
	// SituacaoCache counts situacao reads answered from the cache (hit) or
	// the database (miss) (d6a_situacao_cache_total).
	SituacaoCache *prometheus.CounterVec
	// TokensCache counts session tokens found in the verified-token cache
	// (hit) or verified (miss) (d6a_tokens_cache_total); JWKSCache the kid
	// lookups of those verifications, in the cached key set (hit) or not
	// (miss: a rate-limited fetch from the provider, or a refusal)
	// (d6a_jwks_cache_total).
	TokensCache, JWKSCache *prometheus.CounterVec
	// Lote counts the units of work of each committed transaction of the
	// executor (d6a_lote_unidades); LotesDesfeitos the batches rolled back
	// and redone one unit per transaction (d6a_lotes_desfeitos_total).
	Lote           prometheus.Histogram
	LotesDesfeitos prometheus.Counter
	// Elegibilidade counts the eligibility decisions (spec 4.3) of the
	// executor, ElegibilidadeReleituras the further round trips they made
	// because a whole step read was ineligible (issue 37 item 5).
	Elegibilidade, ElegibilidadeReleituras prometheus.Counter
	// EntregaAtraso times a message from its storage in the stream to its
	// first delivery to d6a (d6a_entrega_atraso_segundos). With Transacao's
	// histogram and the handler's time it says whether a slow result waited
	// for the bus or the database.
	EntregaAtraso prometheus.Histogram
	// EntregasLidasDoStream counts the consumed messages read from the
	// stream because their deliveries went missing (bus.lacuna), so stream
	// order held without waiting for AckWait.
	EntregasLidasDoStream prometheus.Counter
	// transacaoFase is d6a_transacao_fase_segundos, and abertura, decisoes
	// and fechamento its three series, resolved once (Transacao runs on
	// every transaction of the executor).
	transacaoFase                  *prometheus.HistogramVec
	abertura, decisoes, fechamento prometheus.Observer

	// validade is how long the database gauges are kept (emCache).
	validade atomic.Int64

	// semEntrega reads, at each scrape, how long the durable has shown no
	// sign of life (d6a_entradas_sem_entrega_segundos); nil reads 0.
	semEntrega atomic.Pointer[func() time.Duration]
	// atrasoBeacon reads how late the beacon round decisions wait for is.
	atrasoBeacon atomic.Pointer[func() time.Duration]

	reg *prometheus.Registry

	testemunhas    *Testemunhas
	testemunhasUma sync.Once
	pValor         prometheus.Gauge
	pValorUma      sync.Once
}

// Transacao records the parts of one committed transaction of the draw
// executor (d6a_transacao_fase_segundos{fase}).
func (m *Metrics) Transacao(abertura, decisoes, fechamento time.Duration) {
	m.abertura.Observe(abertura.Seconds())
	m.decisoes.Observe(decisoes.Seconds())
	m.fechamento.Observe(fechamento.Seconds())
}

// New builds the registry with the Go runtime and process collectors, the
// metrics above, and the scrape-time gauges read from f. A nil f leaves the
// gauges out (tests, or a process without a database).
func New(f Fonte) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		Sorteios: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "d6a_sorteios_total",
			Help: "Successful draws (conselheiro.sorteado decided).",
		}),
		SemCandidatos: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "d6a_sem_candidatos_total",
			Help: "Draws that found no eligible counsellor, by motivo (spec 3.8).",
		}, []string{"motivo"}),
		Recusas: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "d6a_recusas_total",
			Help: "Refusals processed, by motivo (spec 3.4).",
		}, []string{"motivo"}),
		HandlerDuracao: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "d6a_handler_duracao_segundos",
			Help:    "Event handler latency in seconds, by event tipo and resultado (ok, erro, dlq, ignorado).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16), // 0.5 ms … ~16 s
		}, []string{"tipo", "resultado"}),
		SorteioDuracao: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "d6a_sorteio_duracao_segundos",
			Help:    "Latency of one draw in seconds, from eligibility query to commit.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}),
		DeadLetters: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "d6a_dead_letters_total",
			Help: "Messages copied to the dead-letter stream, by event tipo.",
		}, []string{"tipo"}),
		OutboxPublicados: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "d6a_outbox_publicados_total",
			Help: "Outbox rows published to the bus.",
		}),
		HTTPDuracao: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "d6a_http_duracao_segundos",
			Help:    "HTTP request latency in seconds, by route pattern and status code.",
			Buckets: prometheus.ExponentialBuckets(0.00025, 2, 15), // 0.25 ms … ~4 s
		}, []string{"rota", "codigo"}),
		SituacaoCache: contadorCache("d6a_situacao_cache_total", "Situacao reads by resultado: hit (answered from the cache) or miss (read from the database)."),
		TokensCache:   contadorCache("d6a_tokens_cache_total", "Session tokens by resultado: hit (found in the verified-token cache) or miss (signature verified)."),
		JWKSCache:     contadorCache("d6a_jwks_cache_total", "Kid lookups of token verifications by resultado: hit (in the cached JWKS) or miss (fetched from the provider, rate-limited, or refused)."),
		Lote: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "d6a_lote_unidades",
			Help:    "Units of work (events, boot steps) committed by one transaction of the draw executor.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512},
		}),
		LotesDesfeitos: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "d6a_lotes_desfeitos_total",
			Help: "Batches rolled back because one unit failed, then redone one unit per transaction.",
		}),
		Elegibilidade: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "d6a_elegibilidade_decisoes_total",
			Help: "Eligibility decisions of the executor (a draw or a sorteio.sem_candidatos, spec 4.3).",
		}),
		ElegibilidadeReleituras: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "d6a_elegibilidade_releituras_total",
			Help: "Further round trips of eligibility decisions: the step read held registered counsellors, none eligible, so the next step up was read.",
		}),
		EntregaAtraso: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "d6a_entrega_atraso_segundos",
			Help:    "Seconds from a consumed message's storage in the stream (its JetStream timestamp) to its first delivery to d6a; any clock difference between the NATS server and d6a is included.",
			Buckets: prometheus.ExponentialBuckets(0.00025, 2, 16), // 0.25 ms … ~8 s
		}),
		EntregasLidasDoStream: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "d6a_entregas_lidas_do_stream_total",
			Help: "Consumed messages read from the stream, in order, because their deliveries to this instance went missing (a pull request closed on the client, a leader change, or another instance sharing the durable).",
		}),
		transacaoFase: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "d6a_transacao_fase_segundos",
			Help:    "Seconds spent by each committed transaction of the draw executor, by fase: abertura (one round trip: BEGIN, the draw lock and the opening reads), decisoes (every unit's decisions and any further reads), fechamento (the writes and COMMIT with its WAL flush).",
			Buckets: prometheus.ExponentialBuckets(0.00025, 2, 16),
		}, []string{"fase"}),
	}
	m.abertura = m.transacaoFase.WithLabelValues("abertura")
	m.decisoes = m.transacaoFase.WithLabelValues("decisoes")
	m.fechamento = m.transacaoFase.WithLabelValues("fechamento")
	for _, motivo := range MotivosSemCandidatos {
		m.SemCandidatos.WithLabelValues(motivo)
	}
	for _, motivo := range MotivosRecusa {
		m.Recusas.WithLabelValues(motivo)
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.Sorteios, m.SemCandidatos, m.Recusas, m.HandlerDuracao,
		m.SorteioDuracao, m.DeadLetters, m.OutboxPublicados, m.HTTPDuracao, m.SituacaoCache,
		m.TokensCache, m.JWKSCache,
		m.Lote, m.LotesDesfeitos, m.Elegibilidade, m.ElegibilidadeReleituras, m.EntregaAtraso, m.EntregasLidasDoStream, m.transacaoFase,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "d6a_entradas_sem_entrega_segundos",
			Help: "Seconds since the durable d6a-entradas last delivered to this instance or ended a pull request itself, while the instance was asking; under the fetch wait when healthy, growing during a stall (docs/operacao.md).",
		}, func() float64 {
			if f := m.semEntrega.Load(); f != nil {
				return (*f)().Seconds()
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "d6a_beacon_atraso_segundos",
			Help: "Seconds past its publish time that the beacon round decisions wait for has not come from any source, verified (CONTRACT §4a); 0 while rounds come on time. Messages wait on the durable meanwhile.",
		}, func() float64 {
			if f := m.atrasoBeacon.Load(); f != nil {
				return (*f)().Seconds()
			}
			return 0
		}),
	)
	m.validade.Store(int64(ValidadeGauges))
	if f != nil {
		m.reg.MustRegister(m.emCache(newGauges(f)))
	}
	return m
}

// emCache wraps a collector of database gauges (ValidadeGauges).
func (m *Metrics) emCache(c prometheus.Collector) prometheus.Collector {
	return &emCache{c: c, validade: &m.validade}
}

// contadorCache is a cache's hits and misses, both series created at zero.
func contadorCache(nome, help string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: nome, Help: help}, []string{"resultado"})
	c.WithLabelValues("hit")
	c.WithLabelValues("miss")
	return c
}

// Preparar creates, at zero, the series of HandlerDuracao (every resultado)
// and DeadLetters for each consumed event type, so the handler latency
// histogram of CONTRACT §6 is on the page before the first event. The wiring
// calls it with the consumed types, written as in the spec (with
// diacritics), the same form every tipo label uses.
func (m *Metrics) Preparar(tipos ...string) {
	for _, tipo := range tipos {
		for _, r := range []string{ResultadoOK, ResultadoErro, ResultadoDLQ, ResultadoIgnorado} {
			m.HandlerDuracao.WithLabelValues(tipo, r)
		}
		m.DeadLetters.WithLabelValues(tipo)
	}
}

// AcompanharEntregas sets what d6a_entradas_sem_entrega_segundos reads
// (bus.Bus.SemEntrega).
func (m *Metrics) AcompanharEntregas(f func() time.Duration) { m.semEntrega.Store(&f) }

// AcompanharBeacon makes d6a_beacon_atraso_segundos read f at each scrape.
func (m *Metrics) AcompanharBeacon(f func() time.Duration) { m.atrasoBeacon.Store(&f) }

// Registry returns the registry, for tests and for extra collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		// A collector error is already handled inside the gauges collector;
		// anything else still yields the metrics that were gathered.
		ErrorHandling:     promhttp.ContinueOnError,
		Registry:          m.reg,
		EnableOpenMetrics: false,
	})
}

// gauges reads the Fonte at each scrape. Reading at scrape time instead of
// updating gauges from the worker keeps them true after a restart, a replay
// or a manual fix in the database.
type gauges struct {
	f Fonte

	pendentes    *prometheus.Desc
	ativos       *prometheus.Desc
	porStatus    *prometheus.Desc
	outbox       *prometheus.Desc
	consumerLags *prometheus.Desc
}

func newGauges(f Fonte) *gauges {
	return &gauges{
		f: f,
		pendentes: prometheus.NewDesc("d6a_fila_pendentes_size",
			"Demands waiting in d6a.fila_pendentes (spec 4.7).", nil, nil),
		ativos: prometheus.NewDesc("d6a_conselheiros_ativos",
			"Counsellors with status disponivel or ocupado.", nil, nil),
		porStatus: prometheus.NewDesc("d6a_conselheiros",
			"Counsellors by status column.", []string{"status"}, nil),
		outbox: prometheus.NewDesc("d6a_outbox_pendentes",
			"Outbox rows not yet published to the bus.", nil, nil),
		consumerLags: prometheus.NewDesc("d6a_consumer_lag",
			"Messages the durable consumer has yet to deliver (tipo=\"entradas\": d6a-entradas carries every consumed type).", []string{"tipo"}, nil),
	}
}

func (g *gauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- g.pendentes
	ch <- g.ativos
	ch <- g.porStatus
	ch <- g.outbox
	ch <- g.consumerLags
}

func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), ScrapeTimeout)
	defer cancel()

	if n, err := g.f.Pendentes(ctx); err != nil {
		skip("d6a_fila_pendentes_size", err)
	} else {
		ch <- prometheus.MustNewConstMetric(g.pendentes, prometheus.GaugeValue, float64(n))
	}

	// One call feeds both counsellor gauges: it groups every counsellor,
	// the costliest query of the scrape.
	if por, err := g.f.ConselheirosPorStatus(ctx); err != nil {
		skip("d6a_conselheiros", err)
	} else {
		ch <- prometheus.MustNewConstMetric(g.ativos, prometheus.GaugeValue, float64(por["disponivel"]+por["ocupado"]))
		for _, s := range StatusConselheiro {
			ch <- prometheus.MustNewConstMetric(g.porStatus, prometheus.GaugeValue, float64(por[s]), s)
		}
		// A status outside the spec's four still shows, so bad data is visible.
		for s, n := range por {
			if !known(s) {
				ch <- prometheus.MustNewConstMetric(g.porStatus, prometheus.GaugeValue, float64(n), s)
			}
		}
	}

	if n, err := g.f.OutboxPendentes(ctx); err != nil {
		skip("d6a_outbox_pendentes", err)
	} else {
		ch <- prometheus.MustNewConstMetric(g.outbox, prometheus.GaugeValue, float64(n))
	}

	if lags, err := g.f.ConsumerLag(ctx); err != nil {
		skip("d6a_consumer_lag", err)
	} else {
		for tipo, n := range lags {
			ch <- prometheus.MustNewConstMetric(g.consumerLags, prometheus.GaugeValue, float64(n), tipo)
		}
	}
}

func known(status string) bool {
	for _, s := range StatusConselheiro {
		if s == status {
			return true
		}
	}
	return false
}

// skip logs at debug: an unreachable database already shows on /readyz and
// in the worker's logs, and a scrape every few seconds must not flood them.
func skip(gauge string, err error) {
	slog.Debug("métricas: gauge omitido", "gauge", gauge, "err", err)
}

// Leitura is what the gauges read of the database, through store's domain
// methods (store.Tx over the pool, from Store.Read).
type Leitura interface {
	TotalPendentes(ctx context.Context) (int64, error)
	TotalConselheirosPorStatus(ctx context.Context) (map[string]int64, error)
	TotalOutboxPendentes(ctx context.Context) (int64, error)
	// FilaPorIdade is the pending queue by age at agora.
	FilaPorIdade(ctx context.Context, agora time.Time) (store.FilaPorIdade, error)
	TotalAtivasSemInicio(ctx context.Context, antesDe time.Time) (int64, error)
	TotalAcoesPorTipo(ctx context.Context) (map[string]int64, error)
	// VersaoVigente is the version of d6a.config in force; none before
	// the boot seeds version 1.
	VersaoVigente(ctx context.Context) (store.VersaoParametros, bool, error)
}

// StoreFonte reads the gauges from the database; lag, when not nil, reads
// the consumer lag from the bus (nil leaves d6a_consumer_lag out).
func StoreFonte(st *store.Store, lag func(ctx context.Context) (map[string]uint64, error)) Fonte {
	return storeFonte{db: st.Read(), lag: lag}
}

type storeFonte struct {
	db  Leitura
	lag func(ctx context.Context) (map[string]uint64, error)
}

func (s storeFonte) Pendentes(ctx context.Context) (int64, error) {
	return s.db.TotalPendentes(ctx)
}

func (s storeFonte) ConselheirosPorStatus(ctx context.Context) (map[string]int64, error) {
	return s.db.TotalConselheirosPorStatus(ctx)
}

func (s storeFonte) OutboxPendentes(ctx context.Context) (int64, error) {
	return s.db.TotalOutboxPendentes(ctx)
}

func (s storeFonte) ConsumerLag(ctx context.Context) (map[string]uint64, error) {
	if s.lag == nil {
		return nil, nil
	}
	return s.lag(ctx)
}
