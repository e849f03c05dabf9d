package main

import (
	"encoding/base64"
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/tiles"
)

// A long draw checked by itself on the page, as `--event-id` checks it:
// its d6a.lista_sorteio records, right before it and across two entry
// bundles, are read from the tiles of the signed tree (each leaf proved
// against its root), joined, and the draw recomputed in full; the page
// fetches what Precisa names, in a few rounds. A part with an id swapped
// fails; a part eliminated leaves the draw checked without its list.
func TestConferirRegistroPaginaLongo(t *testing.T) {
	longo := sorteioLongo(t, 5000)
	var regs []registro.Registravel
	for _, r := range historico.Registros("wasm-longo", 0, 254) {
		regs = append(regs, r)
	}
	regs = append(regs, registro.Partir(longo)...) // parts at 254 … 257, the draw at 258
	for _, r := range historico.Registros("wasm-longo", 254, 300) {
		regs = append(regs, r)
	}
	const indice = 258
	if _, ok := regs[indice].(registro.Registro); !ok {
		t.Fatalf("record %d is a %T", indice, regs[indice])
	}
	conferir := func(regs []registro.Registravel, eliminados ...int) (conferidoPagina, int) {
		t.Helper()
		n, raiz, servidos := arvore(t, regs, eliminados...)
		a := &arvorePagina{Tamanho: n, Raiz: base64.StdEncoding.EncodeToString(raiz[:]), Indice: indice, Tiles: map[string][]byte{}}
		b, _ := regs[indice].Bytes()
		for voltas := 0; ; voltas++ {
			c := conferirRegistro(b, a)
			if len(c.Precisa) == 0 {
				return c, voltas
			}
			if voltas > 5 {
				t.Fatalf("still fetching after %d rounds: %v", voltas, c.Precisa)
			}
			for _, p := range c.Precisa {
				d, ok := servidos[p]
				if !ok {
					t.Fatalf("asks for %s, not a tile of the tree of %d", p, n)
				}
				a.Tiles[p] = d
			}
		}
	}

	c, voltas := conferir(regs)
	if c.Erro != "" || c.ErroSorteio != "" || c.Sorteio == nil || c.Sorteio.Selecionado != longo.ConselheiroID.String() ||
		c.Sorteio.ListaHash != longo.ListaElegiveisHash || len(c.Sorteio.Entrada) != 5000 {
		t.Fatalf("long draw: %+v", c)
	}
	if c.Lista == nil || c.Lista.Partes != 4 || c.Lista.De != 254 || c.Lista.Ids != 5000 || c.Lista.Eliminada {
		t.Fatalf("long draw's list: %+v", c.Lista)
	}
	t.Logf("checked in %d rounds of fetches", voltas)

	rig := slices.Clone(regs)
	p := rig[255].(registro.ListaSorteio)
	p.Elegiveis = slices.Clone(p.Elegiveis)
	p.Elegiveis[3] = uuid.NewSHA1(uuid.NameSpaceOID, []byte("intruso")).String()
	slices.Sort(p.Elegiveis)
	rig[255] = p
	if c, _ = conferir(rig); c.Erro == "" {
		t.Errorf("a part with an id swapped: %+v", c)
	}

	if c, _ = conferir(regs, 256); c.Lista == nil || !c.Lista.Eliminada || c.Sorteio != nil {
		t.Errorf("a part eliminated: %+v", c)
	}

	// Without the tree the page cannot read the list: a failure, never a
	// pass.
	b, _ := regs[indice].Bytes()
	if c = conferirRegistro(b, nil); c.Erro == "" || c.Sorteio != nil {
		t.Errorf("no tree: %+v", c)
	}
}

// arvore is the tree of regs and every tile C2SP serves for it, by path;
// the records at eliminados are empty entries, their leaves kept.
func arvore(t *testing.T, regs []registro.Registravel, eliminados ...int) (int64, tlog.Hash, map[string][]byte) {
	t.Helper()
	var guardados []tlog.Hash
	ler := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for j, x := range idx {
			out[j] = guardados[x]
		}
		return out, nil
	})
	entradas := make([][]byte, len(regs))
	for i, r := range regs {
		b, err := r.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		novos, err := tlog.StoredHashes(int64(i), b, ler)
		if err != nil {
			t.Fatal(err)
		}
		guardados = append(guardados, novos...)
		if !slices.Contains(eliminados, i) {
			entradas[i] = b
		}
	}
	n := int64(len(regs))
	raiz, err := tlog.TreeHash(n, ler)
	if err != nil {
		t.Fatal(err)
	}
	servidos := map[string][]byte{}
	for tl := range tiles.All(n) {
		var d []byte
		if tl.L == tiles.Entries {
			for _, e := range entradas[tl.N*tiles.Width : tl.N*tiles.Width+int64(tl.W)] {
				if d, err = tiles.AppendEntry(d, e); err != nil {
					t.Fatal(err)
				}
			}
		} else if d, err = tlog.ReadTileData(tl, ler); err != nil {
			t.Fatal(err)
		}
		servidos[tiles.Path(tl)] = d
	}
	return n, raiz, servidos
}

// sorteioLongo is a draw among n counsellors of their own.
func sorteioLongo(t *testing.T, n int) registro.Registro {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "wasm-longo/conselheiro/%d", i)).String()
	}
	slices.Sort(ids)
	base := uuid.NewSHA1(uuid.NameSpaceOID, []byte("wasm-longo/base")).String()
	ts := "2026-12-01T00:00:00.000Z"
	res, err := sorteio.Sortear(base, ts, ids)
	if err != nil {
		t.Fatal(err)
	}
	uc := uuid.NewSHA1(uuid.NameSpaceOID, []byte("wasm-longo/uc"))
	seq := int64(1000)
	r, err := registro.NovoRegistro(uuid.NewSHA1(uuid.NameSpaceOID, []byte("wasm-longo/evento")), uuid.NewSHA1(uuid.NameSpaceOID, []byte("wasm-longo/demanda")),
		uc, base, &seq, ts, res, uc, []uuid.UUID{uc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
