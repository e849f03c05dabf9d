package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/formigueiro/d6a/internal/store"
)

func cmdMigrate(args []string) int {
	if len(args) > 0 {
		fmt.Fprintln(os.Stderr, "d6a migrate: takes no arguments")
		return exitUsage
	}
	cfg, ok := loadDatabaseConfig()
	if !ok {
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, ok := openStore(ctx, cfg)
	if !ok {
		return exitUsage
	}
	defer st.Close()
	if err := store.Migrate(ctx, st.Pool); err != nil {
		fail(err)
		return 1
	}
	fmt.Println("migrations applied")
	return 0
}
