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

// orcamentoPublico is the budget every public route (/readyz, /metrics,
// the transparency routes, the tiles and the verifier page) shares,
// whatever the client's address: a flood from many addresses, which the
// per-IP limits cannot see, gets porSegundo answers a second in all. A
// request over the budget waits its turn (a waiting client asks nothing
// more) up to EsperaOrcamento, then gets 503 with Retry-After. So the
// flood's cost to d6a is bounded and the draws keep their cores: under a
// flood, public reads slow down, the draws do not (docs/operacao.md).
// porSegundo 0: no budget.
func orcamentoPublico(porSegundo int, espera time.Duration) fiber.Handler {
	if porSegundo <= 0 {
		return func(c *fiber.Ctx) error { return c.Next() }
	}
	l := rate.NewLimiter(rate.Limit(porSegundo), max(porSegundo/10, 1))
	return func(c *fiber.Ctx) error {
		ctx, cancel := context.WithTimeout(context.Background(), espera)
		err := l.Wait(ctx)
		cancel()
		if err != nil {
			c.Set(fiber.HeaderRetryAfter, "1")
			c.Set(fiber.HeaderCacheControl, "no-store")
			return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"erro": "rotas públicas no limite de requisições por segundo (D6A_PUBLICO_POR_SEGUNDO); tente de novo"})
		}
		return c.Next()
	}
}
