package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/formigueiro/d6a/internal/tiles"
)

// The flood's tiles are exactly the partial tiles C2SP serves for the
// tree, so every one it asks for exists (d6a answers 200, not 404).
func TestTilesParciais(t *testing.T) {
	for _, n := range []int64{1, 255, 256, 257, 1000, 65536, 65537, 70000, 16777216 + 3} {
		var want []string
		for tl := range tiles.All(n) {
			if tl.W < tiles.Width {
				want = append(want, prefixoTransparencia+tiles.Path(tl))
			}
		}
		got := tilesParciais(n)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("n=%d: %q, want %q", n, got, want)
		}
		for _, p := range got {
			tl, err := tiles.ParsePath(strings.TrimPrefix(p, prefixoTransparencia))
			if err != nil || !tiles.In(tl, n) {
				t.Errorf("n=%d: %s is not a tile of the tree (%v)", n, p, err)
			}
		}
	}
	if got := tilesParciais(1000); !slices.Equal(got, []string{
		"/d6a/transparencia/tile/0/003.p/232", "/d6a/transparencia/tile/1/000.p/3", "/d6a/transparencia/tile/entries/003.p/232"}) {
		t.Errorf("n=1000: %q", got)
	}
	if got := tilesParciais(0); len(got) != 0 {
		t.Errorf("n=0: %q", got)
	}
}

func TestTamanhoCheckpoint(t *testing.T) {
	nota := "d6a.example/transparencia\n1234\nq2Ld0lNA2Z3rWwZlZ4n3K1y0P0QPQ1NYt6y6Yq2p8uA=\n\n— d6a.example/transparencia AAAA\n"
	if n, ok := tamanhoCheckpoint(nota); !ok || n != 1234 {
		t.Errorf("size %d, %v; want 1234", n, ok)
	}
	for _, s := range []string{"", "origin\n", "origin\n-1\n", "origin\nx\n"} {
		if n, ok := tamanhoCheckpoint(s); ok {
			t.Errorf("%q: size %d accepted", s, n)
		}
	}
}

// Each round's ratio pairs its two bursts, whichever ran first, and the
// sum over the rounds weighs each burst by its results.
func TestRazoesDaInundacao(t *testing.T) {
	b := func(rodada int, flood bool, n int, d time.Duration) rajada {
		return rajada{Rodada: rodada, Flood: flood, P: passe{M: n, Recebidos: n, Espera: time.Second, Duracao: time.Second + d}}
	}
	rs := []rajada{b(1, false, 1001, 2*time.Second), b(1, true, 1001, 4*time.Second), b(2, true, 1001, time.Second), b(2, false, 1001, time.Second)}
	if got := razoesPorRodada(rs); got != "0.50×, 1.00×" {
		t.Errorf("per round: %s", got)
	}
	if s, f := somaInundacao(rs, false), somaInundacao(rs, true); s != 2000.0/3 || f != 2000.0/5 {
		t.Errorf("alone %v, flooded %v", s, f)
	}
}
