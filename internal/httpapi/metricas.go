package httpapi

import (
	"bytes"
	"fmt"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
)

// MetricasIntervalo is how often /metrics renders its page at most (less
// when Config.ValidadeMetricas is shorter: 0 renders at every scrape); a
// scrape within it of the last render gets that render's bytes. Rendering
// (gathering every series, the text format, gzip) is most of what a flood
// of /metrics costs the CPU the draws share (docs/bench.md, "Public routes
// under a flood"); a scraper every few seconds never sees the difference.
const MetricasIntervalo = 250 * time.Millisecond

// paginaMetricas is one render of /metrics, plain and gzipped.
type paginaMetricas struct {
	tipo      string
	corpo, gz []byte
}

// rotaMetricas serves h's page, rendered at most once per
// MetricasIntervalo; scrapes that find it stale wait for the one render in
// flight (memoria). agora is the clock.
func rotaMetricas(h http.Handler, intervalo time.Duration, agora func() time.Time) fiber.Handler {
	mem := &memoria[paginaMetricas]{ttl: intervalo, agora: agora}
	renderizar := func() (paginaMetricas, error) {
		req, err := http.NewRequest(http.MethodGet, RotaMetrics, nil)
		if err != nil {
			return paginaMetricas{}, err
		}
		w := &gravador{h: http.Header{}}
		h.ServeHTTP(w, req)
		if w.codigo != http.StatusOK {
			return paginaMetricas{}, fmt.Errorf("/metrics: %d %s", w.codigo, w.corpo.Bytes())
		}
		p := paginaMetricas{tipo: w.h.Get(fiber.HeaderContentType), corpo: w.corpo.Bytes()}
		p.gz, err = comprimir(p.corpo)
		return p, err
	}
	return func(c *fiber.Ctx) error {
		p, err := mem.ler(renderizar)
		if err != nil {
			return err
		}
		c.Set(fiber.HeaderContentType, p.tipo)
		c.Set(fiber.HeaderCacheControl, "no-store")
		c.Set(fiber.HeaderVary, fiber.HeaderAcceptEncoding)
		if aceitaGzip(c.Get(fiber.HeaderAcceptEncoding)) {
			c.Set(fiber.HeaderContentEncoding, "gzip")
			return c.Send(p.gz)
		}
		return c.Send(p.corpo)
	}
}

// gravador is the http.ResponseWriter a render writes into (no
// Accept-Encoding asked: the plain text format).
type gravador struct {
	h      http.Header
	corpo  bytes.Buffer
	codigo int
}

func (g *gravador) Header() http.Header { return g.h }

func (g *gravador) WriteHeader(codigo int) {
	if g.codigo == 0 {
		g.codigo = codigo
	}
}

func (g *gravador) Write(b []byte) (int, error) {
	g.WriteHeader(http.StatusOK)
	return g.corpo.Write(b)
}
