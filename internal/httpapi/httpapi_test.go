package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"
)

// The test client's socket address under app.Test is 0.0.0.0; trusting it
// as a proxy lets X-Forwarded-For stand for the client.
func TestThrottlePorIP(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, func(o *Options) {
		o.Config.ThrottlePorMinuto = 3
		o.Config.TrustedProxies = []string{"0.0.0.0"}
	})
	tok := tokenHS(t, uuid.New())
	for i := 1; i <= 3; i++ {
		if r := s.situacao(t, tok, "X-Forwarded-For", "203.0.113.7"); r.status != 200 {
			t.Fatalf("request %d: status %d: %s", i, r.status, r.body)
		}
	}
	r := s.situacao(t, tok, "X-Forwarded-For", "203.0.113.7")
	r.erro(t, 429)
	ra, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || ra < 1 || ra > 60 {
		t.Fatalf("Retry-After %q, want 1..60 seconds", r.header.Get("Retry-After"))
	}

	// A spoofed entry on the left of the proxy's does not make a new client.
	r = s.situacao(t, tok, "X-Forwarded-For", "198.51.100.99, 203.0.113.7")
	r.erro(t, 429)

	// Another client still passes.
	if r := s.situacao(t, tok, "X-Forwarded-For", "203.0.113.8"); r.status != 200 {
		t.Fatalf("other IP: status %d: %s", r.status, r.body)
	}
	// Failed authentications count too: they are what a flood looks like.
	for i := 0; i < 3; i++ {
		s.situacao(t, "lixo", "X-Forwarded-For", "203.0.113.9").erro(t, 401)
	}
	s.situacao(t, tok, "X-Forwarded-For", "203.0.113.9").erro(t, 429)

	// Only the situacao route is throttled.
	for i := 0; i < 5; i++ {
		if r := s.get(t, RotaHealthz, "X-Forwarded-For", "203.0.113.7"); r.status != 200 {
			t.Fatalf("healthz throttled: %d", r.status)
		}
	}
}

// Without trusted proxies, X-Forwarded-For is ignored: a client cannot
// escape the throttle by writing it.
func TestThrottleIgnoraXFFSemProxyConfiavel(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, func(o *Options) { o.Config.ThrottlePorMinuto = 2 })
	tok := tokenHS(t, uuid.New())
	for i := 0; i < 2; i++ {
		if r := s.situacao(t, tok, "X-Forwarded-For", "203.0.113."+strconv.Itoa(i)); r.status != 200 {
			t.Fatalf("request %d: %d", i, r.status)
		}
	}
	s.situacao(t, tok, "X-Forwarded-For", "203.0.113.50").erro(t, 429)
}

func TestThrottleZeroDesliga(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, func(o *Options) { o.Config.ThrottlePorMinuto = 0 })
	tok := tokenHS(t, uuid.New())
	for i := 0; i < 20; i++ {
		if r := s.situacao(t, tok); r.status != 200 {
			t.Fatalf("request %d: status %d", i, r.status)
		}
	}
}

func TestHealthz(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, func(o *Options) { o.Ready = nil })
	r := s.get(t, RotaHealthz)
	if r.status != 200 || string(r.body) != `{"status":"ok"}` {
		t.Fatalf("got %d %s", r.status, r.body)
	}
}

func TestReadyz(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var pronto func(context.Context) error
	chamadas := 0
	trocar := func(f func(context.Context) error) {
		mu.Lock()
		defer mu.Unlock()
		pronto, chamadas = f, 0
	}
	s := novoServidor(t, func(o *Options) {
		o.Ready = func(ctx context.Context) error {
			mu.Lock()
			f := pronto
			chamadas++
			mu.Unlock()
			return f(ctx)
		}
	})
	// The public sees the reason, never the database's error (host, user).
	trocar(func(context.Context) error {
		return &NaoPronto{Motivo: "banco de dados indisponível", Err: errors.New(`failed to connect to host=db.interno user=d6a: senha errada`)}
	})
	if msg := s.get(t, RotaReadyz).erro(t, 503); msg != "banco de dados indisponível" {
		t.Fatalf("erro %q", msg)
	}
	time.Sleep(ReadyzTTL)
	trocar(func(context.Context) error { return errors.New("dial tcp 10.1.2.3:4222: connection refused") })
	if msg := s.get(t, RotaReadyz).erro(t, 503); msg != "não pronto" {
		t.Fatalf("erro %q", msg)
	}

	// Within ReadyzTTL the last result stands, and a flood of probes runs
	// no check at all.
	trocar(func(context.Context) error { return nil })
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := s.get(t, RotaReadyz); r.status != 503 {
				t.Errorf("within the TTL: %d", r.status)
			}
		}()
	}
	wg.Wait()
	if chamadas != 0 {
		t.Fatalf("64 probes within the TTL ran %d checks", chamadas)
	}
	time.Sleep(ReadyzTTL)
	for range 8 {
		if r := s.get(t, RotaReadyz); r.status != 200 || string(r.body) != `{"status":"ok"}` {
			t.Fatalf("got %d %s", r.status, r.body)
		}
	}
	if chamadas != 1 {
		t.Fatalf("8 probes ran %d checks, want 1", chamadas)
	}

	// A check that ignores its context still ends the probe at ReadyTimeout.
	time.Sleep(ReadyzTTL)
	trocar(func(context.Context) error { time.Sleep(ReadyTimeout + time.Second); return nil })
	inicio := time.Now()
	s.get(t, RotaReadyz).erro(t, 503)
	if d := time.Since(inicio); d > ReadyTimeout+500*time.Millisecond {
		t.Fatalf("probe took %v", d)
	}
}

func TestReadyzAntesDoBoot(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, func(o *Options) { o.Ready = nil })
	if msg := s.get(t, RotaReadyz).erro(t, 503); msg != "boot em andamento" {
		t.Fatalf("erro %q", msg)
	}
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, func(o *Options) {
		o.Metrics = newMetrics(o.Store)
		o.Metrics.Preparar("conselheiro.cadastrado")
	})
	pendente(t, s.st)
	pendente(t, s.st)
	s.situacao(t, tokenHS(t, uuid.New()))

	r := s.get(t, RotaMetrics)
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q", ct)
	}
	page := string(r.body)
	for _, l := range []string{
		"d6a_sorteios_total 0",
		"d6a_fila_pendentes_size 2",
		"d6a_conselheiros_ativos 0",
		`d6a_sem_candidatos_total{motivo="todos_ocupados"} 0`,
		`d6a_recusas_total{motivo="recusa_explicita"} 0`,
		`d6a_http_duracao_segundos_count{codigo="200",rota="/d6a/conselheiros/me/situacao"} 1`,
	} {
		if !strings.Contains(page, "\n"+l+"\n") {
			t.Errorf("/metrics lacks %q", l)
		}
	}
	for _, nome := range []string{"d6a_handler_duracao_segundos", "d6a_sorteio_duracao_segundos", "d6a_dead_letters_total", "d6a_outbox_pendentes"} {
		if !strings.Contains(page, "# TYPE "+nome) {
			t.Errorf("/metrics lacks %s", nome)
		}
	}
}

func TestErrosJSON(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, nil)
	s.app.Get("/panico", func(*fiber.Ctx) error { panic("teste") })

	if msg := s.get(t, "/nao-existe").erro(t, 404); msg != "rota não encontrada" {
		t.Errorf("404 erro %q", msg)
	}
	// Paths are case-sensitive.
	s.get(t, "/D6A/conselheiros/me/situacao").erro(t, 404)
	if msg := s.do(t, httptest.NewRequest(http.MethodPost, RotaHealthz, nil)).erro(t, 405); msg != "método não permitido" {
		t.Errorf("405 erro %q", msg)
	}
	// /panico is this test's own route, not the service's: it goes around
	// the openapi.yaml check of s.do.
	res, err := s.app.Test(httptest.NewRequest(http.MethodGet, "/panico", nil), 10_000)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if msg := (resposta{status: res.StatusCode, header: res.Header, body: b}).erro(t, 500); msg != "erro interno" {
		t.Errorf("500 erro %q", msg)
	}
}

// Limits enforced by fasthttp before any handler runs end the connection, so
// app.Test cannot see them: this test goes through a real listener.
func TestLimitesNoSocket(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, nil)
	base := escutar(t, s.app)
	do := func(req *http.Request) resposta {
		t.Helper()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", req.URL, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return resposta{status: res.StatusCode, header: res.Header, body: b}
	}

	req, _ := http.NewRequest(http.MethodGet, base+RotaHealthz, nil)
	req.Header.Set("X-Grande", strings.Repeat("a", ReadBufferSize))
	if msg := do(req).erro(t, 431); !strings.Contains(msg, "cabeçalhos") {
		t.Errorf("431 erro %q", msg)
	}

	// A body over the limit is refused from its Content-Length, before it
	// is read: sent by hand, so the client is not still writing 1 MiB when
	// the server answers and closes (a reset instead of the answer).
	if status := statusSemCorpo(t, base, RotaHealthz, BodyLimit+1); status != 413 {
		t.Errorf("Content-Length %d: status %d, want 413", BodyLimit+1, status)
	}
	// Outside /d6a/admin/ the GET routes keep a 4 KiB body limit.
	req, _ = http.NewRequest(http.MethodGet, base+RotaSituacao, strings.NewReader(strings.Repeat("b", 64<<10)))
	req.Header.Set("Authorization", "Bearer "+tokenHS(t, uuid.New()))
	do(req).erro(t, 413)

	// A token near the header limit still fits.
	req, _ = http.NewRequest(http.MethodGet, base+RotaSituacao, nil)
	req.Header.Set("Authorization", "Bearer "+tokenHS(t, uuid.New()))
	req.Header.Set("X-Preenchimento", strings.Repeat("c", ReadBufferSize/2))
	if r := do(req); r.status != 200 {
		t.Fatalf("situacao with large headers: %d %s", r.status, r.body)
	}

	// The server still answers after all that.
	req, _ = http.NewRequest(http.MethodGet, base+RotaHealthz, nil)
	if r := do(req); r.status != 200 {
		t.Fatalf("healthz after errors: %d", r.status)
	}
}

// escutar serves app on a loopback port until the test ends.
func escutar(t testing.TB, app *fiber.App) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = Servir(app, ln)
	}()
	t.Cleanup(func() {
		_ = app.Shutdown()
		<-done
	})
	return "http://" + ln.Addr().String()
}

func TestIPCliente(t *testing.T) {
	r, err := novoIPCliente([]string{"10.0.0.0/8", "192.0.2.1", "2001:db8::/32"})
	if err != nil {
		t.Fatal(err)
	}
	casos := []struct {
		peer, xff, want string
	}{
		{"198.51.100.1", "203.0.113.5", "198.51.100.1"},                   // untrusted peer: header ignored
		{"10.1.2.3", "", "10.1.2.3"},                                      // trusted peer, no header
		{"10.1.2.3", "203.0.113.5", "203.0.113.5"},                        // one proxy
		{"10.1.2.3", "1.1.1.1, 203.0.113.5", "203.0.113.5"},               // spoofed left entry ignored
		{"10.1.2.3", "1.1.1.1, 203.0.113.5, 192.0.2.1", "203.0.113.5"},    // two proxies
		{"10.1.2.3", "lixo, 203.0.113.5", "203.0.113.5"},                  // garbage left of the client
		{"10.1.2.3", "203.0.113.5, lixo", "10.1.2.3"},                     // garbage from the proxy: stop
		{"10.1.2.3", "10.9.9.9", "10.9.9.9"},                              // internal caller
		{"10.1.2.3", " 2001:db8::1 , ::ffff:203.0.113.5 ", "203.0.113.5"}, // mapped IPv4
		{"::ffff:10.1.2.3", "203.0.113.5", "203.0.113.5"},                 // mapped peer
		// Several header lines are one list: the proxy's line is last.
		{"10.1.2.3", "1.1.1.1\n203.0.113.5", "203.0.113.5"},
		{"10.1.2.3", "1.1.1.1, 8.8.8.8\n203.0.113.5, 192.0.2.1", "203.0.113.5"},
		{"10.1.2.3", "203.0.113.5\n", "203.0.113.5"},
	}
	app := fiber.New()
	for _, c := range casos {
		fctx := app.AcquireCtx(fasthttpCtx(c.peer, c.xff))
		got := r.de(fctx).String()
		app.ReleaseCtx(fctx)
		if got != c.want {
			t.Errorf("peer %s xff %q: got %s, want %s", c.peer, c.xff, got, c.want)
		}
	}
	if _, err := novoIPCliente([]string{"10.0.0.0/33"}); err == nil {
		t.Errorf("bad CIDR accepted")
	}
}

func TestChaveThrottle(t *testing.T) {
	for in, want := range map[string]string{
		"203.0.113.5":          "203.0.113.5",
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1": "2001:db8:1:2::/64",
		"2001:db8:1:3::1":      "2001:db8:1:3::/64",
	} {
		if got := chaveThrottle(netip.MustParseAddr(in)); got != want {
			t.Errorf("chaveThrottle(%s) = %s, want %s", in, got, want)
		}
	}
}

func fasthttpCtx(peer, xff string) *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.SetRequestURI("/")
	// One header line per "\n" of xff.
	if xff != "" {
		for _, l := range strings.Split(xff, "\n") {
			if l != "" {
				req.Header.Add(fiber.HeaderXForwardedFor, l)
			}
		}
	}
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP(peer), Port: 40000}, nil)
	return ctx
}

// statusSemCorpo sends a GET announcing a body of n bytes without sending
// it and returns the status of the answer.
func statusSemCorpo(t *testing.T, base, rota string, n int) int {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: d6a\r\nContent-Length: %d\r\n\r\n", rota, n); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	return res.StatusCode
}

// TestCorpoGrandeSempre413: a client still sending a body over the limit
// reads its 413, every time, never a reset (the server closes lingering).
// 50 posts of 2 MiB: a third with Content-Length through net/http, a third
// chunked through net/http (neither sends Expect), a third by hand on a
// raw socket that reads only once it has written everything.
func TestCorpoGrandeSempre413(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, nil)
	base := escutar(t, s.app)
	rota := PrefixoAdmin + "/atribuicoes/" + uuid.NewString() + "/timeout"
	corpo := bytes.Repeat([]byte(`{"justificativa":"x"}`), (2<<20)/21)
	cliente := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for i := 0; i < 50; i++ {
		var status int
		var msg string
		switch i % 3 {
		case 0, 1:
			var r io.Reader = bytes.NewReader(corpo)
			if i%3 == 1 {
				r = io.MultiReader(r) // no known length: chunked
			}
			req, _ := http.NewRequest(http.MethodPost, base+rota, r)
			req.Header.Set("Content-Type", "application/json")
			res, err := cliente.Do(req)
			if err != nil {
				t.Fatalf("post %d (%s): %v", i, map[int]string{0: "Content-Length", 1: "chunked"}[i%3], err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			status, msg = res.StatusCode, string(b)
		case 2:
			status, msg = postBruto(t, base, rota, corpo)
		}
		if status != http.StatusRequestEntityTooLarge || !strings.Contains(msg, `"erro"`) {
			t.Fatalf("post %d: status %d body %q, want 413 with {\"erro\"}", i, status, msg)
		}
	}
}

// postBruto writes the whole request before reading the answer, as a naive
// client does; write errors are ignored, the answer is what counts.
func postBruto(t *testing.T, base, rota string, corpo []byte) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: d6a\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", rota, len(corpo))
	_, _ = conn.Write(corpo)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("raw post: reading the answer: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// The verifier page names its WebAssembly by its build's version, and both
// generated files are served beside it with the types a browser needs to
// run them (instantiateStreaming refuses a module not served as
// application/wasm), under the page's CSP that lets it compile them.
func TestPaginaServeSeuWasm(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, nil)
	p := s.get(t, RotaTransparencia+"/")
	if p.status != http.StatusOK || !strings.Contains(string(p.body), `const VERSAO_WASM = "`+versaoWasm+`"`) || strings.Contains(string(p.body), "{{versao_wasm}}") {
		t.Fatalf("page: %d, version %s not in it", p.status, versaoWasm)
	}
	if !strings.Contains(CSPVerificador, "'wasm-unsafe-eval'") || strings.Contains(CSPVerificador, "'unsafe-eval'") {
		t.Errorf("CSP %q", CSPVerificador)
	}
	for nome, tipo := range map[string]string{"d6a.wasm": "application/wasm", "wasm_exec.js": "text/javascript"} {
		r := s.get(t, RotaTransparencia+"/"+nome+"?v="+versaoWasm)
		want, _, _ := ArquivoVerificador(nome)
		if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), tipo) || !bytes.Equal(r.body, want) || len(want) == 0 {
			t.Errorf("GET %s: %d %q, %d bytes", nome, r.status, r.header.Get("Content-Type"), len(r.body))
		}
	}
	if !bytes.HasPrefix(verificadorWasm, []byte("\x00asm")) {
		t.Error("d6a.wasm is not a WebAssembly module")
	}
}

// Issue 50 item 6: every answer, errors included, forbids sniffing,
// framing and the Referer; the verifier page's CSP runs its own inline
// scripts and style by hash, never 'unsafe-inline'.
func TestCabecalhosDeSeguranca(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, nil)
	for _, rota := range []string{RotaHealthz, RotaMetrics, RotaSituacao, "/nao-existe", RotaTransparencia + "/testemunhas", RotaTransparencia + "/"} {
		r := s.get(t, rota)
		if r.header.Get("X-Content-Type-Options") != "nosniff" || r.header.Get("Referrer-Policy") != "no-referrer" ||
			!strings.Contains(r.header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Errorf("%s (%d): nosniff %q, Referrer-Policy %q, CSP %q", rota, r.status, r.header.Get("X-Content-Type-Options"),
				r.header.Get("Referrer-Policy"), r.header.Get("Content-Security-Policy"))
		}
	}
	p := s.get(t, RotaTransparencia+"/")
	csp := p.header.Get("Content-Security-Policy")
	if csp != CSPVerificador || strings.Contains(csp, "unsafe-inline") {
		t.Fatalf("page CSP %q", csp)
	}
	blocos := append(scriptsEmbutidos.FindAllSubmatch(p.body, -1), estilosEmbutidos.FindAllSubmatch(p.body, -1)...)
	if len(blocos) < 4 {
		t.Fatalf("%d inline blocks found in the page", len(blocos))
	}
	for _, m := range blocos {
		h := sha256.Sum256(m[1])
		if !strings.Contains(csp, "'sha256-"+base64.StdEncoding.EncodeToString(h[:])+"'") {
			t.Errorf("inline block %.40q… not in the CSP", m[1])
		}
	}
}
