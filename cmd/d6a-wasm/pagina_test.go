package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/replay"
	"github.com/formigueiro/d6a/internal/tiles"
)

// bundles cuts regs into entry bundles of tiles.Width, as the log serves
// them; the records at the indices in eliminados are empty entries.
func bundles(t *testing.T, regs []registro.Registravel, eliminados ...int) [][]byte {
	t.Helper()
	var out [][]byte
	for i, r := range regs {
		if i%tiles.Width == 0 {
			out = append(out, nil)
		}
		b, err := r.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(eliminados, i) {
			b = nil
		}
		if out[len(out)-1], err = tiles.AppendEntry(out[len(out)-1], b); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// reproduzirPagina runs regs through the page's replay, a bundle at a time.
func reproduzirPagina(t *testing.T, regs []registro.Registravel, conselheiro, demanda string, eliminados ...int) resultadoPagina {
	t.Helper()
	p, err := novoReplayPagina(conselheiro, demanda)
	if err != nil {
		t.Fatal(err)
	}
	for k, b := range bundles(t, regs, eliminados...) {
		w := min(tiles.Width, len(regs)-k*tiles.Width)
		var hashes []byte
		for i := k * tiles.Width; i < k*tiles.Width+w; i++ {
			r, _ := regs[i].Bytes()
			h := tlog.RecordHash(r)
			hashes = append(hashes, h[:]...)
		}
		raiz, err := p.aplicarTile(b, hashes, int64(k), w)
		if err != nil {
			t.Fatal(err)
		}
		// A full tile's root is the perfect subtree of its leaves.
		if w == tiles.Width {
			hs, _ := tiles.ReadHashes(hashes, w)
			var guardados []tlog.Hash
			ler := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
				out := make([]tlog.Hash, len(idx))
				for j, x := range idx {
					out[j] = guardados[x]
				}
				return out, nil
			})
			for n, h := range hs {
				novos, err := tlog.StoredHashesForRecordHash(int64(n), h, ler)
				if err != nil {
					t.Fatal(err)
				}
				guardados = append(guardados, novos...)
			}
			ct, err := tlog.TreeHash(int64(w), ler)
			if err != nil || !bytes.Equal(raiz, ct[:]) {
				t.Fatalf("tile %d: root %x, want %x (%v)", k, raiz, ct, err)
			}
		} else if raiz != nil {
			t.Fatalf("partial tile %d: root %x", k, raiz)
		}
	}
	return p.fechar()
}

// The page's replay is replay.Replay fed from bundles: on an honest
// history of full and partial bundles, with an eliminated draw, it finds
// what the Go replay fed record by record finds (nothing) over the same
// decisions; with a counsellor removed from one draw's list, it names that
// record and that counsellor, and the counsellor's own check marks that
// decision "deixado" and no other.
func TestReplayPaginaEOdoCLI(t *testing.T) {
	regs := historico.HistoriaSintetica("wasm", 40)
	if len(regs) <= tiles.Width {
		t.Fatalf("want more than one bundle, have %d records", len(regs))
	}
	var sorteios []int
	for i, r := range regs {
		if _, ok := r.(registro.Registro); ok {
			sorteios = append(sorteios, i)
		}
	}
	eliminado := sorteios[3]
	cli := replay.Novo(uuid.Nil)
	cli.SemBarramento()
	for i, r := range regs {
		if i != eliminado {
			cli.Aplicar(int64(i), r)
		}
	}
	cli.Fechar()
	res := reproduzirPagina(t, regs, "", "", eliminado)
	if len(res.Divergencias) != 0 || len(cli.Divergencias) != 0 || res.Decisoes != cli.Decisoes || res.Decisoes < int64(len(sorteios)-1) {
		t.Fatalf("honest history: page %d decisions %+v, CLI %d decisions %v", res.Decisoes, res.Divergencias, cli.Decisoes, cli.Divergencias)
	}

	i := slices.IndexFunc(regs, func(r registro.Registravel) bool {
		s, ok := r.(registro.Registro)
		return ok && len(s.ElegiveisEntrada) >= 2
	})
	if i < 0 {
		t.Fatal("no draw among two")
	}
	orig := regs[i].(registro.Registro)
	fora := orig.ElegiveisEntrada[0]
	if fora == orig.ConselheiroID.String() {
		fora = orig.ElegiveisEntrada[1]
	}
	rig := slices.Clone(regs)
	sem := orig
	sem.ElegiveisEntrada = slices.DeleteFunc(slices.Clone(orig.ElegiveisEntrada), func(id string) bool { return id == fora })
	rig[i] = sem
	res = reproduzirPagina(t, rig, fora, "")
	if len(res.Divergencias) == 0 || res.Divergencias[0].Indice != int64(i) || res.Divergencias[0].Conselheiro != fora {
		t.Errorf("rigged list: %+v, want record %d naming %s first", res.Divergencias, i, fora)
	}
	var deixados []int64
	for _, l := range res.Linha {
		if l.Estado == "deixado" {
			deixados = append(deixados, l.Indice)
		}
	}
	if !res.Conhecido || !slices.Equal(deixados, []int64{int64(i)}) {
		t.Errorf("rigged list, %s's check: known %v, left out of %v, want [%d]", fora, res.Conhecido, deixados, i)
	}
	if _, err := novoReplayPagina("não é um uuid", ""); err == nil {
		t.Error("a malformed counsellor id was taken")
	}
}

// A record checked by itself is `verify --url --event-id`'s check: a
// draw's recomputation and registro.ConferirRegistravel. A swapped winner
// is a failure, and the draw recomputed names the real one.
func TestConferirRegistroPagina(t *testing.T) {
	bom := historico.RegistroSintetico("wasm", 7)
	b, err := bom.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	c := conferirRegistro(b, nil)
	if c.Tipo != "sorteio" || c.Erro != "" || c.Sorteio == nil || c.Sorteio.Selecionado != bom.ConselheiroID.String() || c.Sorteio.Seed != bom.Seed {
		t.Fatalf("good draw: %+v", c)
	}
	trocado := strings.Replace(string(b), `"conselheiro_id":"`+bom.ConselheiroID.String(), `"conselheiro_id":"`+bom.Ordenados[1], 1)
	c = conferirRegistro([]byte(trocado), nil)
	if c.Erro == "" || c.Sorteio == nil || c.Sorteio.Selecionado != bom.ConselheiroID.String() {
		t.Errorf("swapped winner: %+v", c)
	}
	if c = conferirRegistro([]byte(`{"tipo":`), nil); c.Erro == "" || c.Tipo != "" {
		t.Errorf("not JSON: %+v", c)
	}
}

// TestCossinadoNaPagina: the page holds a recorded cosigned checkpoint to
// the log's own root at its size, as the CLI's walk does
// (verificar/log's TestCossinadoDeOutraArvore): the honest log replays, a
// witness's cosignature of another tree of that size fails at its record.
func TestCossinadoNaPagina(t *testing.T) {
	h, err := historico.NovaCossinada(10)
	if err != nil {
		t.Fatal(err)
	}
	aplicar := func(raiz tlog.Hash) error {
		t.Helper()
		cs, err := h.Cossinar(6, raiz)
		if err != nil {
			t.Fatal(err)
		}
		regs := append(append([]registro.Registravel(nil), h.Registros...), cs)
		var hashes []byte
		for _, r := range regs {
			b, _ := r.Bytes()
			f := tlog.RecordHash(b)
			hashes = append(hashes, f[:]...)
		}
		p, err := novoReplayPagina("", "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.aplicarTile(bundles(t, regs)[0], hashes, 0, len(regs))
		return err
	}
	honesta, err := historico.Raiz(h.Folhas[:6])
	if err != nil {
		t.Fatal(err)
	}
	if err := aplicar(honesta); err != nil {
		t.Fatalf("honest log: %v", err)
	}
	outra, err := historico.Raiz(append(append([]tlog.Hash(nil), h.Folhas[:5]...), tlog.RecordHash([]byte("another record"))))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("registro %d: registro.hash", len(h.Registros))
	if err := aplicar(outra); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("a cosignature of another tree: %v; want %q…", err, want)
	}
}
