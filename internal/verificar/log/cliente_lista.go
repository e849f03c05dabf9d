package log

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/tiles"
)

// MaxPartes bounds how many list records a draw may claim: 10,000 parts
// of 1,500 ids is 15 million counsellors, far past a country.
const MaxPartes = 10_000

// listaDoSorteio reads the list records of the draw carried apart at
// indice (registro.Partir: right before it) from the level-0 tiles and
// the entry bundles of cp's tree, each leaf hash checked against cp's
// signed root (tlog.TileHashReader), so `--event-id` checks the full
// list with no walk of the log. The last part (at indice-1) says how many
// there are.
func (c *Cliente) listaDoSorteio(ctx context.Context, cp registro.Checkpoint, indice int64, eventID uuid.UUID) ([]registro.ListaSorteio, error) {
	hashes := tlog.TileHashReader(tlog.Tree{N: cp.Tamanho, Hash: cp.Raiz}, leitorTiles{ctx, c})
	bundles := map[int64][][]byte{}
	folha := func(j int64) ([]byte, error) {
		k := j / tiles.Width
		es, ok := bundles[k]
		if !ok {
			w := int(min(tiles.Width, cp.Tamanho-k*tiles.Width))
			b, _, err := c.tile(ctx, tiles.Bundle(k, w), nil)
			if err != nil {
				return nil, err
			}
			if es, err = tiles.ReadBundle(b, w); err != nil {
				return nil, registro.NovaFalha(tiles.Path(tiles.Bundle(k, w)), registro.UmaLinha(err.Error()), "an entry bundle")
			}
			bundles[k] = es
		}
		return es[j%tiles.Width], nil
	}
	ler := func(j int64, h tlog.Hash) (registro.ListaSorteio, error) {
		campo := fmt.Sprintf("registro %d (lista do sorteio %s)", j, eventID)
		dados, err := folha(j)
		if err != nil {
			return registro.ListaSorteio{}, err
		}
		if len(dados) == 0 {
			return registro.ListaSorteio{}, registro.ErrListaEliminada
		}
		if tlog.RecordHash(dados) != h {
			return registro.ListaSorteio{}, registro.NovaFalha(campo, "an entry that does not hash to its leaf", "the leaf of the signed tree")
		}
		f, err := registro.LerRegistravel(dados)
		if err != nil {
			return registro.ListaSorteio{}, err
		}
		l, ok := f.(registro.ListaSorteio)
		if !ok || l.EventIDSorteio != eventID {
			return registro.ListaSorteio{}, registro.NovaFalha(campo, fmt.Sprintf("%T", f), registro.TipoListaSorteio+" of the draw (its list records come right before it)")
		}
		return l, registro.ConferirRegistravel(l)
	}
	if indice < 1 || indice > cp.Tamanho {
		return nil, registro.NovaFalha("registro.elegiveis_entrada", "[]", "the list, in the d6a.lista_sorteio records right before the draw")
	}
	h, err := hashes.ReadHashes([]int64{tlog.StoredHashIndex(0, indice-1)})
	if err != nil {
		return nil, registro.NovaFalha("tiles", registro.UmaLinha(err.Error()), fmt.Sprintf("tiles of the tree of size %d", cp.Tamanho))
	}
	ultima, err := ler(indice-1, h[0])
	if err != nil {
		return nil, err
	}
	n := ultima.Partes
	if n < 1 || n > MaxPartes || n > indice || ultima.Parte != n-1 {
		return nil, registro.NovaFalha(fmt.Sprintf("registro %d: parte", indice-1), fmt.Sprintf("%d of %d", ultima.Parte, n), fmt.Sprintf("the last part, of at most %d, right before the draw", min(MaxPartes, indice)))
	}
	idx := make([]int64, n)
	for p := range n {
		idx[p] = tlog.StoredHashIndex(0, indice-n+p)
	}
	hs, err := hashes.ReadHashes(idx)
	if err != nil {
		return nil, registro.NovaFalha("tiles", registro.UmaLinha(err.Error()), fmt.Sprintf("tiles of the tree of size %d", cp.Tamanho))
	}
	partes := make([]registro.ListaSorteio, n)
	partes[n-1] = ultima
	for p := range n - 1 {
		if partes[p], err = ler(indice-n+p, hs[p]); err != nil {
			return nil, err
		}
	}
	return partes, nil
}
