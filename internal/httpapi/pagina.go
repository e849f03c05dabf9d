package httpapi

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// verificadorHTML is the verifier page (docs/verificacao.md): plain HTML
// and JavaScript, no framework, no request outside this origin. The
// fetching, the tiles and the signatures are its JavaScript (WebCrypto);
// every d6a rule it applies (the replay, eligibility, the chain, the
// queue, the draw) is the Go of cmd/d6a-wasm, compiled to WebAssembly and
// served beside it, so the page's verdict is the CLI's.
//
// The directory is embedded whole: d6a.wasm is a build artifact (cmd/d6a-wasm
// built for js/wasm by `make wasm`, which every make target that builds or
// tests runs first), not a tracked file, so a tree built without it still
// compiles and serves the page, whose WebAssembly then answers 503 saying
// so. wasm_exec.js is the Go toolchain's loader, copied by `make generate`.
//
//go:embed verificador
var verificadorArquivos embed.FS

var (
	paginaFonte     = arquivoEmbutido("verificador/index.html")
	verificadorWasm = arquivoEmbutido("verificador/d6a.wasm")
	wasmExecJS      = arquivoEmbutido("verificador/wasm_exec.js")
)

func arquivoEmbutido(nome string) []byte {
	b, _ := verificadorArquivos.ReadFile(nome) // nil when absent
	return b
}

// SemWasm reports a binary built without the page's WebAssembly (`make
// wasm` not run): the page's checks cannot run.
func SemWasm() bool { return len(verificadorWasm) == 0 }

// The page names its WebAssembly with a version, the hash of the pair, so
// a browser never runs a page with the rules of another build.
var versaoWasm = func() string {
	h := sha256.New()
	h.Write(verificadorWasm)
	h.Write(wasmExecJS)
	return hex.EncodeToString(h.Sum(nil))[:16]
}()

var verificadorHTML = bytes.ReplaceAll(paginaFonte, []byte("{{versao_wasm}}"), []byte(versaoWasm))

// CSPVerificador is the page's Content-Security-Policy: its own inline
// scripts and style by their hashes (never 'unsafe-inline': an injected
// <script> or style would not run), Go's loader from this origin
// ('self'), the compilation of its WebAssembly ('wasm-unsafe-eval': no
// JavaScript eval), same-origin fetches; its Web Worker is a Blob of the
// page's own inline script (worker-src blob:). No other site may frame it.
var CSPVerificador = cspDaPagina(verificadorHTML)

// Inline blocks of the page, hashed for its CSP.
var (
	scriptsEmbutidos = regexp.MustCompile(`(?s)<script(?:\s[^>]*)?>(.*?)</script>`)
	estilosEmbutidos = regexp.MustCompile(`(?s)<style(?:\s[^>]*)?>(.*?)</style>`)
)

// cspDaPagina builds the page's CSP with the hash of each inline script
// and style, so editing the page never needs the policy edited by hand.
func cspDaPagina(html []byte) string {
	hashes := func(re *regexp.Regexp) string {
		var b strings.Builder
		for _, m := range re.FindAllSubmatch(html, -1) {
			h := sha256.Sum256(m[1])
			b.WriteString(" 'sha256-" + base64.StdEncoding.EncodeToString(h[:]) + "'")
		}
		return b.String()
	}
	return "default-src 'none'; script-src 'self'" + hashes(scriptsEmbutidos) + " 'wasm-unsafe-eval'; worker-src blob:; style-src" +
		hashes(estilosEmbutidos) + "; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

// PaginaVerificador is the page's bytes, for what serves it beside a
// static mirror of the tiles (d6a-bench pagina).
func PaginaVerificador() []byte { return verificadorHTML }

// ArquivoVerificador is a file the page loads beside it (nome: the last
// element of its path under RotaTransparencia), with its content type;
// ok false for any other name.
func ArquivoVerificador(nome string) (corpo []byte, tipo string, ok bool) {
	switch nome {
	case "d6a.wasm":
		return verificadorWasm, "application/wasm", true
	case "wasm_exec.js":
		return wasmExecJS, "text/javascript; charset=utf-8", true
	}
	return nil, "", false
}

func paginaVerificador(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "public, max-age=300")
	c.Set("Content-Security-Policy", CSPVerificador)
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Send(verificadorHTML)
}

// arquivoVerificador serves d6a.wasm and wasm_exec.js. The page asks for
// them with ?v= its build's version, so a day's cache never mixes builds.
func arquivoVerificador(nome string) fiber.Handler {
	corpo, tipo, _ := ArquivoVerificador(nome)
	return func(c *fiber.Ctx) error {
		if len(corpo) == 0 {
			return c.Status(fiber.StatusServiceUnavailable).SendString("d6a was built without the verifier page's WebAssembly: run `make wasm` before `go build`\n")
		}
		c.Set(fiber.HeaderCacheControl, "public, max-age=86400")
		c.Set(fiber.HeaderContentType, tipo)
		return c.Send(corpo)
	}
}
