package metrics

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

type fonteFalsa struct {
	pendentes int64
	porStatus map[string]int64
	outbox    int64
	lag       map[string]uint64
	err       error
	chamadas  int // of Pendentes
	// chamadasPorStatus counts ConselheirosPorStatus, a GROUP BY over every
	// counsellor: both counsellor gauges must share one call per scrape.
	chamadasPorStatus int
}

func (f *fonteFalsa) Pendentes(context.Context) (int64, error) {
	f.chamadas++
	return f.pendentes, f.err
}

func (f *fonteFalsa) ConselheirosPorStatus(context.Context) (map[string]int64, error) {
	f.chamadasPorStatus++
	return f.porStatus, f.err
}

func (f *fonteFalsa) OutboxPendentes(context.Context) (int64, error) { return f.outbox, f.err }

func (f *fonteFalsa) ConsumerLag(context.Context) (map[string]uint64, error) { return f.lag, f.err }

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape status %d", rec.Code)
	}
	b, err := io.ReadAll(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func contem(t *testing.T, page string, linhas ...string) {
	t.Helper()
	for _, l := range linhas {
		if !strings.Contains(page, "\n"+l+"\n") {
			t.Errorf("page lacks line %q", l)
		}
	}
}

func TestGaugesReadAtScrape(t *testing.T) {
	f := &fonteFalsa{
		pendentes: 2,
		porStatus: map[string]int64{"disponivel": 3, "ocupado": 4, "suspenso": 1, "estranho": 7},
		outbox:    5,
		lag:       map[string]uint64{"agenda.item_disponível": 9},
	}
	m := New(f)
	m.SetValidadeGauges(0)
	page := scrape(t, m)
	contem(t, page,
		"d6a_fila_pendentes_size 2",
		"d6a_conselheiros_ativos 7",
		`d6a_conselheiros{status="disponivel"} 3`,
		`d6a_conselheiros{status="ocupado"} 4`,
		`d6a_conselheiros{status="suspenso"} 1`,
		`d6a_conselheiros{status="inativo"} 0`,
		`d6a_conselheiros{status="estranho"} 7`,
		"d6a_outbox_pendentes 5",
		`d6a_consumer_lag{tipo="agenda.item_disponível"} 9`,
	)

	// Values are read again at each scrape, not cached.
	f.pendentes = 11
	contem(t, scrape(t, m), "d6a_fila_pendentes_size 11")
	if f.chamadas != 2 {
		t.Fatalf("Pendentes called %d times, want 2", f.chamadas)
	}
	if f.chamadasPorStatus != 2 {
		t.Fatalf("ConselheirosPorStatus called %d times in 2 scrapes, want 2", f.chamadasPorStatus)
	}
}

func TestCountersOnPageFromStart(t *testing.T) {
	m := New(nil)
	page := scrape(t, m)
	contem(t, page,
		"d6a_sorteios_total 0",
		"d6a_outbox_publicados_total 0",
		`d6a_sem_candidatos_total{motivo="nenhum_cadastrado"} 0`,
		`d6a_sem_candidatos_total{motivo="todos_ocupados"} 0`,
		`d6a_sem_candidatos_total{motivo="todos_inativos"} 0`,
		`d6a_recusas_total{motivo="recusa_explicita"} 0`,
		`d6a_recusas_total{motivo="risco_pessoal"} 0`,
	)
	for _, absent := range []string{"d6a_fila_pendentes_size", "d6a_conselheiros_ativos", "d6a_consumer_lag"} {
		if strings.Contains(page, absent) {
			t.Errorf("nil Fonte still shows %s", absent)
		}
	}
	for _, runtime := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if !strings.Contains(page, runtime) {
			t.Errorf("runtime collector metric %s missing", runtime)
		}
	}
}

func TestCountersAndHistograms(t *testing.T) {
	m := New(nil)
	m.Sorteios.Inc()
	m.Sorteios.Inc()
	m.SemCandidatos.WithLabelValues("todos_ocupados").Inc()
	m.Recusas.WithLabelValues("risco_pessoal").Add(3)
	m.DeadLetters.WithLabelValues("duplicidade.agregada").Inc()
	m.OutboxPublicados.Inc()
	m.HandlerDuracao.WithLabelValues("conselheiro.cadastrado", ResultadoOK).Observe(0.003)
	m.SorteioDuracao.Observe(0.01)
	m.HTTPDuracao.WithLabelValues("/healthz", "200").Observe(0.0001)
	page := scrape(t, m)
	contem(t, page,
		"d6a_sorteios_total 2",
		`d6a_sem_candidatos_total{motivo="todos_ocupados"} 1`,
		`d6a_recusas_total{motivo="risco_pessoal"} 3`,
		`d6a_dead_letters_total{tipo="duplicidade.agregada"} 1`,
		"d6a_outbox_publicados_total 1",
		`d6a_handler_duracao_segundos_count{resultado="ok",tipo="conselheiro.cadastrado"} 1`,
		"d6a_sorteio_duracao_segundos_count 1",
		`d6a_http_duracao_segundos_count{codigo="200",rota="/healthz"} 1`,
	)
}

func TestPrepararCriaSeriesEmZero(t *testing.T) {
	m := New(nil)
	m.Preparar("agenda.item_disponível", "duplicidade.agregada")
	contem(t, scrape(t, m),
		`d6a_handler_duracao_segundos_count{resultado="ok",tipo="agenda.item_disponível"} 0`,
		`d6a_handler_duracao_segundos_count{resultado="dlq",tipo="duplicidade.agregada"} 0`,
		`d6a_handler_duracao_segundos_count{resultado="ignorado",tipo="duplicidade.agregada"} 0`,
		`d6a_dead_letters_total{tipo="agenda.item_disponível"} 0`,
	)
}

// A failing source drops its gauges; the rest of the page still serves.
func TestGaugeErrorDoesNotBreakPage(t *testing.T) {
	m := New(&fonteFalsa{err: errors.New("database down")})
	m.Sorteios.Inc()
	page := scrape(t, m)
	contem(t, page, "d6a_sorteios_total 1")
	for _, absent := range []string{"d6a_fila_pendentes_size", "d6a_conselheiros_ativos", "d6a_outbox_pendentes ", "d6a_consumer_lag{"} {
		if strings.Contains(page, absent) {
			t.Errorf("failed gauge %s still on page", absent)
		}
	}
}

// Two registries must not collide: tests build one Metrics per app.
func TestIndependentRegistries(t *testing.T) {
	a, b := New(nil), New(nil)
	a.Sorteios.Inc()
	contem(t, scrape(t, b), "d6a_sorteios_total 0")
}

// Within ValidadeGauges a scrape serves the gauges read before: 64
// concurrent scrapes cost one call of each source method (issue 50 item 4).
func TestGaugesEmCache(t *testing.T) {
	f := &fonteFalsa{pendentes: 2, porStatus: map[string]int64{"disponivel": 1}}
	m := New(f)
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := httptest.NewRecorder()
			m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
			if !strings.Contains(rec.Body.String(), "\nd6a_fila_pendentes_size 2\n") {
				t.Error("scrape without d6a_fila_pendentes_size 2")
			}
		}()
	}
	wg.Wait()
	if f.chamadas != 1 || f.chamadasPorStatus != 1 {
		t.Fatalf("64 scrapes called Pendentes %d and ConselheirosPorStatus %d times, want 1 each", f.chamadas, f.chamadasPorStatus)
	}
	f.pendentes = 11
	contem(t, scrape(t, m), "d6a_fila_pendentes_size 2")
	m.SetValidadeGauges(0)
	contem(t, scrape(t, m), "d6a_fila_pendentes_size 11")
}
