package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/transparencia"
)

// cmdLogEliminar is `d6a log-eliminar --cidadao UUID | --event-id UUID`:
// the elimination of spec 2.2 / N-0d applied to the transparency log. It
// blanks the records (every record naming the citizen, or one draw's);
// leaf hashes and checkpoints stay, so the log still verifies and those
// draws verify as "eliminado" (docs/verificacao.md).
func cmdLogEliminar(args []string) int {
	fs := flag.NewFlagSet("log-eliminar", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	cidadao := fs.String("cidadao", "", "citizen (counsellor) id: blank every record that names it")
	eventID := fs.String("event-id", "", "blank the record of this draw")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitUsage
	}
	if fs.NArg() > 0 || (*cidadao == "") == (*eventID == "") {
		fmt.Fprintln(os.Stderr, "d6a log-eliminar: give exactly one of --cidadao UUID or --event-id UUID")
		return exitUsage
	}
	alvo := *cidadao + *eventID
	id, err := uuid.Parse(alvo)
	if err != nil {
		fmt.Fprintf(os.Stderr, "d6a log-eliminar: %q is not a UUID\n", alvo)
		return exitUsage
	}
	cfg, ok := loadDatabaseConfig()
	if !ok {
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	st, ok := openStore(ctx, cfg)
	if !ok {
		return exitUsage
	}
	defer st.Close()
	if *eventID != "" {
		feito, err := transparencia.Eliminar(ctx, st.Pool, id)
		switch {
		case errors.Is(err, transparencia.ErrNaoEncontrado):
			fmt.Fprintf(os.Stderr, "d6a log-eliminar: no draw %s in the log\n", id)
			return exitUsage
		case err != nil:
			fail(err)
			return 1
		case !feito:
			fmt.Printf("já eliminado: %s\n", id)
		default:
			fmt.Printf("eliminado: %s\n", id)
		}
		return 0
	}
	ids, err := transparencia.EliminarCidadao(ctx, st.Pool, id)
	if err != nil {
		fail(err)
		return 1
	}
	for _, e := range ids {
		fmt.Printf("eliminado: %s\n", e)
	}
	fmt.Printf("registros eliminados: %d\n", len(ids))
	return 0
}
