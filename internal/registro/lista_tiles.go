package registro

import (
	"fmt"

	"github.com/google/uuid"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/tiles"
)

// MaxPartes bounds how many list records a draw may claim: 10,000 parts
// of 1,500 ids is 15 million counsellors, far past a country.
const MaxPartes = 10_000

// ListaPorTiles reads the list records of the draw carried apart at
// indice (Partir: right before it) from the level-0 tiles and the entry
// bundles of tree, each leaf hash checked against tree's signed root
// (tlog.TileHashReader), so one draw is checked in full with no walk of
// the log: `d6a verify --url --event-id` and the page's single-record
// check both read it so. The last part (at indice-1) says how many there
// are. tr serves the hash tiles and the bundles (tiles.Bundle) of tree;
// a part eliminated is ErrListaEliminada.
func ListaPorTiles(tree tlog.Tree, indice int64, eventID uuid.UUID, tr tlog.TileReader) ([]ListaSorteio, error) {
	if indice < 1 || indice > tree.N {
		return nil, NovaFalha("registro.elegiveis_entrada", "[]", "the list, in the d6a.lista_sorteio records right before the draw")
	}
	hashes := tlog.TileHashReader(tree, tr)
	lerHashes := func(idx []int64) ([]tlog.Hash, error) {
		hs, err := hashes.ReadHashes(idx)
		if err != nil {
			return nil, NovaFalha("tiles", UmaLinha(err.Error()), fmt.Sprintf("tiles of the tree of size %d", tree.N))
		}
		return hs, nil
	}
	// The bundles of leaves de … ate-1, read in one call.
	lerEntradas := func(de, ate int64) (map[int64][]byte, error) {
		var ts []tlog.Tile
		for k := de / tiles.Width; de < ate && k*tiles.Width < ate; k++ {
			ts = append(ts, tiles.Bundle(k, int(min(tiles.Width, tree.N-k*tiles.Width))))
		}
		bs, err := tr.ReadTiles(ts)
		if err != nil {
			return nil, err
		}
		out := make(map[int64][]byte, ate-de)
		for i, t := range ts {
			es, err := tiles.ReadBundle(bs[i], t.W)
			if err != nil {
				return nil, NovaFalha(tiles.Path(t), UmaLinha(err.Error()), "an entry bundle")
			}
			for j, e := range es {
				if n := t.N*tiles.Width + int64(j); n >= de && n < ate {
					out[n] = e
				}
			}
		}
		return out, nil
	}
	ler := func(j int64, dados []byte, h tlog.Hash) (ListaSorteio, error) {
		campo := fmt.Sprintf("registro %d (lista do sorteio %s)", j, eventID)
		if len(dados) == 0 {
			return ListaSorteio{}, ErrListaEliminada
		}
		if tlog.RecordHash(dados) != h {
			return ListaSorteio{}, NovaFalha(campo, "an entry that does not hash to its leaf", "the leaf of the signed tree")
		}
		f, err := LerRegistravel(dados)
		if err != nil {
			return ListaSorteio{}, err
		}
		l, ok := f.(ListaSorteio)
		if !ok || l.EventIDSorteio != eventID {
			return ListaSorteio{}, NovaFalha(campo, fmt.Sprintf("%T", f), TipoListaSorteio+" of the draw (its list records come right before it)")
		}
		return l, ConferirRegistravel(l)
	}
	h, err := lerHashes([]int64{tlog.StoredHashIndex(0, indice-1)})
	if err != nil {
		return nil, err
	}
	es, err := lerEntradas(indice-1, indice)
	if err != nil {
		return nil, err
	}
	ultima, err := ler(indice-1, es[indice-1], h[0])
	if err != nil {
		return nil, err
	}
	n := ultima.Partes
	if n < 1 || n > MaxPartes || n > indice || ultima.Parte != n-1 {
		return nil, NovaFalha(fmt.Sprintf("registro %d: parte", indice-1), fmt.Sprintf("%d of %d", ultima.Parte, n), fmt.Sprintf("the last part, of at most %d, right before the draw", min(MaxPartes, indice)))
	}
	idx := make([]int64, n)
	for p := range n {
		idx[p] = tlog.StoredHashIndex(0, indice-n+p)
	}
	hs, err := lerHashes(idx)
	if err != nil {
		return nil, err
	}
	if es, err = lerEntradas(indice-n, indice-1); err != nil {
		return nil, err
	}
	partes := make([]ListaSorteio, n)
	partes[n-1] = ultima
	for p := range n - 1 {
		j := indice - n + p
		if partes[p], err = ler(j, es[j], hs[p]); err != nil {
			return nil, err
		}
	}
	return partes, nil
}
