package httpapi

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/formigueiro/d6a/internal/store"
)

// CanalSituacao is the PostgreSQL notification channel on which the
// triggers of migration 20261129140000 name the citizens whose situation
// changed ('*': all of them).
const CanalSituacao = "d6a_situacao"

// CacheTTL bounds how long an entry is used without being read again from
// the database. Notifications are what keep the cache right; the TTL only
// limits the damage of a bug in them.
const CacheTTL = time.Minute

// Cache keeps the database rows of the situacao route per citizen, so a
// counsellor polling their own situation costs no round trip. It is only
// used while a LISTEN connection (Escutar) is open: every change to
// d6a.conselheiros or d6a.atribuicoes, by any process, is then notified and
// drops the citizen's entry. Without that connection every read goes to the
// database. A nil *Cache caches nothing.
//
// Bound: at most max citizens (D6A_SITUACAO_CACHE, default 100,000); a new
// citizen past it drops an arbitrary entry. An entry is one counsellor row
// and its active assignment, a few hundred bytes, so the bound in bytes
// follows (docs/bench.md measures the RSS of a full cache with its tokens).
//
// Freshness: an answer may miss a change for as long as its notification
// takes to travel from PostgreSQL to this process after the commit
// (docs/decisions.md, "situacao cache").
type Cache struct {
	max int

	mu      sync.Mutex
	ativo   bool // a LISTEN connection is open
	geracao uint64
	m       map[uuid.UUID]entrada

	// Hits and misses; New points them at d6a_situacao_cache_total
	// unless they are set.
	OnHit, OnMiss func()
}

type entrada struct {
	linha      store.SituacaoConselheiro
	cadastrado bool
	lidaEm     time.Time
}

// NovoCache holds up to max citizens; max ≤ 0 returns nil (no cache).
func NovoCache(max int) *Cache {
	if max <= 0 {
		return nil
	}
	return &Cache{max: max, m: make(map[uuid.UUID]entrada)}
}

// ler returns the cached row of cidadao, if there is a fresh one.
func (c *Cache) ler(cidadao uuid.UUID, agora time.Time) (linha store.SituacaoConselheiro, cadastrado, ok bool) {
	if c == nil {
		return linha, false, false
	}
	c.mu.Lock()
	e, ok := c.m[cidadao]
	ok = ok && c.ativo && agora.Sub(e.lidaEm) < CacheTTL && !agora.Before(e.lidaEm)
	c.mu.Unlock()
	if !ok {
		if c.OnMiss != nil {
			c.OnMiss()
		}
		return linha, false, false
	}
	if c.OnHit != nil {
		c.OnHit()
	}
	return e.linha, e.cadastrado, true
}

// inicio is called before the database read whose result guardar may keep:
// it returns the generation guardar compares against.
func (c *Cache) inicio() uint64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.geracao
}

// guardar keeps a row read from the database, unless any invalidation came
// in since inicio: the row could then predate a commit whose notification
// has already been handled, and would stay wrong until the TTL.
func (c *Cache) guardar(cidadao uuid.UUID, geracao uint64, linha store.SituacaoConselheiro, cadastrado bool, agora time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ativo || geracao != c.geracao {
		return
	}
	if _, ok := c.m[cidadao]; !ok && len(c.m) >= c.max {
		for k := range c.m { // full: drop an arbitrary entry
			delete(c.m, k)
			break
		}
	}
	c.m[cidadao] = entrada{linha: linha, cadastrado: cadastrado, lidaEm: agora}
}

// Esquecer drops the entries of cidadaos. The executor calls it after each
// commit (atribuicao.Options.Alterados), before the relay can publish the
// result, so this process never answers from before a change whose event
// is already on the bus; the notification of the same commit follows.
func (c *Cache) Esquecer(cidadaos []uuid.UUID) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.geracao++
	for _, id := range cidadaos {
		delete(c.m, id)
	}
}

// notificacao handles one notification: a citizen's id, or '*' (or
// anything unreadable) for everyone.
func (c *Cache) notificacao(payload string) {
	if id, err := uuid.Parse(payload); err == nil {
		c.Esquecer([]uuid.UUID{id})
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.geracao++
	clear(c.m)
}

// definirAtivo empties the cache and turns it on or off.
func (c *Cache) definirAtivo(ativo bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.geracao++
	c.ativo = ativo
	clear(c.m)
}

// Escutar keeps a LISTEN connection to the database of pool open until ctx
// ends, reconnecting after failures; the cache is used only while it is
// open. It returns when ctx ends.
func (c *Cache) Escutar(ctx context.Context, pool *pgxpool.Pool) {
	if c == nil {
		return
	}
	espera := 100 * time.Millisecond
	for ctx.Err() == nil {
		inicio := time.Now()
		err := c.escutar(ctx, pool)
		c.definirAtivo(false)
		if ctx.Err() != nil {
			return
		}
		if time.Since(inicio) > time.Minute {
			espera = 100 * time.Millisecond
		}
		slog.Warn("cache de situacao desligado: conexão LISTEN perdida, lendo do banco", "err", err, "retry_in", espera.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(espera):
		}
		espera = min(espera*2, 5*time.Second)
	}
}

// escutar opens one dedicated connection (not the pool's: a pooled
// connection would keep listening after being handed to someone else),
// LISTENs, turns the cache on and applies notifications until an error.
func (c *Cache) escutar(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer func() {
		fim, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(fim)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+CanalSituacao); err != nil {
		return err
	}
	// From here on every commit that changes a situation reaches us, and
	// any read started from now on sees every commit made before it.
	c.definirAtivo(true)
	for {
		// A connection lost without a FIN only shows on a write: wait in
		// slices and ping between them (jackc/pgx#1831).
		wctx, cancel := context.WithTimeout(ctx, pingEscuta)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			c.notificacao(n.Payload)
		case ctx.Err() != nil:
			return ctx.Err()
		case wctx.Err() != nil:
			pctx, cancel := context.WithTimeout(ctx, pingEscuta)
			err = conn.Ping(pctx)
			cancel()
			if err != nil {
				return err
			}
		default:
			return err
		}
	}
}

// pingEscuta is how long the LISTEN connection may be silent before it is
// pinged, and how long the ping may take.
const pingEscuta = 10 * time.Second
