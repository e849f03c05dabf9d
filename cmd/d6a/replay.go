package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/evento"
)

// cmdReplay rewinds the durable d6a-entradas (CONTRACT §1, §3). The running
// worker notices within its fetch wait and redelivers from there; the inbox
// and the spec's guards make it change nothing already applied. One durable
// carries every consumed type in stream order, so there is no rewinding one
// type alone: --type is refused, saying why.
func cmdReplay(args []string) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	tipoFlag := fs.String("type", "", "refused: one durable, d6a-entradas, carries every consumed type in stream order")
	from := fs.Uint64("from-seq", 0, "stream sequence delivery restarts at (≥ 1)")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *tipoFlag != "" {
		fmt.Fprintf(os.Stderr, "d6a replay: --type %q not accepted: one durable, %s, consumes every type in stream order (CONTRACT §3), so a replay rewinds all of them; run it with --from-seq alone\n", *tipoFlag, evento.DurableEntradas)
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
	before, after, err := b.Replay(ctx, *from)
	if err != nil {
		fail(err)
		return 1
	}
	fmt.Printf("consumer %s (todos os tipos consumidos)\n", evento.DurableEntradas)
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
