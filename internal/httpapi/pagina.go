package httpapi

import (
	_ "embed"

	"github.com/gofiber/fiber/v2"
)

// verificadorHTML is the verifier page (docs/verificacao.md): plain HTML
// and JavaScript, no framework, no request outside this origin. It
// recomputes a draw in the browser with WebCrypto, and replays the whole
// log from its tiles in a Web Worker.
//
//go:embed verificador/index.html
var verificadorHTML []byte

func paginaVerificador(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "public, max-age=300")
	// Nothing but this page's own script and same-origin fetches; its Web
	// Worker is a Blob of the page's own inline script (worker-src blob:).
	c.Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; worker-src blob:; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'")
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Send(verificadorHTML)
}
