package httpapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// Issue 50 item 4: a partial tile of a full tile that exists is cut from
// the full one, byte for byte what the database would give, so walking
// every width of old partial tiles costs one read per full tile; only the
// tree's edge is read for itself.
func TestTilesParciaisCortadosDoCheio(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := pgtest.New(t)
	skey, _, err := transparencia.GerarChave(registro.OrigemPadrao)
	if err != nil {
		t.Fatal(err)
	}
	chave, _ := transparencia.NovaChave(skey)
	regs := make([]registro.Registro, 300)
	for i := range regs {
		regs[i] = historico.RegistroSintetico("tiles", i)
	}
	if err := base.InTx(ctx, func(tx store.Tx) error { return transparencia.Anexar(ctx, tx.ParaOLog(), regs) }); err != nil {
		t.Fatal(err)
	}
	if _, err := transparencia.Assinar(ctx, base.Pool, chave, registro.OrigemPadrao); err != nil {
		t.Fatal(err)
	}
	var consultas contaConsultas
	publico := poolContado(t, base, ConexoesPublicas, &consultas)
	app, err := New(Options{Config: config.Config{JWTSecret: segredo}, Store: base, Publico: publico})
	if err != nil {
		t.Fatal(err)
	}
	pedir := func(caminho string, gz bool) (int, []byte, string) {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, RotaTransparencia+"/"+caminho, nil)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		res, err := app.Test(req, 10_000)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.Header.Get("Content-Encoding") == "gzip" {
			z, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			b, _ = io.ReadAll(z)
		}
		return res.StatusCode, b, res.Header.Get("Cache-Control")
	}

	// What the database gives for partial tiles, before any full tile is
	// in memory (a fresh app per read).
	direto := func(caminho string) []byte {
		app2, err := New(Options{Config: config.Config{JWTSecret: segredo}, Store: base})
		if err != nil {
			t.Fatal(err)
		}
		res, err := app2.Test(httptest.NewRequest(http.MethodGet, RotaTransparencia+"/"+caminho, nil), 10_000)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("%s: %v %v", caminho, res.StatusCode, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return b
	}
	esperadoHash, esperadoBundle := direto("tile/0/000.p/10"), direto("tile/entries/000.p/10")

	s, cheio, _ := pedir("tile/0/000", false)
	if s != 200 || len(cheio) != 256*32 {
		t.Fatalf("full tile: %d, %d bytes", s, len(cheio))
	}
	if s, _, _ := pedir("tile/entries/000", false); s != 200 {
		t.Fatalf("full bundle: %d", s)
	}
	antes, _ := consultas.ler()
	n := 0
	for w := 1; w < 256; w += 3 {
		n += 2
		for _, p := range []string{fmt.Sprintf("tile/0/000.p/%d", w), fmt.Sprintf("tile/entries/000.p/%d", w)} {
			if s, _, cc := pedir(p, w%2 == 0); s != 200 || cc != cacheParcial {
				t.Fatalf("%s: %d %q", p, s, cc)
			}
		}
	}
	if depois, _ := consultas.ler(); depois != antes {
		t.Errorf("%d partial tiles of full tiles in memory ran %d queries, want 0", n, depois-antes)
	}
	if _, b, _ := pedir("tile/0/000.p/10", false); !bytes.Equal(b, esperadoHash) || !bytes.Equal(b, cheio[:320]) {
		t.Error("partial hash tile cut from the full one differs from the database's")
	}
	for _, gz := range []bool{false, true} {
		if _, b, _ := pedir("tile/entries/000.p/10", gz); !bytes.Equal(b, esperadoBundle) {
			t.Errorf("partial bundle (gzip %v) cut from the full one differs from the database's", gz)
		}
	}
	// The edge (300 = 256 + 44) is read for itself; beyond it, 404.
	if s, _, _ := pedir("tile/entries/001.p/44", false); s != 200 {
		t.Errorf("edge bundle: %d", s)
	}
	if s, _, _ := pedir("tile/entries/001.p/45", false); s != 404 {
		t.Errorf("beyond the edge: %d", s)
	}
}
