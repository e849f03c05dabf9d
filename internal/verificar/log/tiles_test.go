package log_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/tiles"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// obter GETs a path under the log's prefix with the given Accept-Encoding
// (empty: none), undoing nothing: the body as served.
func obter(t *testing.T, base, path, aceita string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/d6a/transparencia/"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if aceita != "" {
		req.Header.Set("Accept-Encoding", aceita)
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

// mth is RFC 6962's Merkle tree hash of leaf hashes, written from the RFC
// for the test: the reference the served tiles are held to.
func mth(hs []tlog.Hash) tlog.Hash {
	if len(hs) == 1 {
		return hs[0]
	}
	k := 1
	for k*2 < len(hs) {
		k *= 2
	}
	return tlog.NodeHash(mth(hs[:k]), mth(hs[k:]))
}

// leitorHTTP reads tiles over HTTP for tlog.TileHashReader.
type leitorHTTP struct {
	t    *testing.T
	base string
}

func (l leitorHTTP) Height() int { return tiles.Height }
func (l leitorHTTP) ReadTiles(ts []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(ts))
	for i, tl := range ts {
		res, b := obter(l.t, l.base, tiles.Path(tl), "")
		if res.StatusCode != 200 {
			return nil, fmt.Errorf("%s: %d", tiles.Path(tl), res.StatusCode)
		}
		out[i] = b
	}
	return out, nil
}
func (leitorHTTP) SaveTiles([]tlog.Tile, [][]byte) {}

// CONTRACT §7 "Tiles": the served tiles against the records. Every level-0
// hash is its record's leaf hash, every level-1 hash the MTH of the full
// level-0 tile below it, the root from the tiles is the checkpoint's, the
// bundles are the records byte for byte (an eliminated one empty, its leaf
// hash kept), the partial tiles of an earlier signed size still answer,
// and the headers are C2SP's.
func TestTilesContraOsRegistros(t *testing.T) {
	ctx := context.Background()
	l := novoLogPublico(t)
	l.anexarEAssinar(t, 0, 300)
	l.anexarEAssinar(t, 300, 600)
	const n = 600
	regs := historico.Registros("teste", 0, n)
	eliminado := regs[257]
	if ok, err := transparencia.Eliminar(ctx, l.st.Pool, eliminado.EventIDSorteio); len(ok) != 1 || err != nil {
		t.Fatalf("eliminate: %v %v", ok, err)
	}
	cp, _, err := l.cliente().Checkpoint(ctx)
	if err != nil || cp.Tamanho != n {
		t.Fatalf("checkpoint: %+v %v", cp, err)
	}
	folhas := make([]tlog.Hash, n)
	dados := make([][]byte, n)
	for i, r := range regs {
		dados[i], _ = r.Bytes()
		folhas[i] = tlog.RecordHash(dados[i])
	}
	nivel0 := map[int64][]tlog.Hash{}
	for _, tl := range tiles.ForSize(n) {
		res, b := obter(t, l.url, tiles.Path(tl), "")
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/octet-stream" {
			t.Fatalf("%s: %d %q", tiles.Path(tl), res.StatusCode, res.Header.Get("Content-Type"))
		}
		// A full hash tile never changes; a full bundle does when a record
		// is erased, so it is revalidatable, never immutable (CONTRACT §7).
		cc := res.Header.Get("Cache-Control")
		switch full := tl.W == tiles.Width; {
		case full && tl.L == tiles.Entries:
			etag := res.Header.Get("ETag")
			if strings.Contains(cc, "immutable") || cc != "public, max-age=300" || etag == "" {
				t.Errorf("%s: Cache-Control %q ETag %q", tiles.Path(tl), cc, etag)
			}
			if r := condicional(t, l.url, tiles.Path(tl), etag); r != 304 {
				t.Errorf("%s: If-None-Match its ETag: %d, want 304", tiles.Path(tl), r)
			}
		case full != strings.Contains(cc, "immutable") || (full && cc != "public, max-age=31536000, immutable"):
			t.Errorf("%s: Cache-Control %q", tiles.Path(tl), cc)
		}
		inicio := tl.N * tiles.Width
		switch tl.L {
		case tiles.Entries:
			es, err := tiles.ReadBundle(b, tl.W)
			if err != nil {
				t.Fatalf("%s: %v", tiles.Path(tl), err)
			}
			for i, e := range es {
				k := inicio + int64(i)
				want := dados[k]
				if k == 257 {
					want = []byte{}
				}
				if !bytes.Equal(e, want) {
					t.Errorf("bundle entry %d: %q, want %q", k, e, want)
				}
			}
		case 0:
			hs, err := tiles.ReadHashes(b, tl.W)
			if err != nil {
				t.Fatal(err)
			}
			for i, h := range hs {
				if k := inicio + int64(i); h != folhas[k] {
					t.Errorf("level-0 hash %d is not its record's leaf hash", k)
				}
			}
			nivel0[tl.N] = hs
		case 1:
			hs, err := tiles.ReadHashes(b, tl.W)
			if err != nil {
				t.Fatal(err)
			}
			if tl.W != 2 {
				t.Fatalf("level-1 tile of width %d, want 2", tl.W)
			}
			for i, h := range hs {
				if abaixo := nivel0[tl.N*tiles.Width+int64(i)]; len(abaixo) != tiles.Width || h != mth(abaixo) {
					t.Errorf("level-1 hash %d is not the MTH of the full level-0 tile below", i)
				}
			}
		default:
			t.Errorf("tile %s of a tree of %d", tiles.Path(tl), n)
		}
	}
	var todas []tlog.Hash
	for k := int64(0); k < 3; k++ {
		todas = append(todas, nivel0[k]...)
	}
	if len(todas) != n || mth(todas) != cp.Raiz {
		t.Errorf("root from the level-0 tiles differs from the checkpoint's")
	}
	raiz, err := tlog.TreeHash(n, tlog.TileHashReader(tlog.Tree{N: n, Hash: cp.Raiz}, leitorHTTP{t, l.url}))
	if err != nil || raiz != cp.Raiz {
		t.Errorf("root through tlog.TileHashReader: %v", err)
	}
	// The partial tiles of the checkpoint of size 300 (44 leaves in tile 1).
	for _, p := range []string{"tile/0/001.p/44", "tile/entries/001.p/44"} {
		res, b := obter(t, l.url, p, "")
		if res.StatusCode != 200 || res.Header.Get("Cache-Control") == "public, max-age=31536000, immutable" {
			t.Errorf("%s: %d %q", p, res.StatusCode, res.Header.Get("Cache-Control"))
		}
		if strings.HasPrefix(p, "tile/0/") {
			if hs, err := tiles.ReadHashes(b, 44); err != nil || hs[43] != folhas[299] {
				t.Errorf("%s: %v", p, err)
			}
		}
	}
	// gzip when accepted, the same bytes once decompressed.
	_, plano := obter(t, l.url, "tile/entries/000", "")
	res, z := obter(t, l.url, "tile/entries/000", "br, gzip;q=0.8")
	if res.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(res.Header.Get("Vary"), "Accept-Encoding") {
		t.Fatalf("bundle with Accept-Encoding gzip: %q %q", res.Header.Get("Content-Encoding"), res.Header.Get("Vary"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(zr); err != nil || !bytes.Equal(b, plano) || len(z) >= len(plano) {
		t.Errorf("gzip bundle: %d bytes for %d, %v", len(z), len(plano), err)
	}
	if res, _ := obter(t, l.url, "tile/entries/000", "gzip;q=0"); res.Header.Get("Content-Encoding") != "" {
		t.Errorf("gzip;q=0 answered %q", res.Header.Get("Content-Encoding"))
	}
}

// Bad tile paths answer 4xx, never 5xx: 400 when malformed, 404 beyond the
// tree (and before the first checkpoint).
func TestTilesCaminhosRuins(t *testing.T) {
	l := novoLogPublico(t)
	if res, _ := obter(t, l.url, "tile/0/000.p/1", ""); res.StatusCode != 404 {
		t.Errorf("a tile of an empty log: %d", res.StatusCode)
	}
	l.anexarEAssinar(t, 0, 300)
	casos := map[string]int{
		"tile/0/000":                          200,
		"tile/0/001.p/44":                     200,
		"tile/entries/001.p/44":               200,
		"tile/0/001.p/45":                     404,
		"tile/0/001":                          404,
		"tile/entries/001":                    404,
		"tile/0/002.p/1":                      404,
		"tile/1/000.p/1":                      200,
		"tile/1/000.p/2":                      404,
		"tile/2/000.p/1":                      404,
		"tile/5/x999/x999/x999/999":           404,
		"tile/0/x999/x999/x999/x999/x999/999": 404,
		"tile/0/1":                            400,
		"tile/0/x000/001":                     400,
		"tile/0/000.p/0":                      400,
		"tile/0/000.p/256":                    400,
		"tile/6/000":                          400,
		"tile/data/000":                       400,
		"tile/8/0/000":                        400,
		"tile/entries":                        400,
		"tile/":                               400,
		"tile/0/000/":                         400,
		"tile/0/%00":                          400,
		"tile/0/000.p/1/2":                    400,
		"tile/entries/-01":                    400,
	}
	for p, want := range casos {
		if res, b := obter(t, l.url, p, ""); res.StatusCode != want {
			t.Errorf("GET %s: %d %s, want %d", p, res.StatusCode, b, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	pedacos := []string{"tile", "entries", "0", "1", "5", "6", "x", "x000", "x001", "000", "001", ".p", "000.p", "1", "255", "256", "-", "..", "", "%2F", "99999999999999999999"}
	for range 300 {
		var b strings.Builder
		b.WriteString("tile")
		for range 1 + r.IntN(6) {
			b.WriteString("/" + pedacos[r.IntN(len(pedacos))])
		}
		p := strings.TrimPrefix(b.String(), "tile/")
		if res, corpo := obter(t, l.url, "tile/"+p, ""); res.StatusCode >= 500 {
			t.Errorf("GET tile/%s: %d %s", p, res.StatusCode, corpo)
		}
	}
}

// condicional is a GET of path with If-None-Match: its status.
func condicional(t *testing.T, base, path, etag string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/d6a/transparencia/"+path, nil)
	req.Header.Set("If-None-Match", etag)
	req.Header.Set("Accept-Encoding", "identity")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}
