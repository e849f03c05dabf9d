package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/formigueiro/d6a/internal/colonia"
)

func cmdServe(args []string) int {
	if len(args) > 0 {
		fmt.Fprintln(os.Stderr, "d6a serve: takes no arguments (configuration comes from D6A_* variables)")
		return exitUsage
	}
	cfg, ok := loadDatabaseConfig()
	if !ok {
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	startCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	w, err := colonia.New(startCtx, cfg, colonia.Options{})
	if err != nil {
		fail(err)
		var ce *colonia.ConfigError
		if errors.As(err, &ce) {
			return exitUsage
		}
		return 1
	}
	if err := w.Run(ctx); err != nil {
		fail(err)
		return 1
	}
	return 0
}
