package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/evento"
)

// cmdReplay rewinds one durable consumer (CONTRACT §1, §3). The running
// worker notices within its fetch wait and redelivers from there; the inbox
// and the spec's guards make it change nothing already applied.
func cmdReplay(args []string) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	tipoFlag := fs.String("type", "", "consumed event type, with or without diacritics (e.g. agenda.item_disponível)")
	from := fs.Uint64("from-seq", 0, "stream sequence delivery restarts at (≥ 1)")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	tipo, ok := evento.ParseTipo(*tipoFlag)
	if !ok || !tipo.Consumido() {
		var nomes []string
		for _, t := range evento.Consumidos {
			nomes = append(nomes, string(t))
		}
		fmt.Fprintf(os.Stderr, "d6a replay: --type %q is not a consumed type (one of: %s)\n", *tipoFlag, strings.Join(nomes, ", "))
		return exitUsage
	}
	if *from < 1 {
		fmt.Fprintln(os.Stderr, "d6a replay: --from-seq must be ≥ 1")
		return exitUsage
	}
	cfg, ok := loadConfig()
	if !ok {
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := bus.Connect(ctx, busClientConfig(cfg))
	if err != nil {
		fail(fmt.Errorf("D6A_NATS_URL: %w", err))
		return exitUsage
	}
	defer b.Close()
	before, after, err := b.Replay(ctx, tipo, *from)
	if err != nil {
		fail(err)
		return 1
	}
	fmt.Printf("consumer %s (%s)\n", tipo.Durable(), tipo)
	fmt.Printf("before: %s\n", before)
	fmt.Printf("after:  %s\n", after)
	return 0
}

// busClientConfig connects a short-lived command to the running bus: the
// external cluster, or the embedded server a `d6a serve` started (never a
// second embedded server).
func busClientConfig(cfg config.Config) bus.Config {
	url := cfg.NATSURL
	if url == "" {
		url = "nats://" + cfg.NATSEmbeddedAddr
	}
	return bus.Config{URL: url, Stream: cfg.Stream, Prefix: cfg.SubjectPrefix, MaxEntregas: cfg.MaxEntregas}
}
