package log

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/tiles"
)

// Espelho is the outcome of Cliente.Espelhar.
type Espelho struct {
	Checkpoint registro.Checkpoint
	// Tiles is how many tiles the checkpoint's tree has, Copiados how many
	// were fetched now (the rest, full tiles already there, never change).
	Tiles, Copiados int
}

// Espelhar copies the log into dir as a static mirror (CONTRACT §7 "The
// verifier reads tiles"): dir/d6a/transparencia/ then holds what the
// service serves there that a verifier needs (the checkpoint, the
// verifier key, the summary and every tile of the checkpoint's tree), so
// any web server serving dir at its root answers as the service does,
// and `d6a verify --url dir` reads it from disk. Full tiles already in
// dir are kept (they never change); every file is written to a temporary
// name and renamed, and the checkpoint last, so a mirror interrupted
// halfway still verifies at its previous checkpoint.
//
// An eliminated record (spec 2.2) rewrites its bundle: a full bundle kept
// from an earlier copy still holds it until the file is removed and the
// mirror run again (docs/verificacao.md).
func (c *Cliente) Espelhar(ctx context.Context, dir string, progresso func(feitos, total int64)) (Espelho, error) {
	cp, nota, err := c.Checkpoint(ctx)
	if err != nil {
		return Espelho{}, err
	}
	raiz := filepath.Join(dir, "d6a", "transparencia")
	ts := tiles.ForSize(cp.Tamanho)
	e := Espelho{Checkpoint: cp, Tiles: len(ts)}
	var faltam []tlog.Tile
	for _, t := range ts {
		if t.W == tiles.Width {
			if _, err := os.Stat(filepath.Join(raiz, filepath.FromSlash(tiles.Path(t)))); err == nil {
				continue
			}
		}
		faltam = append(faltam, t)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	trabalho := make(chan tlog.Tile)
	var (
		mu       sync.Mutex
		primeiro error
		feitos   int64
		wg       sync.WaitGroup
	)
	for range max(TilesEmVoo, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range trabalho {
				b, err := c.tile(ctx, t)
				if err == nil {
					err = gravar(filepath.Join(raiz, filepath.FromSlash(tiles.Path(t))), b)
				}
				mu.Lock()
				if err != nil && primeiro == nil {
					primeiro = err
					cancel()
				}
				feitos++
				if progresso != nil {
					progresso(feitos, int64(len(faltam)))
				}
				mu.Unlock()
			}
		}()
	}
	for _, t := range faltam {
		select {
		case trabalho <- t:
		case <-ctx.Done():
		}
	}
	close(trabalho)
	wg.Wait()
	if primeiro != nil {
		return e, primeiro
	}
	if err := ctx.Err(); err != nil {
		return e, err
	}
	e.Copiados = len(faltam)
	// The key and the summary are conveniences of the mirror (a reader
	// should pin the key with --chave); a log that serves none still
	// mirrors.
	for _, p := range []string{"chave", "resumo"} {
		b, err := c.get(ctx, "/"+p)
		var h *ErrHTTP
		if errors.As(err, &h) {
			continue
		}
		if err != nil {
			return e, err
		}
		if err := gravar(filepath.Join(raiz, p), b); err != nil {
			return e, err
		}
	}
	return e, gravar(filepath.Join(raiz, "checkpoint"), nota)
}

// gravar writes arquivo atomically (a temporary file synced, then
// renamed over it), readable by a web server, making its directory.
func gravar(arquivo string, dados []byte) error {
	if err := os.MkdirAll(filepath.Dir(arquivo), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(arquivo), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(dados)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), arquivo)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
