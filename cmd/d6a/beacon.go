package main

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/formigueiro/d6a/internal/beacon"
)

// cmdBeacon is `d6a beacon [--dir DIR] [--addr ADDR] [--periodo 1s]`: serves
// a private drand-compatible beacon (CONTRACT §4a) for a test or a demo,
// the one `serve` starts on its own when D6A_BEACON_URL is unset. It prints
// the URL and the public key to give another d6a as D6A_BEACON_URL and
// D6A_BEACON_CHAVE. Private: its rounds prove nothing to anyone but whoever
// holds DIR.
func cmdBeacon(args []string) int {
	fs := flag.NewFlagSet("beacon", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	dir := fs.String("dir", envOr("D6A_DATA_DIR", "./.data"), "where the key is kept ("+beacon.ArquivoPrivado+")")
	addr := fs.String("addr", "127.0.0.1:8090", "listen address")
	periodo := fs.Duration("periodo", time.Second, "round period (whole seconds)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitUsage
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		fmt.Fprintf(os.Stderr, "d6a beacon: --dir: %v\n", err)
		return exitUsage
	}
	p, err := beacon.AbrirPrivado(*dir, *periodo)
	if err != nil {
		fmt.Fprintf(os.Stderr, "d6a beacon: %v\n", err)
		return exitUsage
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "d6a beacon: --addr: %v\n", err)
		return exitUsage
	}
	c := p.Cadeia()
	fmt.Printf("D6A_BEACON_URL=http://%s\nD6A_BEACON_CHAVE=%s\n", ln.Addr(), hex.EncodeToString(c.ChavePublica))
	fmt.Fprintf(os.Stderr, "d6a beacon: PRIVADO, genesis %s, period %s, chain %s\n", time.Unix(c.Genesis, 0).UTC().Format(time.RFC3339), c.Periodo, c.Hash)
	srv := &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(os.Stderr, "d6a beacon: %v\n", err)
		return 1
	}
	return 0
}
