package log

import (
	"bytes"
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
	// were fetched now (the rest, full tiles already there, change only
	// by an erasure). Reescritos is how many kept bundles were fetched
	// again because a new d6a.eliminacao record names one of their
	// records.
	Tiles, Copiados, Reescritos int
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
// An eliminated record (spec 2.2) rewrites its bundle, and the log says
// so with a d6a.eliminacao record of the indices blanked (CONTRACT §7
// "Erasure is a record"): the bundles of the records after the mirror's
// previous checkpoint are read for such records, and every bundle they
// name is fetched again, its stale partial widths removed, before the
// new checkpoint is written (so an interrupted run reads them again).
func (c *Cliente) Espelhar(ctx context.Context, dir string, progresso func(feitos, total int64)) (Espelho, error) {
	cp, nota, err := c.Checkpoint(ctx)
	if err != nil {
		return Espelho{}, err
	}
	raiz := filepath.Join(dir, "d6a", "transparencia")
	// The records after the previous copy's checkpoint are the ones whose
	// erasure records are new to this mirror.
	var desde int64
	if b, err := os.ReadFile(filepath.Join(raiz, "checkpoint")); err == nil {
		if antes, err := c.abrir(ctx, b); err == nil && antes.Tamanho <= cp.Tamanho {
			desde = antes.Tamanho
		}
	}
	var (
		muApagar sync.Mutex
		apagar   = map[int64]bool{} // bundles to fetch again
		buscados = map[int64]bool{} // bundles fetched now
	)
	ler := func(t tlog.Tile, b []byte, buscado bool) {
		if t.L != tiles.Entries || (t.N+1)*tiles.Width <= desde {
			return
		}
		muApagar.Lock()
		defer muApagar.Unlock()
		if buscado {
			buscados[t.N] = true
		}
		es, err := tiles.ReadBundle(b, t.W)
		if err != nil {
			return
		}
		for _, e := range es {
			if !bytes.HasPrefix(e, []byte(`{"tipo":"`+registro.TipoEliminacao+`"`)) {
				continue
			}
			if f, err := c.lerRegistravel(e); err == nil {
				for _, i := range f.(registro.Eliminacao).Indices {
					apagar[i/tiles.Width] = true
				}
			}
		}
	}
	total := tiles.Count(cp.Tamanho)
	e := Espelho{Checkpoint: cp, Tiles: int(total)}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type tarefa struct {
		t   tlog.Tile
		vez int64
	}
	trabalho := make(chan tarefa)
	var (
		mu       sync.Mutex
		primeiro error
		feitos   int64
		copiados int
		wg       sync.WaitGroup
		// The tiles in flight share a budget; the oldest not yet written
		// always goes on (orcamento): vez is its turn, prontos the turns
		// after it already written.
		orc     = novoOrcamento(OrcamentoTiles)
		vez     int64
		prontos = map[int64]bool{}
	)
	pronto := func(v int64) {
		prontos[v] = true
		for prontos[vez] {
			delete(prontos, vez)
			vez++
		}
		orc.avancar(vez)
	}
	for range max(TilesEmVoo, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for tf := range trabalho {
				b, n, err := c.tile(ctx, tf.t, orc.reserva(ctx, tf.vez))
				if err == nil {
					ler(tf.t, b, true)
					err = gravar(filepath.Join(raiz, filepath.FromSlash(tiles.Path(tf.t))), b)
				}
				b = nil
				orc.liberar(n)
				mu.Lock()
				if err != nil && primeiro == nil {
					primeiro = err
					cancel()
				}
				feitos++
				copiados++
				pronto(tf.vez)
				if progresso != nil {
					progresso(feitos, total)
				}
				mu.Unlock()
			}
		}()
	}
	// The tiles one by one (tiles.All): full ones already in dir are
	// kept, they never change.
	var v int64
	for t := range tiles.All(cp.Tamanho) {
		if ctx.Err() != nil {
			break
		}
		if t.W == tiles.Width {
			arquivo := filepath.Join(raiz, filepath.FromSlash(tiles.Path(t)))
			if _, err := os.Stat(arquivo); err == nil {
				if t.L == tiles.Entries && (t.N+1)*tiles.Width > desde {
					if b, err := os.ReadFile(arquivo); err == nil {
						ler(t, b, false)
					}
				}
				mu.Lock()
				feitos++
				pronto(v)
				mu.Unlock()
				v++
				continue
			}
		}
		select {
		case trabalho <- tarefa{t, v}:
		case <-ctx.Done():
		}
		v++
	}
	close(trabalho)
	wg.Wait()
	if primeiro != nil {
		return e, primeiro
	}
	if err := ctx.Err(); err != nil {
		return e, err
	}
	e.Copiados = copiados
	// The bundles an erasure names: fetched again unless fetched now, and
	// their older partial widths (kept from earlier copies) removed.
	for n := range apagar {
		t := tiles.Bundle(n, tiles.Width)
		if !tiles.In(t, cp.Tamanho) {
			t = tiles.Bundle(n, int(cp.Tamanho-n*tiles.Width))
		}
		if err := os.RemoveAll(filepath.Join(raiz, filepath.FromSlash(tiles.Path(tiles.Bundle(n, tiles.Width))+".p"))); err != nil {
			return e, err
		}
		if buscados[n] && t.W == tiles.Width {
			continue
		}
		b, _, err := c.tile(ctx, t, nil)
		if err != nil {
			return e, err
		}
		if err := gravar(filepath.Join(raiz, filepath.FromSlash(tiles.Path(t))), b); err != nil {
			return e, err
		}
		e.Reescritos++
	}
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
