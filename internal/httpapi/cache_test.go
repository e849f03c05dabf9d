package httpapi

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/store"
)

// servidorComCache is a test app whose cache listens on its database, with
// hit and miss counters.
type servidorComCache struct {
	servidor
	cache       *Cache
	hit, miss   atomic.Int64
	pararEscuta context.CancelFunc
}

func novoServidorComCache(t *testing.T) *servidorComCache {
	t.Helper()
	s := &servidorComCache{cache: NovoCache(100)}
	s.cache.OnHit = func() { s.hit.Add(1) }
	s.cache.OnMiss = func() { s.miss.Add(1) }
	s.servidor = novoServidor(t, func(o *Options) { o.Cache = s.cache })
	ctx, cancel := context.WithCancel(context.Background())
	s.pararEscuta = cancel
	done := make(chan struct{})
	go func() { defer close(done); s.cache.Escutar(ctx, s.st.Pool) }()
	t.Cleanup(func() { cancel(); <-done })
	s.esperarAtivo(t, true)
	return s
}

func (s *servidorComCache) esperarAtivo(t *testing.T, ativo bool) {
	t.Helper()
	ate(t, "cache ativo = "+map[bool]string{true: "true", false: "false"}[ativo], func() bool {
		s.cache.mu.Lock()
		defer s.cache.mu.Unlock()
		return s.cache.ativo == ativo
	})
}

// ate polls cond for up to 10 s: a notification travels asynchronously.
func ate(t *testing.T, oque string, cond func() bool) {
	t.Helper()
	for fim := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(fim) {
			t.Fatalf("timed out waiting for %s", oque)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// esperarHit asks until an answer comes from the cache: a read that raced
// a notification is rightly not kept, so the first reads after a change
// may all be misses.
func (s *servidorComCache) esperarHit(t *testing.T, cidadao uuid.UUID) map[string]any {
	t.Helper()
	var got map[string]any
	ate(t, "an answer from the cache", func() bool {
		h := s.hit.Load()
		got = s.situacao(t, tokenHS(t, cidadao)).json(t)
		return s.hit.Load() > h
	})
	return got
}

// situacaoAte asks until the answer satisfies cond.
func (s *servidorComCache) situacaoAte(t *testing.T, cidadao uuid.UUID, oque string, cond func(map[string]any) bool) map[string]any {
	t.Helper()
	var got map[string]any
	ate(t, oque, func() bool {
		r := s.situacao(t, tokenHS(t, cidadao))
		if r.status != 200 {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		got = r.json(t)
		return cond(got)
	})
	return got
}

// The second read of an unchanged situation costs no database read; every
// write to the counsellor or to the assignment, by anyone, is seen. The
// test clock stands still, so the TTL never expires an entry here: only
// the notifications can make the new answers appear.
func TestCacheSituacaoSegueOBanco(t *testing.T) {
	t.Parallel()
	s := novoServidorComCache(t)
	ctx := context.Background()
	cidadao, uc := uuid.New(), uuid.New()

	for i := range 3 {
		if r := s.situacao(t, tokenHS(t, cidadao)); string(r.body) != `{"cadastrado":false}` {
			t.Fatalf("read %d: %s", i, r.body)
		}
	}
	if s.miss.Load() != 1 || s.hit.Load() != 2 {
		t.Fatalf("hits %d misses %d, want 2 and 1: the answer was not cached", s.hit.Load(), s.miss.Load())
	}

	// A registration (INSERT into conselheiros).
	cadastrar(t, s.st, cidadao, uc)
	s.situacaoAte(t, cidadao, "the registration", func(m map[string]any) bool { return m["status"] == "disponivel" })

	// A draw: the assignment and the counsellor in one transaction.
	demanda := uuid.New()
	atribuir(t, s.st, cidadao, uc, demanda, uuid.New(), strings.Repeat("ab", 32), agora)
	got := s.situacaoAte(t, cidadao, "the draw", func(m map[string]any) bool { return m["atribuicao_ativa"] != nil })
	if got["status"] != "ocupado" || got["atribuicao_ativa"].(map[string]any)["demanda_id"] != demanda.String() {
		t.Fatalf("after the draw: %v", got)
	}

	// A write to atribuicoes alone (its own trigger, the counsellor row
	// untouched) ends the assignment.
	if _, err := s.st.Pool.Exec(ctx, `UPDATE d6a.atribuicoes SET status = 'concluida' WHERE demanda_id = $1`, demanda); err != nil {
		t.Fatal(err)
	}
	s.situacaoAte(t, cidadao, "the assignment's end", func(m map[string]any) bool { return m["atribuicao_ativa"] == nil })

	// Once settled, answers come from the cache again.
	s.esperarHit(t, cidadao)

	// TRUNCATE notifies '*'.
	if _, err := s.st.Pool.Exec(ctx, `TRUNCATE d6a.atribuicoes, d6a.conselheiros`); err != nil {
		t.Fatal(err)
	}
	s.situacaoAte(t, cidadao, "the truncate", func(m map[string]any) bool { return m["cadastrado"] == false })
}

// A suspension ends by the clock: the cached row's status is derived on
// every request (spec 4.6), never cached as "suspenso".
func TestCacheSuspensaoVenceSemEscrita(t *testing.T) {
	t.Parallel()
	// No listener: the writes below happen before the first read, and a
	// late notification must not empty the cache between the two reads.
	st := pgtest.New(t)
	c := NovoCache(10)
	var hit, miss int
	c.OnHit, c.OnMiss = func() { hit++ }, func() { miss++ }
	c.definirAtivo(true) // as Escutar does once it listens
	cidadao := uuid.New()
	cadastrar(t, st, cidadao, uuid.New())
	suspender(t, st, cidadao, agora.Add(time.Second))
	ctx := context.Background()

	got, err := lerSituacao(ctx, st.Read(), c, cidadao, agora, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := got.(*Situacao).Status; s != "suspenso" || miss != 1 {
		t.Fatalf("first read: status %q, misses %d; want suspenso from the database", s, miss)
	}
	got, err = lerSituacao(ctx, st.Read(), c, cidadao, agora.Add(2*time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := got.(*Situacao).Status; s != "disponivel" || hit != 1 {
		t.Fatalf("after the suspension's date: status %q, hits %d; want disponivel from the cache", s, hit)
	}
}

// When the LISTEN connection dies, the cache stops answering (nothing it
// holds can be trusted: changes made meanwhile are not notified) until a
// new connection listens; what was cached before is gone.
func TestCacheSemEscutaLeDoBanco(t *testing.T) {
	t.Parallel()
	s := novoServidorComCache(t)
	ctx := context.Background()
	cidadao := uuid.New()
	cadastrar(t, s.st, cidadao, uuid.New())
	s.situacaoAte(t, cidadao, "the registration", func(m map[string]any) bool { return m["status"] == "disponivel" })

	// Kill the listener's backend, then change the row at once.
	var n int
	err := s.st.Pool.QueryRow(ctx, `
		SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN '||$1::text`, CanalSituacao).Scan(&n)
	if err != nil || n != 1 {
		t.Fatalf("terminated %d listeners (err %v), want 1", n, err)
	}
	suspender(t, s.st, cidadao, agora.Add(time.Hour))
	s.situacaoAte(t, cidadao, "the suspension made while nobody listened", func(m map[string]any) bool { return m["status"] == "suspenso" })

	// It listens again, and caches again.
	s.esperarAtivo(t, true)
	if got := s.esperarHit(t, cidadao); got["status"] != "suspenso" {
		t.Fatalf("after reconnecting: %v", got["status"])
	}

	// Stopped, it answers nothing.
	s.pararEscuta()
	s.esperarAtivo(t, false)
	if _, _, ok := s.cache.ler(cidadao, agora); ok {
		t.Fatal("a stopped cache answered")
	}
}

// A row read before an invalidation is not kept: it may predate the commit
// that was notified.
func TestCacheNaoGuardaLeituraAnteriorAUmaInvalidacao(t *testing.T) {
	c := NovoCache(10)
	c.definirAtivo(true)
	a, b := uuid.New(), uuid.New()

	g := c.inicio()
	c.notificacao(b.String()) // a notification arrives while a is being read
	c.guardar(a, g, store.SituacaoConselheiro{}, true, agora)
	if _, _, ok := c.ler(a, agora); ok {
		t.Fatal("kept a row read before an invalidation")
	}

	g = c.inicio()
	c.guardar(a, g, store.SituacaoConselheiro{}, true, agora)
	if _, cad, ok := c.ler(a, agora); !ok || !cad {
		t.Fatalf("ler = %v, %v after guardar; want the row", cad, ok)
	}
	if _, _, ok := c.ler(a, agora.Add(CacheTTL)); ok {
		t.Fatal("answered past the TTL")
	}
	c.notificacao("*")
	if _, _, ok := c.ler(a, agora); ok {
		t.Fatal("'*' did not empty the cache")
	}
}

func TestCacheLimitado(t *testing.T) {
	c := NovoCache(3)
	c.definirAtivo(true)
	for range 10 {
		c.guardar(uuid.New(), c.inicio(), store.SituacaoConselheiro{}, false, agora)
	}
	if n := len(c.m); n != 3 {
		t.Fatalf("%d entries, want at most 3", n)
	}
	if NovoCache(0) != nil {
		t.Fatal("NovoCache(0) must turn the cache off")
	}
	// A nil cache is a valid "no cache".
	var nada *Cache
	nada.guardar(uuid.New(), nada.inicio(), store.SituacaoConselheiro{}, true, agora)
	if _, _, ok := nada.ler(uuid.New(), agora); ok {
		t.Fatal("a nil cache answered")
	}
}

// The hits and misses reach /metrics.
func TestCacheNasMetricas(t *testing.T) {
	t.Parallel()
	c := NovoCache(10)
	s := novoServidor(t, func(o *Options) { o.Cache = c; o.Metrics = newMetrics(o.Store) })
	c.definirAtivo(true) // as Escutar does once it listens
	cidadao := uuid.New()
	s.situacao(t, tokenHS(t, cidadao))
	s.situacao(t, tokenHS(t, cidadao))
	s.situacao(t, tokenHS(t, cidadao))
	body := string(s.get(t, RotaMetrics).body)
	for _, want := range []string{`d6a_situacao_cache_total{resultado="hit"} 2`, `d6a_situacao_cache_total{resultado="miss"} 1`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// Esquecer (the executor's post-commit hook) drops the entries and, like a
// notification, refuses rows read before it.
func TestCacheEsquecer(t *testing.T) {
	c := NovoCache(10)
	c.definirAtivo(true)
	a, b := uuid.New(), uuid.New()
	c.guardar(a, c.inicio(), store.SituacaoConselheiro{}, true, agora)
	g := c.inicio()
	c.Esquecer([]uuid.UUID{a})
	if _, _, ok := c.ler(a, agora); ok {
		t.Fatal("Esquecer kept the entry")
	}
	c.guardar(b, g, store.SituacaoConselheiro{}, true, agora)
	if _, _, ok := c.ler(b, agora); ok {
		t.Fatal("kept a row read before Esquecer")
	}
	var nada *Cache
	nada.Esquecer([]uuid.UUID{a}) // no cache: no-op
}
