package httpapi

import (
	"context"
	"encoding/json"
	"hash/crc32"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/sync/semaphore"
)

// Bounds of the public routes' database reads (issue 50 item 4): they go
// through their own pool (Options.Publico) and, to enter it, through a
// semaphore of the pool's size, so a flood waits at most EsperaPublica and
// is then told to come back instead of queueing behind the pool.
const (
	// ConexoesPublicas is the public share when Config.ConexoesPublicas
	// is 0 (D6A_DB_CONEXOES_PUBLICAS).
	ConexoesPublicas = 2
	// EsperaPublica is how long a public read waits for a free slot
	// before the 503.
	EsperaPublica = 2 * time.Second
	// RetryAfterPublico is the Retry-After of that 503, in seconds.
	RetryAfterPublico = 1

	// EstatisticasTTL is how long /estatisticas answers from memory: the
	// fold behind it runs every few seconds anyway, and one read sums
	// every counsellor.
	EstatisticasTTL = 5 * time.Second
	// ReadyzTTL is how long /readyz answers with the last check's result:
	// a probe every second is still fresh, a flood pings nothing.
	ReadyzTTL = time.Second
)

// errOcupado is the public routes' answer while every slot is taken.
var errOcupado = fiber.NewError(fiber.StatusServiceUnavailable, "servidor ocupado com leituras públicas; tente em instantes")

// vagas admits the public routes' database reads.
type vagas struct{ sem *semaphore.Weighted }

func novasVagas(n int) vagas {
	if n <= 0 {
		n = ConexoesPublicas
	}
	return vagas{semaphore.NewWeighted(int64(n))}
}

// entrar takes a slot, waiting at most EsperaPublica; the caller releases
// it with the returned function. On failure it sets Retry-After on c.
func (v vagas) entrar(c *fiber.Ctx) (func(), error) {
	ctx, cancel := context.WithTimeout(c.UserContext(), EsperaPublica)
	defer cancel()
	if err := v.sem.Acquire(ctx, 1); err != nil {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(RetryAfterPublico))
		return nil, errOcupado
	}
	return func() { v.sem.Release(1) }, nil
}

// middleware holds a slot for the whole handler: for routes that read the
// database on every request.
func (v vagas) middleware(c *fiber.Ctx) error {
	sair, err := v.entrar(c)
	if err != nil {
		return err
	}
	defer sair()
	return c.Next()
}

// memoria keeps one computed value for ttl. Concurrent callers of a stale
// value wait for the one computation in flight instead of each running
// their own, so a flood costs one computation per ttl. Failures are kept
// too when guardarErro is set (readiness: a failing check is as true for a
// second as a passing one).
type memoria[T any] struct {
	ttl         time.Duration
	guardarErro bool
	agora       func() time.Time

	mu    sync.Mutex
	valor T
	err   error
	em    time.Time
	feita bool
}

func (m *memoria[T]) ler(calcular func() (T, error)) (T, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	agora := m.agora()
	if m.feita && agora.Sub(m.em) < m.ttl && !agora.Before(m.em) {
		return m.valor, m.err
	}
	v, err := calcular()
	if err != nil && !m.guardarErro {
		return v, err
	}
	m.valor, m.err, m.em, m.feita = v, err, m.agora(), true
	return v, err
}

// corpoJSON is an answer encoded once, plain and gzipped, with their
// ETags, sent as is to every request while it is kept: encoding, hashing
// and sending it uncompressed per request is what a flood would otherwise
// cost (the statistics list every counsellor drawn among: megabytes at
// national scale).
type corpoJSON struct {
	corpo, gz   []byte
	etag, etagZ string
}

// tabelaETag is the CRC of fiber's etag middleware, so an ETag set here
// reads like the ones it sets.
var tabelaETag = crc32.MakeTable(0xD5828281)

func novoCorpoJSON(v any) (corpoJSON, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return corpoJSON{}, err
	}
	gz, err := comprimir(b)
	if err != nil {
		return corpoJSON{}, err
	}
	etag := `"` + strconv.Itoa(len(b)) + "-" + strconv.FormatUint(uint64(crc32.Checksum(b, tabelaETag)), 10)
	// Each encoding is its own representation, with its own strong ETag.
	return corpoJSON{corpo: b, gz: gz, etag: etag + `"`, etagZ: etag + `-gzip"`}, nil
}

// enviar answers j, gzipped when the client takes it, or 304 when the
// client holds it (If-None-Match, weak or strong); the ETag set here makes
// the etag middleware leave it alone.
func (j corpoJSON) enviar(c *fiber.Ctx) error {
	corpo, etag := j.corpo, j.etag
	gz := aceitaGzip(c.Get(fiber.HeaderAcceptEncoding))
	if gz {
		corpo, etag = j.gz, j.etagZ
	}
	c.Set(fiber.HeaderVary, fiber.HeaderAcceptEncoding)
	c.Set(fiber.HeaderETag, etag)
	if strings.Contains(c.Get(fiber.HeaderIfNoneMatch), etag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	if gz {
		c.Set(fiber.HeaderContentEncoding, "gzip")
	}
	return c.Send(corpo)
}
