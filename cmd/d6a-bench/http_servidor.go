package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof" // served only with -cpuprofile
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/httpapi"
	"github.com/formigueiro/d6a/internal/metrics"
	"github.com/formigueiro/d6a/internal/store"
)

// corpoBare is the bare handler's constant answer, the size of the
// situacao route's answer for a citizen who never registered.
var corpoBare = []byte(`{"cadastrado":false}`)

// novoBare is the yardstick: fiber with the d6a app's server limits and one
// handler on the same path, no middleware, no authentication, no database.
func novoBare() *fiber.App {
	app := fiber.New(fiber.Config{DisableStartupMessage: true, CaseSensitive: true, BodyLimit: httpapi.BodyLimit, ReadBufferSize: httpapi.ReadBufferSize,
		ReadTimeout: httpapi.ReadTimeout, WriteTimeout: httpapi.WriteTimeout, IdleTimeout: httpapi.IdleTimeout})
	app.Get(httpapi.RotaSituacao, func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(corpoBare)
	})
	return app
}

// servir is the server process, configured from the environment as `d6a
// serve` is: the d6a app with httpapi.NovoCache(cfg.SituacaoCache) and its
// Escutar; the same app on its own store and metrics with Cache nil (the
// "cache off" diagnostic); the bare app. Once the cache answers it prints
// "listening <d6a> <d6a cache off> <bare> <pprof or -> <cache size>".
func servir() error {
	cfg, err := config.FromEnv()
	if err == nil {
		err = cfg.RequireDatabase()
	}
	if err != nil {
		return err
	}
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel})))
	cache := httpapi.NovoCache(cfg.SituacaoCache)
	app, st, err := novoApp(cfg, cache)
	if err != nil {
		return err
	}
	defer st.Close()
	// The bench stops this process with SIGTERM, which ends Escutar too.
	ctx, pare := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer pare()
	go cache.Escutar(ctx, st.Pool)
	appSem, stSem, err := novoApp(cfg, nil)
	if err != nil {
		return err
	}
	defer stSem.Close()

	var lns [4]net.Listener // d6a, d6a cache off, bare, pprof
	for i := range lns {
		if lns[i], err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return err
		}
	}
	erros := make(chan error, 3)
	go func() { erros <- httpapi.Servir(app, lns[0]) }()
	go func() { erros <- appSem.Listener(lns[1]) }()
	go func() { erros <- novoBare().Listener(lns[2]) }()
	pprof := "-"
	if os.Getenv(envPprof) != "" {
		pprof = lns[3].Addr().String()
		go func() { _ = http.Serve(lns[3], nil) }()
	}
	if cache != nil {
		if err := esperarCache(ctx, lns[0].Addr().String()); err != nil {
			return err
		}
	}
	fmt.Printf("listening %s %s %s %s %d\n", lns[0].Addr(), lns[1].Addr(), lns[2].Addr(), pprof, max(0, cfg.SituacaoCache))
	select {
	case <-ctx.Done():
		return nil
	case err := <-erros:
		return err
	}
}

// novoApp is httpapi.New as `d6a serve` assembles it, on a store of its
// own, with cache (nil: off).
func novoApp(cfg config.Config, cache *httpapi.Cache) (*fiber.App, *store.Store, error) {
	st, err := store.Open(context.Background(), cfg.DatabaseURL)
	if err != nil {
		return nil, nil, err
	}
	app, err := httpapi.New(httpapi.Options{Config: cfg, Store: st, Metrics: metrics.New(metrics.StoreFonte(st, nil)),
		Ready: func(context.Context) error { return nil }, Cache: cache})
	if err != nil {
		st.Close()
	}
	return app, st, err
}

// esperarCache returns once the d6a app at addr has answered from its cache,
// which it only does while Escutar's LISTEN connection is open: a hit in
// d6a_situacao_cache_total proves it, with no race. The probe (envSonda) is
// a token of a never-registered citizen, whose answer is cached like any.
func esperarCache(ctx context.Context, addr string) error {
	const limite = 30 * time.Second
	sonda := []string{os.Getenv(envSonda)} // the bench always sets it
	for prazo := time.Now().Add(limite); ; time.Sleep(20 * time.Millisecond) {
		if err := pedirTodos(ctx, addr, 1, sonda, 200, nil); err != nil {
			return fmt.Errorf("cache probe: %w", err)
		}
		if situacaoDe(raspar(addr)).hit > 0 {
			return nil
		}
		if time.Now().After(prazo) {
			return fmt.Errorf("the situacao cache did not answer within %s: its LISTEN %s connection never opened (see the log)", limite, httpapi.CanalSituacao)
		}
	}
}
