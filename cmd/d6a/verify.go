package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/verificar/banco"
)

// *bus.Bus is the bus the time-window check reads.
var _ banco.Barramento = (*bus.Bus)(nil)

// cmdVerify recomputes a draw (CONTRACT §1, docs/verificacao.md §4–5):
//
//	d6a verify --json FILE      no database: FILE (or - for stdin) holds the
//	                            public inputs and optional claims
//	d6a verify --event-id UUID  the audit record, the assignment, the outbox
//	                            and the bus's time window
//	d6a verify --consistencia [--desde SEQ] [--reparar]
//	                            the bus against the database (consistencia.go)
//
// Exit 0 when everything agrees, 1 on the first mismatch, 2 for bad flags,
// configuration, an unusable file or no such draw.
func cmdVerify(args []string) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	eventID := fs.String("event-id", "", "event_id of the conselheiro.sorteado to verify (needs D6A_DATABASE_URL)")
	arquivo := fs.String("json", "", "JSON file with base, timestamp, elegiveis and optional claims; - reads stdin (no database)")
	folga := fs.Duration("skew", banco.FolgaPadrao, "with --event-id: clock skew allowed between T and the bus times")
	semBus := fs.Bool("no-bus", false, "with --event-id: do not connect to the bus (the time window is not checked)")
	pub := flagsURL(fs)
	consist := fs.Bool("consistencia", false, "compare d6a's results and the consumed inputs on the bus with the database (needs D6A_DATABASE_URL and the bus)")
	reparar := fs.Bool("reparar", false, "with --consistencia: re-create lost draws from the bus, then rewind the consumers of lost inputs")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "d6a verify: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *consist {
		if *eventID != "" || *arquivo != "" {
			fmt.Fprintln(os.Stderr, "d6a verify: --consistencia takes no --event-id or --json")
			return exitUsage
		}
		// --desde is shared with --url (a checkpoint file there): here it
		// is the first stream sequence to read (default: the whole stream).
		var desde uint64
		if pub.desde != "" {
			n, err := strconv.ParseUint(pub.desde, 10, 64)
			if err != nil {
				fmt.Fprintf(os.Stderr, "d6a verify: --desde with --consistencia is a stream sequence: %v\n", err)
				return exitUsage
			}
			desde = n
		}
		return verifyConsistencia(desde, *reparar)
	}
	if *reparar {
		fmt.Fprintln(os.Stderr, "d6a verify: --reparar goes with --consistencia")
		return exitUsage
	}
	if pub.url != "" {
		return verifyURL(pub, *eventID, *arquivo)
	}
	switch {
	case (*eventID == "") == (*arquivo == ""):
		fmt.Fprintln(os.Stderr, "d6a verify: give exactly one of --event-id UUID or --json FILE")
		return exitUsage
	case *arquivo != "":
		return verifyJSON(*arquivo, os.Stdout, os.Stderr)
	}
	id, err := uuid.Parse(*eventID)
	if err != nil {
		fmt.Fprintf(os.Stderr, "d6a verify: --event-id %q is not a UUID\n", *eventID)
		return exitUsage
	}
	if *folga < 0 {
		fmt.Fprintln(os.Stderr, "d6a verify: --skew must not be negative")
		return exitUsage
	}
	return verifyEventID(id, *folga, *semBus)
}

// verifyJSON is `d6a verify --json FILE`: no configuration, no database.
func verifyJSON(arquivo string, stdout, stderr io.Writer) int {
	var r io.Reader = os.Stdin
	if arquivo != "-" {
		f, err := os.Open(arquivo)
		if err != nil {
			fmt.Fprintf(stderr, "d6a verify: %v\n", err)
			return exitUsage
		}
		defer f.Close()
		r = f
	}
	err := sorteio.VerificarJSON(r, stdout)
	var d *sorteio.Divergencia
	switch {
	case err == nil:
		return 0
	case errors.As(err, &d):
		fmt.Fprintf(stderr, "d6a verify: mismatch: %v\n", d)
		return 1
	default:
		fmt.Fprintf(stderr, "d6a verify: %s: %v\n", arquivo, err)
		return exitUsage
	}
}

// verifyEventID is `d6a verify --event-id UUID`.
func verifyEventID(id uuid.UUID, folga time.Duration, semBus bool) int {
	cfg, ok := loadDatabaseConfig()
	if !ok {
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, ok := openStore(ctx, cfg)
	if !ok {
		return exitUsage
	}
	defer st.Close()

	// The bus of a running d6a (never a second embedded server). Without it
	// the time window is skipped and the report says so.
	o := banco.Opcoes{Folga: folga}
	if folga == 0 {
		o.Folga = -1 // an explicit --skew 0 means none
	}
	if !semBus {
		bctx, bcancel := context.WithTimeout(ctx, 5*time.Second)
		b, err := bus.Connect(bctx, busClientConfig(cfg))
		bcancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "d6a verify: bus unreachable, time window not checked: %v\n", err)
		} else {
			defer b.Close()
			o.Barramento = b
		}
	}

	rel, err := banco.Verificar(ctx, st, id, o)
	var d *registro.Falha
	switch {
	case err == nil:
		fmt.Print(rel.String())
		return 0
	case errors.As(err, &d):
		fmt.Printf("MISMATCH %v\n", d)
		return 1
	case errors.Is(err, banco.ErrNaoEncontrado):
		fmt.Fprintf(os.Stderr, "d6a verify: %v\n", err)
		return exitUsage
	default:
		fail(err)
		return exitUsage
	}
}
