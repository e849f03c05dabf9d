// Package httpapi is d6a's HTTP adapter (CONTRACT §6): the counsellor's own
// situation, liveness, readiness and Prometheus metrics, served by fiber.
package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/helmet"
	"github.com/gofiber/fiber/v2/middleware/limiter"
	fiberrecover "github.com/gofiber/fiber/v2/middleware/recover"

	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/metrics"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/schemas"
)

// Routes of CONTRACT §6.
const (
	RotaSituacao = "/d6a/conselheiros/me/situacao"
	RotaHealthz  = "/healthz"
	RotaReadyz   = "/readyz"
	RotaMetrics  = "/metrics"
	// RotaOpenAPI and RotaAsyncAPI serve the machine-readable interfaces
	// (CONTRACT §9): schemas/openapi.yaml and schemas/asyncapi.yaml as JSON.
	RotaOpenAPI  = "/d6a/openapi.json"
	RotaAsyncAPI = "/d6a/asyncapi.json"
)

// Limits of the server. Only the administration routes take a body, a
// small JSON object (CONTRACT §6: over 1 MiB → 413); headers must fit a
// session JWT with room to spare.
const (
	BodyLimit = 1 << 20
	// CorpoLimitePublico is the body the routes outside /d6a/admin/ take:
	// they are GETs, so a larger body is refused with 413 as before the
	// console existed.
	CorpoLimitePublico = 4 << 10
	ReadBufferSize     = 8 << 10 // also the header limit: beyond it, 431
	ReadTimeout        = 10 * time.Second
	WriteTimeout       = 10 * time.Second
	IdleTimeout        = 60 * time.Second

	// ReadyTimeout bounds one readiness check (CONTRACT §6 /readyz).
	ReadyTimeout = 2 * time.Second
	// ConsultaTimeout bounds the database work of one situacao request.
	ConsultaTimeout = 5 * time.Second
)

// Options is what New needs.
type Options struct {
	// Config gives the JWT keys and claims, the throttle and the trusted
	// proxies.
	Config config.Config
	// Store is the database; required.
	Store *store.Store
	// Publico is the pool the public routes (situacao, transparency,
	// the gauges of /metrics) read through, apart from Store's so they can
	// never take the executor's connections (Store.Publico); nil reads
	// through Store, still bounded by Config.ConexoesPublicas slots.
	Publico *store.Store
	// Metrics is served on /metrics and times the requests; nil serves a
	// registry with the runtime collectors only.
	Metrics *metrics.Metrics
	// Ready reports whether the process may receive traffic: the boot
	// protocol is done and the database, the bus and the six consumers
	// answer. Nil means the boot has not finished: /readyz answers 503.
	// /readyz shows only the Motivo of a *NaoPronto it returns (any other
	// error: "não pronto"); the whole error goes to the log.
	Ready func(ctx context.Context) error
	// Now is the clock of token validation and of the suspension check;
	// nil means time.Now.
	Now func() time.Time
	// Cache answers situacao without the database while its Escutar runs;
	// nil reads the database on every request.
	Cache *Cache
	// Admin serves the administration routes (CONTRACT §6) when not nil
	// and Config.Admin is on.
	Admin Administracao
	// Contexto ends the background work of the app (the JWKS refresh);
	// nil means it lives as long as the process.
	Contexto context.Context
	// JWKS tunes the key-set client of D6A_JWT_JWKS_URL (tests).
	JWKS OpcoesJWKS
	// TokensCache is how many verified tokens are remembered until their
	// exp: 0 means Config.TokensCache (D6A_TOKENS_CACHE), or TokensCache
	// when that is 0 too; a negative value turns the cache off.
	TokensCache int
	// ChaveLog is the transparency log's verifier key, served at
	// /d6a/transparencia/chave.
	ChaveLog string
}

type api struct {
	store *store.Store
	// publico and leitura are the public routes' pool and its reads;
	// vagas admits them.
	publico *store.Store
	leitura Leitura
	vagas   vagas
	metrics *metrics.Metrics
	auth    *autenticador
	ip      ipCliente
	ready   func(ctx context.Context) error
	now     func() time.Time
	cache   *Cache
	// prontidao is /readyz's last check (ReadyzTTL); ultimoMotivo the
	// last failure logged at warn.
	prontidao    memoria[struct{}]
	ultimoMotivo string
}

// New builds the fiber app. It fails when the JWT configuration is
// contradictory or the public key cannot be read, and when a trusted proxy
// is not an address or CIDR, so a misconfigured server never starts.
func New(o Options) (*fiber.App, error) {
	if o.Store == nil {
		return nil, errors.New("httpapi: Options.Store is required")
	}
	a := &api{store: o.Store, publico: o.Publico, metrics: o.Metrics, ready: o.Ready, now: o.Now, cache: o.Cache}
	if a.publico == nil {
		a.publico = o.Store
	}
	a.leitura = a.publico.Read()
	a.vagas = novasVagas(o.Config.ConexoesPublicas)
	if a.now == nil {
		a.now = time.Now
	}
	a.prontidao = memoria[struct{}]{ttl: ReadyzTTL, guardarErro: true, agora: time.Now}
	if a.metrics == nil {
		a.metrics = metrics.New(nil)
	}
	if c := a.cache; c != nil && c.OnHit == nil && c.OnMiss == nil {
		c.OnHit = a.metrics.SituacaoCache.WithLabelValues("hit").Inc
		c.OnMiss = a.metrics.SituacaoCache.WithLabelValues("miss").Inc
	}
	var err error
	ctx := o.Contexto
	if ctx == nil {
		ctx = context.Background()
	}
	nTokens := o.TokensCache
	if nTokens == 0 {
		nTokens = o.Config.TokensCache
	}
	if nTokens == 0 {
		nTokens = TokensCache
	}
	if a.auth, err = novoAutenticador(ctx, o.Config, a.now, o.JWKS, nTokens); err != nil {
		return nil, err
	}
	a.auth.contarEm(a.metrics)
	if a.ip, err = novoIPCliente(o.Config.TrustedProxies); err != nil {
		return nil, err
	}

	app := fiber.New(fiber.Config{
		AppName:               "d6a",
		DisableStartupMessage: true,
		CaseSensitive:         true,
		BodyLimit:             BodyLimit,
		ReadBufferSize:        ReadBufferSize,
		ReadTimeout:           ReadTimeout,
		WriteTimeout:          WriteTimeout,
		IdleTimeout:           IdleTimeout,
		ErrorHandler:          erroJSON,
		// Only listed proxies may speak for the client in X-Forwarded-*
		// headers (fiber's Hostname, Protocol…). The client IP itself comes
		// from ipCliente, never from c.IP(); see clientip.go.
		EnableTrustedProxyCheck: true,
		TrustedProxies:          o.Config.TrustedProxies,
	})

	app.Use(a.registrar)
	app.Use(cabecalhosSeguranca)
	app.Use(limitarCorpo)
	app.Use(fiberrecover.New(fiberrecover.Config{
		EnableStackTrace: true,
		StackTraceHandler: func(c *fiber.Ctx, e any) {
			slog.Error("panic no handler HTTP", "method", c.Method(), "path", c.Path(),
				"panic", e, "stack", string(debug.Stack()))
		},
	}))

	situacao := []fiber.Handler{}
	if n := o.Config.ThrottlePorMinuto; n > 0 {
		situacao = append(situacao, limiter.New(limiter.Config{
			Max:        n,
			Expiration: time.Minute,
			KeyGenerator: func(c *fiber.Ctx) string {
				return chaveThrottle(a.ip.de(c))
			},
			// The limiter has already set Retry-After.
			LimitReached: func(c *fiber.Ctx) error {
				return c.Status(fiber.StatusTooManyRequests).JSON(fiber.Map{"erro": "limite de requisições por minuto excedido"})
			},
		}))
	}
	situacao = append(situacao, a.situacao)
	app.Get(RotaSituacao, situacao...)
	app.Get(RotaHealthz, func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"status": "ok"}) })
	publico := orcamentoPublico(o.Config.PublicoPorSegundo, EsperaOrcamento)
	app.Get(RotaReadyz, publico, a.readyz)
	app.Get(RotaMetrics, publico, rotaMetricas(a.metrics.Handler(), min(MetricasIntervalo, o.Config.ValidadeMetricas), time.Now))
	app.Get(RotaOpenAPI, documento(schemas.OpenAPIJSON))
	app.Get(RotaAsyncAPI, documento(schemas.AsyncAPIJSON))
	if o.Admin != nil && o.Config.Admin {
		a.rotasAdmin(app, o.Admin)
	}
	a.transparenciaRotas(app, o.Config.TransparenciaPorMinuto, publico, o.ChaveLog, o.Config.LogTestemunhas)
	return app, nil
}

// documento serves one of the machine-readable interfaces. They are
// constant for a build, so any cache may keep them for an hour.
func documento(ler func() ([]byte, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		b, err := ler()
		if err != nil {
			// A build defect the schemas tests catch.
			slog.Error("documento de interface", "err", err)
			return fiber.NewError(fiber.StatusInternalServerError)
		}
		c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(b)
	}
}

// CSPPadrao is every answer's Content-Security-Policy but the verifier
// page's (CSPVerificador): JSON, text and tiles load nothing and are
// framed by no one.
const CSPPadrao = "default-src 'none'; frame-ancestors 'none'"

// cabecalhosSeguranca sets the security headers of every answer (issue 50
// item 6) through fiber's helmet: nosniff, no framing, no Referer. The
// log is public data a mirror or another origin's verifier may fetch, so
// its resources are not confined to this origin (CORP cross-origin,
// COEP unsafe-none).
var cabecalhosSeguranca = helmet.New(helmet.Config{
	ContentSecurityPolicy:     CSPPadrao,
	ReferrerPolicy:            "no-referrer",
	XFrameOptions:             "DENY",
	CrossOriginEmbedderPolicy: "unsafe-none",
	CrossOriginResourcePolicy: "cross-origin",
})

// limitarCorpo refuses a body over CorpoLimitePublico outside the
// administration routes.
func limitarCorpo(c *fiber.Ctx) error {
	if len(c.Request().Body()) > CorpoLimitePublico && !strings.HasPrefix(c.Path(), PrefixoAdmin+"/") {
		return fiber.NewError(fiber.StatusRequestEntityTooLarge)
	}
	return c.Next()
}

// situacao answers GET /d6a/conselheiros/me/situacao with the data of the
// token's subject, and only theirs (CONTRACT §6).
func (a *api) situacao(c *fiber.Ctx) error {
	// Personal data: no shared cache may keep or reuse it.
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderVary, fiber.HeaderAuthorization)
	if !a.auth.configurado() {
		return fiber.NewError(fiber.StatusServiceUnavailable, "autenticação não configurada")
	}
	cidadao, err := a.auth.cidadao(c.Get(fiber.HeaderAuthorization))
	if err != nil {
		// RFC 6750 §3: tell the client which scheme and that the token failed.
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer error="invalid_token"`)
		return fiber.NewError(fiber.StatusUnauthorized, err.Error())
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), ConsultaTimeout)
	defer cancel()
	// A slot only for a read the cache cannot answer (lerSituacao).
	out, err := lerSituacao(ctx, a.leitura, a.cache, cidadao, a.now(), func() (func(), error) { return a.vagas.entrar(c) })
	if errors.Is(err, errOcupado) {
		return err
	}
	if err != nil {
		slog.Error("situacao: leitura do banco falhou", "err", err)
		if store.Transient(err) {
			return fiber.NewError(fiber.StatusServiceUnavailable, "banco de dados indisponível")
		}
		return fiber.NewError(fiber.StatusInternalServerError, "erro interno")
	}
	return c.JSON(out)
}

// NaoPronto is a readiness failure: Motivo is what /readyz shows the
// public, Err the detail (a database error names hosts and users) that
// only the log sees.
type NaoPronto struct {
	Motivo string
	Err    error
}

func (e *NaoPronto) Error() string {
	if e.Err == nil {
		return e.Motivo
	}
	return e.Motivo + ": " + e.Err.Error()
}

func (e *NaoPronto) Unwrap() error { return e.Err }

// readyz answers with the readiness check of the last ReadyzTTL, so a
// flood of probes costs one ping of the database and the bus per second.
// The check has a deadline; one that ignores its context still cannot hold
// the probe longer than ReadyTimeout.
func (a *api) readyz(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	if a.ready == nil {
		return fiber.NewError(fiber.StatusServiceUnavailable, "boot em andamento")
	}
	_, err := a.prontidao.ler(func() (struct{}, error) { return struct{}{}, a.verificarProntidao() })
	if err != nil {
		motivo := "não pronto"
		var np *NaoPronto
		if errors.As(err, &np) {
			motivo = np.Motivo
		}
		return fiber.NewError(fiber.StatusServiceUnavailable, umaLinha(motivo))
	}
	return c.JSON(fiber.Map{"status": "ok"})
}

// verificarProntidao runs a.ready once; its failure is logged whole, at
// warn when it differs from the last one (a probe each second must not
// flood the log with the same line).
func (a *api) verificarProntidao() error {
	ctx, cancel := context.WithTimeout(context.Background(), ReadyTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.ready(ctx) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = &NaoPronto{Motivo: "verificação de prontidão excedeu " + ReadyTimeout.String()}
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	nivel := slog.LevelDebug
	if msg != a.ultimoMotivo { // under prontidao's lock
		nivel = slog.LevelWarn
		if msg == "" {
			nivel = slog.LevelInfo
		}
		a.ultimoMotivo = msg
	}
	if err != nil {
		slog.Log(ctx, nivel, "readyz: not ready", "err", err)
	} else if nivel != slog.LevelDebug {
		slog.Log(ctx, nivel, "readyz: ready again")
	}
	return err
}

// umaLinha keeps an error message short and on one line for a JSON answer.
func umaLinha(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// registrar logs each request and times it. It turns a handler's error into
// the JSON answer itself, so the status it logs is the one sent.
func (a *api) registrar(c *fiber.Ctx) error {
	inicio := time.Now()
	err := c.Next()
	if err != nil {
		if herr := c.App().ErrorHandler(c, err); herr != nil {
			_ = c.SendStatus(fiber.StatusInternalServerError)
		}
	}
	dur := time.Since(inicio)
	status := c.Response().StatusCode()
	rota := rotaConhecida(c)
	a.metrics.HTTPDuracao.WithLabelValues(rota, strconv.Itoa(status)).Observe(dur.Seconds())

	nivel := slog.LevelInfo
	switch {
	case c.Locals(foraDoOrcamento) != nil:
		// The budget shedding a flood, counted by d6a_http_duracao_segundos
		// with its 503: a line each would be the flood's cost again.
		nivel = slog.LevelDebug
	case status >= 500:
		nivel = slog.LevelWarn
	case rota == RotaHealthz || rota == RotaReadyz || rota == RotaMetrics:
		// Probes and scrapes every few seconds would drown the rest.
		nivel = slog.LevelDebug
	}
	slog.Log(c.UserContext(), nivel, "requisição http",
		"method", c.Method(),
		"path", c.Path(),
		"status", status,
		"latency_ms", float64(dur.Microseconds())/1000,
		"ip", a.ip.de(c).String(),
	)
	return nil
}

// rotaConhecida is the route label of a request: one of the registered
// patterns, or "outra", so unknown paths cannot grow the metric's label set.
func rotaConhecida(c *fiber.Ctx) string {
	p := c.Route().Path
	switch {
	case p == RotaSituacao, p == RotaHealthz, p == RotaReadyz, p == RotaMetrics, p == RotaOpenAPI, p == RotaAsyncAPI, strings.HasPrefix(p, PrefixoAdmin+"/"):
		if c.Response().StatusCode() != fiber.StatusNotFound && c.Response().StatusCode() != fiber.StatusMethodNotAllowed {
			return p
		}
	default:
		// The registered transparency patterns: a bounded set.
		if strings.HasPrefix(p, RotaTransparencia) && c.Response().StatusCode() != fiber.StatusNotFound {
			return p
		}
	}
	return "outra"
}

// Messages of the errors fiber itself raises.
var mensagens = map[int]string{
	fiber.StatusBadRequest:                  "requisição malformada",
	fiber.StatusNotFound:                    "rota não encontrada",
	fiber.StatusMethodNotAllowed:            "método não permitido",
	fiber.StatusRequestTimeout:              "tempo de leitura da requisição esgotado",
	fiber.StatusRequestEntityTooLarge:       "corpo da requisição grande demais",
	fiber.StatusRequestHeaderFieldsTooLarge: "cabeçalhos da requisição grandes demais",
	fiber.StatusTooManyRequests:             "limite de requisições por minuto excedido",
	fiber.StatusInternalServerError:         "erro interno",
}

// erroJSON is the app's error handler: every error leaves as
// {"erro": "…"} with its status code (CONTRACT §6).
func erroJSON(c *fiber.Ctx, err error) error {
	code := fiber.StatusInternalServerError
	msg := mensagens[code]
	var fe *fiber.Error
	if errors.As(err, &fe) {
		code = fe.Code
		if m, ok := mensagens[code]; ok && ehMensagemDoFiber(fe) {
			msg = m
		} else {
			msg = fe.Message
		}
	} else {
		slog.Error("handler HTTP falhou", "method", c.Method(), "path", c.Path(), "err", err)
	}
	return c.Status(code).JSON(fiber.Map{"erro": msg})
}

// ehMensagemDoFiber tells fiber's own English messages ("Cannot GET /x",
// "Not Found", "Request Header Fields Too Large"…) from ours, which are
// always Portuguese and set on purpose.
func ehMensagemDoFiber(fe *fiber.Error) bool {
	if fe.Message == "" || fe.Message == fiber.NewError(fe.Code).Message || strings.HasPrefix(fe.Message, "Cannot ") {
		return true
	}
	// fasthttp parse errors become 400 with their own text.
	return fe.Code == fiber.StatusBadRequest
}
