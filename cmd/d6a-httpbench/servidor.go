package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof" // served only with -cpuprofile
	"os"
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
	app := fiber.New(fiber.Config{
		DisableStartupMessage: true,
		CaseSensitive:         true,
		BodyLimit:             httpapi.BodyLimit,
		ReadBufferSize:        httpapi.ReadBufferSize,
		ReadTimeout:           httpapi.ReadTimeout,
		WriteTimeout:          httpapi.WriteTimeout,
		IdleTimeout:           httpapi.IdleTimeout,
	})
	app.Get(httpapi.RotaSituacao, func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(corpoBare)
	})
	return app
}

// servir is the server process: the d6a app configured from the environment
// the way `d6a serve` is (config.FromEnv, JSON logs on stderr at
// D6A_LOG_LEVEL, store.Open with the default pool, default metrics), and the
// bare app. It prints "listening <d6a addr> <bare addr> <pprof addr or ->"
// and serves until its stdin closes.
func servir() error {
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	if err := cfg.RequireDatabase(); err != nil {
		return err
	}
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel})))
	ctx := context.Background()
	st, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	app, err := httpapi.New(httpapi.Options{
		Config:  cfg,
		Store:   st,
		Metrics: metrics.New(metrics.StoreFonte(st, nil)),
		Ready:   func(context.Context) error { return nil },
	})
	if err != nil {
		return err
	}
	bare := novoBare()
	lnD6A, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	lnBare, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	erros := make(chan error, 2)
	go func() { erros <- app.Listener(lnD6A) }()
	go func() { erros <- bare.Listener(lnBare) }()
	pprof := "-"
	if os.Getenv(envPprof) != "" {
		lnPprof, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		pprof = lnPprof.Addr().String()
		go func() { _ = http.Serve(lnPprof, nil) }()
	}
	fmt.Printf("listening %s %s %s\n", lnD6A.Addr(), lnBare.Addr(), pprof)

	fim := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(fim)
	}()
	select {
	case <-fim:
	case err := <-erros:
		return err
	}
	_ = app.ShutdownWithTimeout(5 * time.Second)
	_ = bare.ShutdownWithTimeout(5 * time.Second)
	return nil
}
