// Command d6a is the D-6a colony: the verifiable draw that assigns citizen
// demands to counsellors (CONTRACT §1). Each subcommand lives in its own file.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/store"
)

// exitUsage is the status for bad flags or configuration (CONTRACT §1).
const exitUsage = 2

var commands = map[string]func(args []string) int{
	"serve":        cmdServe,
	"migrate":      cmdMigrate,
	"replay":       cmdReplay,
	"verify":       cmdVerify,
	"token":        cmdToken,
	"admin":        cmdAdmin,
	"log-keygen":   cmdLogKeygen,
	"log-eliminar": cmdLogEliminar,
	"beacon":       cmdBeacon,
}

func main() {
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(exitUsage)
	}
	cmd, ok := commands[os.Args[1]]
	if !ok {
		if os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
			usage(os.Stdout)
			os.Exit(0)
		}
		fmt.Fprintf(os.Stderr, "d6a: unknown command %q\n", os.Args[1])
		usage(os.Stderr)
		os.Exit(exitUsage)
	}
	os.Exit(cmd(os.Args[2:]))
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: d6a <command> [flags]

commands:
  serve                                 run the worker and the HTTP server
  migrate                               apply the d6a migrations
  replay --type TYPE --from-seq N       rewind the durable consumer of TYPE to stream sequence N
  verify --event-id UUID                recompute one draw from its audit record
  verify --json FILE                    recompute a draw from a file, no database
  verify --url BASE --event-id UUID | --all | --desde FILE [--chave KEY]
                                        verify from the public transparency log, no database
  log-keygen [--origin NAME]            print a new checkpoint signer key and its verifier key
  log-eliminar --cidadao UUID | --event-id UUID
                                        blank transparency-log records (spec 2.2 / N-0d elimination)
  verify --consistencia [--desde SEQ] [--reparar]
                                        compare the bus with the database (after a failover); --reparar re-creates lost draws and replays lost inputs
  beacon [--dir DIR] [--addr ADDR]      serve a private drand-compatible beacon (tests, demos): prints D6A_BEACON_URL and D6A_BEACON_CHAVE
  token --sub UUID [--ttl 1h]           sign a development session token with D6A_JWT_SECRET
                                        (--papel admin for an operator's token)
  admin [--url BASE] [--token JWT] …    the administration API (d6a admin --help)

configuration is read from the environment (D6A_*), see README.md.
`)
}

// loadConfig parses the environment and sets up logging; on error it prints
// one line naming the variable and returns false.
func loadConfig() (config.Config, bool) {
	cfg, err := config.FromEnv()
	if err != nil {
		fail(err)
		return cfg, false
	}
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	var h slog.Handler = slog.NewJSONHandler(os.Stderr, opts)
	if cfg.LogFormat == "text" {
		h = slog.NewTextHandler(os.Stderr, opts)
	}
	slog.SetDefault(slog.New(h))
	return cfg, true
}

// loadDatabaseConfig is loadConfig for the commands that need PostgreSQL:
// an unset D6A_DATABASE_URL fails the same way as any other variable.
func loadDatabaseConfig() (config.Config, bool) {
	cfg, ok := loadConfig()
	if !ok {
		return cfg, false
	}
	if err := cfg.RequireDatabase(); err != nil {
		fail(err)
		return cfg, false
	}
	return cfg, true
}

// openStore connects to cfg's database. A failure is printed as a problem
// with D6A_DATABASE_URL, a configuration error for the caller's exit status.
func openStore(ctx context.Context, cfg config.Config) (*store.Store, bool) {
	st, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		fail(fmt.Errorf("D6A_DATABASE_URL: %w", err))
		return nil, false
	}
	return st, true
}

// fail prints err on one line to stderr.
func fail(err error) {
	var ce *config.Error
	if errors.As(err, &ce) {
		fmt.Fprintf(os.Stderr, "d6a: configuration: %v\n", err)
		return
	}
	fmt.Fprintf(os.Stderr, "d6a: %v\n", err)
}
