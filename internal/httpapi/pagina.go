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

// CSPVerificador is the page's Content-Security-Policy: nothing but its own
// inline scripts and same-origin fetches; its Web Worker is a Blob of the
// page's own inline script (worker-src blob:), so there is no other file
// to serve.
const CSPVerificador = "default-src 'none'; script-src 'unsafe-inline'; worker-src blob:; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'"

// PaginaVerificador is the page's bytes, for what serves it beside a
// static mirror of the tiles (d6a-bench pagina).
func PaginaVerificador() []byte { return verificadorHTML }

func paginaVerificador(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "public, max-age=300")
	c.Set("Content-Security-Policy", CSPVerificador)
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Send(verificadorHTML)
}
