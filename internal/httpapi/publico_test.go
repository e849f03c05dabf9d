package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/metrics"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/store"
)

// contaConsultas counts a pool's queries and the most in flight at once.
type contaConsultas struct {
	mu                   sync.Mutex
	total, agora, maximo int
}

func (c *contaConsultas) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total++
	c.agora++
	c.maximo = max(c.maximo, c.agora)
	return ctx
}

func (c *contaConsultas) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.agora--
}

func (c *contaConsultas) ler() (total, maximo int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total, c.maximo
}

// poolContado opens a pool of n connections on st's database whose
// queries c counts.
func poolContado(t *testing.T, st *store.Store, n int32, c *contaConsultas) *store.Store {
	t.Helper()
	cfg := st.Pool.Config()
	cfg.MaxConns = n
	cfg.ConnConfig.Tracer = c
	s, err := store.OpenConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Issue 50 item 4: 64 clients flooding /metrics and /estatisticas (and a
// route that reads on every request) cost a bounded number of queries, all
// on the public pool, never more at once than its share, while the
// executor's pool stays free: an acquire on it succeeds at once.
func TestLeiturasPublicasNaoTomamOExecutor(t *testing.T) {
	t.Parallel()
	base := pgtest.New(t)
	var noExecutor, noPublico contaConsultas
	executor := poolContado(t, base, 4, &noExecutor)
	publico := poolContado(t, base, ConexoesPublicas, &noPublico)
	m := metrics.New(metrics.StoreFonte(publico, nil))
	m.RegistrarOperacao(metrics.StoreFonteOperacao(publico, func() time.Time { return agora }), nil)
	// The gauges' validity outlasts the flood however slow the machine:
	// the count below is then the caching's, not the clock's.
	m.SetValidadeGauges(time.Hour)
	app, err := New(Options{Config: config.Config{JWTSecret: segredo, ValidadeMetricas: time.Hour}, Store: executor, Publico: publico, Metrics: m,
		Ready: func(context.Context) error { return nil }, Now: func() time.Time { return agora }})
	if err != nil {
		t.Fatal(err)
	}
	pedir := func(rota string) int {
		res, err := app.Test(httptest.NewRequest(http.MethodGet, rota, nil), 10_000)
		if err != nil {
			t.Error(err)
			return 0
		}
		res.Body.Close()
		return res.StatusCode
	}

	// The executor acquires while the flood runs.
	fim := make(chan struct{})
	esperas := make(chan time.Duration, 1000)
	go func() {
		defer close(esperas)
		for {
			select {
			case <-fim:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			inicio := time.Now()
			c, err := executor.Pool.Acquire(ctx)
			cancel()
			if err != nil {
				t.Errorf("executor acquire during the flood: %v", err)
				return
			}
			esperas <- time.Since(inicio)
			c.Release()
			time.Sleep(5 * time.Millisecond)
		}
	}()

	inicioFlood := time.Now()
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 4 {
				if s := pedir(RotaMetrics); s != 200 {
					t.Errorf("/metrics: %d", s)
				}
				if s := pedir(RotaTransparencia + "/estatisticas"); s != 200 {
					t.Errorf("/estatisticas: %d", s)
				}
			}
		}()
	}
	wg.Wait()
	total, maximo := noPublico.ler()
	// One round of gauges (at most 8 statements) and one statistics read
	// (a few statements) per TTL the flood lasted, however slow the machine.
	ttls := 1 + int(time.Since(inicioFlood)/EstatisticasTTL)
	if limite := 8 + 4*ttls; total > limite {
		t.Errorf("512 requests ran %d queries on the public pool over %d statistics TTLs, want ≤ %d", total, ttls, limite)
	}

	// A route that reads on every request: some wait or are told to come
	// back (503, Retry-After), none runs beside more than the share.
	codigos := map[int]int{}
	var mu sync.Mutex
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 4 {
				s := pedir(RotaTransparencia + "/resumo")
				mu.Lock()
				codigos[s]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(fim)
	for s := range codigos {
		if s != 404 && s != 503 { // no checkpoint yet: 404
			t.Errorf("/resumo answered %d (%v)", s, codigos)
		}
	}
	if _, maximo = noPublico.ler(); maximo > ConexoesPublicas {
		t.Errorf("%d queries at once on the public pool, want ≤ %d", maximo, ConexoesPublicas)
	}
	if n, _ := noExecutor.ler(); n != 0 {
		t.Errorf("the public routes ran %d queries on the executor's pool", n)
	}
	var pior time.Duration
	n := 0
	for d := range esperas {
		pior = max(pior, d)
		n++
	}
	// Each acquire above had a second to succeed; how long they took is
	// the machine's load, not a property (timing belongs in benchmarks).
	if n == 0 {
		t.Errorf("the executor acquired nothing during the flood")
	}
	t.Logf("public pool: %d queries for 512 /metrics+/estatisticas, at most %d at once; /resumo %v; executor: %d acquires, slowest %v",
		total, maximo, codigos, n, pior)
}

// With every slot taken, a public read waits EsperaPublica and is then
// told to come back: 503 with Retry-After, never an unbounded queue.
func TestLeituraPublicaOcupadaResponde503(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, func(o *Options) { o.Config.ConexoesPublicas = 1 })
	ctx := context.Background()
	// A lock that holds the one slot's read until released.
	tx, err := s.st.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE d6a.transparencia_checkpoints IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	preso := make(chan int, 1)
	go func() {
		res, err := s.app.Test(httptest.NewRequest(http.MethodGet, RotaTransparencia+"/resumo", nil), 10_000)
		if err != nil {
			preso <- 0
			return
		}
		res.Body.Close()
		preso <- res.StatusCode
	}()
	time.Sleep(200 * time.Millisecond) // the first request holds the slot
	inicio := time.Now()
	res, err := s.app.Test(httptest.NewRequest(http.MethodGet, RotaTransparencia+"/resumo", nil), 10_000)
	d := time.Since(inicio)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 503 {
		t.Fatalf("status %d while the slot is held, want 503", res.StatusCode)
	}
	// Its shape and the document's (openapi.yaml), timed apart.
	r := s.get(t, RotaTransparencia+"/resumo")
	r.erro(t, 503)
	if r.header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
	}
	if d < EsperaPublica || d > EsperaPublica+time.Second {
		t.Errorf("503 after %v, want about %v", d, EsperaPublica)
	}
	// Routes that do not read the database are not held.
	if r := s.get(t, RotaTransparencia+"/testemunhas"); r.status != 200 {
		t.Errorf("/testemunhas while full: %d", r.status)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if c := <-preso; c != 404 {
		t.Errorf("the held request answered %d, want 404 (no checkpoint)", c)
	}
}
