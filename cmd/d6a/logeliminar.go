package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/eliminacao"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// cmdLogEliminar is `d6a log-eliminar --cidadao UUID | --event-id UUID`:
// the elimination of spec 2.2 / N-0d applied to the transparency log. It
// blanks the records (every record naming the citizen, or one draw's);
// leaf hashes and checkpoints stay, so the log still verifies and those
// draws verify as "eliminado" (docs/verificacao.md). In the same
// transaction it appends and signs a d6a.eliminacao record of the indices
// blanked, which mirrors and monitors follow, and sets the fairness
// statistics to fold again without them (internal/eliminacao).
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
	chave, err := chaveDoLog(cfg)
	if err != nil {
		fail(err)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	st, ok := openStore(ctx, cfg)
	if !ok {
		return exitUsage
	}
	defer st.Close()
	a := eliminacao.Assinador{Chave: chave, Origem: cfg.LogOrigin}
	var res eliminacao.Resultado
	if *eventID != "" {
		res, err = eliminacao.Sorteio(ctx, st, a, id)
		if errors.Is(err, transparencia.ErrNaoEncontrado) {
			fmt.Fprintf(os.Stderr, "d6a log-eliminar: no draw %s in the log\n", id)
			return exitUsage
		}
	} else {
		res, err = eliminacao.Cidadao(ctx, st, a, id)
	}
	if err != nil {
		fail(err)
		return 1
	}
	if *eventID != "" && len(res.Apagados) == 0 {
		fmt.Printf("já eliminado: %s\n", id)
		return 0
	}
	for _, e := range res.Apagados {
		fmt.Printf("eliminado: %s (registro %d)\n", e.EventIDSorteio, e.Indice)
	}
	fmt.Printf("registros eliminados: %d\n", len(res.Apagados))
	if len(res.Apagados) > 0 {
		fmt.Printf("registro d6a.eliminacao: %s (espelhos e monitores apagam os mesmos índices; purgue os bundles do CDN: docs/operacao.md)\n", res.Registro.EventID)
	}
	return 0
}

// chaveDoLog is the key the service signs checkpoints with: the file of
// D6A_LOG_KEY_FILE, else the development key `d6a serve` keeps under
// D6A_DATA_DIR. Never a new one: a checkpoint under another key would
// not verify against the one published.
func chaveDoLog(cfg config.Config) (transparencia.Chave, error) {
	arquivo, nome := cfg.LogKeyFile, "D6A_LOG_KEY_FILE"
	if arquivo == "" {
		arquivo, nome = filepath.Join(cfg.DataDir, transparencia.ArquivoChaveDev), "D6A_DATA_DIR"
	}
	c, err := transparencia.CarregarChave(arquivo)
	if err != nil {
		return c, fmt.Errorf("%s: the log's signing key: %w", nome, err)
	}
	if c.Signer.Name() != cfg.LogOrigin {
		return c, fmt.Errorf("%s: key name %q differs from D6A_LOG_ORIGIN %q", nome, c.Signer.Name(), cfg.LogOrigin)
	}
	return c, nil
}
