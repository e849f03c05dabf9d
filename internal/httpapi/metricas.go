package httpapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/gofiber/fiber/v2"
)

// MetricasIntervalo is how often /metrics renders its page at most; a
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
func rotaMetricas(h http.Handler, agora func() time.Time) fiber.Handler {
	mem := &memoria[paginaMetricas]{ttl: MetricasIntervalo, agora: agora}
	renderizar := func() (paginaMetricas, error) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, RotaMetrics, nil))
		if w.Code != http.StatusOK {
			return paginaMetricas{}, fmt.Errorf("/metrics: %d %s", w.Code, w.Body.Bytes())
		}
		p := paginaMetricas{tipo: w.Header().Get(fiber.HeaderContentType), corpo: w.Body.Bytes()}
		var err error
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
