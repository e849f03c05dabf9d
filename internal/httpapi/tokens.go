package httpapi

import (
	"crypto/sha256"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TokensCache is the default bound of the verified tokens each process
// remembers (D6A_TOKENS_CACHE): one session per citizen of the situacao
// cache's default working set. An entry is the token's claims, so it is
// at most a token that fits the request header limit (ReadBufferSize);
// docs/bench.md measures the RSS of 100,000 entries with their situacao
// rows.
const TokensCache = 100000

// tokensVerificados remembers tokens that passed verification, keyed by the
// SHA-256 of the token's text, until their exp (plus Leeway, the tolerance
// the parser itself gives). A session polls the situacao route with the same
// token for its whole life, and an RS256 verification costs tens of
// microseconds (docs/bench.md): this is what keeps the route near the bare
// handler with the identity provider's keys. Only a byte-identical token
// hits; with a JWKS the key that verified it must still be in the set.
type tokensVerificados struct {
	max int
	now func() time.Time
	contador

	mu sync.Mutex
	m  map[[sha256.Size]byte]tokenVerificado
}

type tokenVerificado struct {
	claims claimsSessao
	ate    time.Time
	kid    string
	key    any
}

func novosTokensVerificados(max int, now func() time.Time) *tokensVerificados {
	if max <= 0 {
		return nil
	}
	return &tokensVerificados{max: max, now: now, m: make(map[[sha256.Size]byte]tokenVerificado)}
}

func (c *tokensVerificados) ler(h [sha256.Size]byte) (tokenVerificado, bool) {
	if c == nil {
		return tokenVerificado{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[h]
	if !ok {
		return e, false
	}
	if !c.now().Before(e.ate) {
		delete(c.m, h)
		return e, false
	}
	return e, true
}

func (c *tokensVerificados) esquecer(h [sha256.Size]byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.m, h)
	c.mu.Unlock()
}

// guardar keeps a verified token. When full, expired entries go first,
// then arbitrary ones (map order): the bound matters, the choice does not,
// since a dropped token only costs one more verification.
func (c *tokensVerificados) guardar(h [sha256.Size]byte, e tokenVerificado) {
	if c == nil || e.ate.IsZero() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		agora := c.now()
		for k, v := range c.m {
			if !agora.Before(v.ate) {
				delete(c.m, k)
			}
		}
		for k := range c.m {
			if len(c.m) < c.max {
				break
			}
			delete(c.m, k)
		}
	}
	c.m[h] = e
}

func (c *tokensVerificados) tamanho() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// contador counts a cache's hits and misses; the zero value counts nothing.
type contador struct{ hit, miss func() }

func (c contador) contar(hit bool) {
	switch {
	case hit && c.hit != nil:
		c.hit()
	case !hit && c.miss != nil:
		c.miss()
	}
}

// contarEm points the counter at the hit and miss series of v.
func (c *contador) contarEm(v *prometheus.CounterVec) {
	c.hit, c.miss = v.WithLabelValues("hit").Inc, v.WithLabelValues("miss").Inc
}
