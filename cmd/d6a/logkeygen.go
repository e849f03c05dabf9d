package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// cmdLogKeygen is `d6a log-keygen [--origin NAME]` (CONTRACT §1): a new
// Ed25519 signer key on the first line, its verifier key on the second,
// in golang.org/x/mod/sumdb/note format. The whole output is a valid
// D6A_LOG_KEY_FILE; publish only the second line.
func cmdLogKeygen(args []string) int {
	fs := flag.NewFlagSet("log-keygen", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	origem := fs.String("origin", envOr("D6A_LOG_ORIGIN", registro.OrigemPadrao), "origin line of the checkpoints and name of the key")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "d6a log-keygen: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *origem == "" || strings.ContainsAny(*origem, "\n+ ") {
		fmt.Fprintln(os.Stderr, "d6a log-keygen: --origin must be one line without spaces or '+'")
		return exitUsage
	}
	skey, vkey, err := transparencia.GerarChave(*origem)
	if err != nil {
		fmt.Fprintf(os.Stderr, "d6a log-keygen: %v\n", err)
		return 1
	}
	fmt.Println(skey)
	fmt.Println(vkey)
	return 0
}
