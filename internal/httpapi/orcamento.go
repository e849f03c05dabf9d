package httpapi

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/time/rate"
)

// EsperaOrcamento is how long a public request waits for its turn in the
// shared budget before it is answered 503.
const EsperaOrcamento = time.Second

// BytesPorVez is the size of answer one turn of the public budget pays
// for: a larger answer (the statistics, at national scale megabytes
// gzipped) costs a turn more for each BytesPorVez more, since sending it
// is what costs d6a.
const BytesPorVez = 64 << 10

// foraDoOrcamento marks, in a request's Locals, an answer the budget
// refused: registrar logs it at debug.
const foraDoOrcamento = "d6a.fora_do_orcamento"

// orcamentoPublico is the budget every public route (/readyz, /metrics,
// the transparency routes, the tiles and the verifier page) shares,
// whatever the client's address: porSegundo turns a second in all, an
// answer of n bytes costing 1 + n/BytesPorVez of them. A flood from many
// addresses, which the per-IP limits cannot see, is so held to a bounded
// cost and the draws keep their cores: under a flood, public reads slow
// down, the draws do not (docs/operacao.md). A request waits its turn (a
// waiting client asks nothing more) up to espera, then gets 503 with
// Retry-After; an answer whose size's turns do not come in time is not
// sent. porSegundo 0: no budget.
func orcamentoPublico(porSegundo int, espera time.Duration) fiber.Handler {
	if porSegundo <= 0 {
		return func(c *fiber.Ctx) error { return c.Next() }
	}
	rajada := max(porSegundo/10, 1)
	l := rate.NewLimiter(rate.Limit(porSegundo), rajada)
	esperar := func(n int) bool {
		ctx, cancel := context.WithTimeout(context.Background(), espera)
		defer cancel()
		return l.WaitN(ctx, min(n, rajada)) == nil
	}
	recusar := func(c *fiber.Ctx) error {
		c.Locals(foraDoOrcamento, true)
		c.Response().ResetBody()
		c.Response().Header.Del(fiber.HeaderContentEncoding)
		c.Response().Header.Del(fiber.HeaderETag)
		c.Set(fiber.HeaderRetryAfter, "1")
		c.Set(fiber.HeaderCacheControl, "no-store")
		return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"erro": "rotas públicas no limite de requisições por segundo (D6A_PUBLICO_POR_SEGUNDO); tente de novo"})
	}
	return func(c *fiber.Ctx) error {
		if !esperar(1) {
			return recusar(c)
		}
		if err := c.Next(); err != nil {
			return err
		}
		if c.Response().IsBodyStream() {
			return nil
		}
		if mais := len(c.Response().Body()) / BytesPorVez; mais > 0 && !esperar(mais) {
			return recusar(c)
		}
		return nil
	}
}
