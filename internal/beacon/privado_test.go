package beacon

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCadeiaTempos(t *testing.T) {
	c := Cadeia{Genesis: 1000, Periodo: 3 * time.Second}
	if got := c.PublicadaEm(1); got.Unix() != 1000 {
		t.Fatalf("round 1 at %d, want genesis", got.Unix())
	}
	if got := c.PublicadaEm(11); got.Unix() != 1030 {
		t.Fatalf("round 11 at %d, want 1030", got.Unix())
	}
	ms := time.Millisecond
	casos := []struct {
		t    time.Time
		quer uint64
	}{
		{time.Unix(0, 0), 1},
		{time.Unix(999, 999_999_999), 1},      // 1 ns before genesis: round 1 is still later
		{time.Unix(1000, 0), 2},               // exactly at round 1: strictly later is round 2
		{time.Unix(1000, 0).Add(ms), 2},       // ms precision
		{time.Unix(1002, 0).Add(999 * ms), 2}, // last ms before round 2
		{time.Unix(1003, 0), 3},               // exactly at round 2
		{time.Unix(1003, 0).Add(-ms), 2},
		{time.Unix(1030, 0), 12},
	}
	for _, k := range casos {
		got := c.PrimeiraApos(k.t)
		if got != k.quer {
			t.Errorf("PrimeiraApos(%v) = %d, want %d", k.t.Sub(time.Unix(1000, 0)), got, k.quer)
		}
		// The defining property: published strictly after t, and the one before it is not.
		if !c.PublicadaEm(got).After(k.t) || (got > 1 && c.PublicadaEm(got-1).After(k.t)) {
			t.Errorf("PrimeiraApos(%v) = %d breaks its definition", k.t, got)
		}
	}
	if c.UltimaEm(time.Unix(999, 0)) != 0 || c.UltimaEm(time.Unix(1000, 0)) != 1 {
		t.Error("UltimaEm around genesis")
	}
	q := Quicknet()
	// Real quicknet round 30662982 is in testdata; it is due at genesis + 30662981·3 s.
	if got := q.PrimeiraApos(q.PublicadaEm(30662982).Add(-time.Millisecond)); got != 30662982 {
		t.Errorf("quicknet PrimeiraApos = %d", got)
	}
}

func TestCadeiaJSON(t *testing.T) {
	q := Quicknet()
	b, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	for _, campo := range []string{`"public_key":"83cf0f28`, `"period":3`, `"genesis_time":1692803367`, `"hash":"52db9ba7`, `"schemeID":"bls-unchained-g1-rfc9380"`} {
		if !strings.Contains(string(b), campo) {
			t.Errorf("%s lacks %s", b, campo)
		}
	}
	var v1 Cadeia
	if err := json.Unmarshal(b, &v1); err != nil || !bytes.Equal(v1.ChavePublica, q.ChavePublica) || v1.Periodo != q.Periodo || v1.Genesis != q.Genesis || v1.Hash != q.Hash || v1.Esquema != q.Esquema {
		t.Fatalf("round trip: %+v %v", v1, err)
	}
	// drand v2 shape (as drand's own Info.MarshalJSON writes it).
	v2 := `{"public_key":"` + QuicknetChave + `","beacon_id":"quicknet","period":3,"scheme":"bls-unchained-g1-rfc9380","genesis_time":1692803367,"genesis_seed":"f477d5c89f21a17c863a7f937c6a6d15859414d2be09cd448d4279af331c5d3e","chain_hash":"52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971"}`
	var c2 Cadeia
	if err := json.Unmarshal([]byte(v2), &c2); err != nil || c2.Esquema != Esquema || c2.Hash != QuicknetHash || c2.Validar() != nil {
		t.Fatalf("v2 info: %+v %v", c2, err)
	}
}

func TestPrivadoDeterministico(t *testing.T) {
	a := NovoPrivado([]byte("semente"), 1_700_000_000, time.Second)
	b := NovoPrivado([]byte("semente"), 1_700_000_000, time.Second)
	c := NovoPrivado([]byte("outra semente"), 1_700_000_000, time.Second)
	if !bytes.Equal(a.Cadeia().ChavePublica, b.Cadeia().ChavePublica) || bytes.Equal(a.Cadeia().ChavePublica, c.Cadeia().ChavePublica) {
		t.Fatal("the key must depend on the seed and only on it")
	}
	if err := a.Cadeia().Validar(); err != nil {
		t.Fatal(err)
	}
	ra, rb := a.Assinar(7), b.Assinar(7)
	if !bytes.Equal(ra.Assinatura, rb.Assinatura) || !bytes.Equal(ra.Randomness, rb.Randomness) {
		t.Fatal("signing is not deterministic")
	}
	if err := Verificar(a.Cadeia().ChavePublica, ra); err != nil {
		t.Fatal(err)
	}
	if err := Verificar(c.Cadeia().ChavePublica, ra); err == nil {
		t.Fatal("a round verified under another private key")
	}
}

func TestAbrirPrivado(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dados")
	antes := time.Now().Unix()
	p, err := AbrirPrivado(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c := p.Cadeia()
	if c.Genesis < antes || c.Genesis > time.Now().Unix() || c.Periodo != time.Second {
		t.Fatalf("new chain %+v: genesis must be now truncated to the second, period 1 s", c)
	}
	fi, err := os.Stat(filepath.Join(dir, ArquivoPrivado))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("key file mode %v is readable by others", fi.Mode().Perm())
	}
	p2, err := AbrirPrivado(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if c2 := p2.Cadeia(); !bytes.Equal(c2.ChavePublica, c.ChavePublica) || c2.Genesis != c.Genesis || c2.Hash != c.Hash {
		t.Fatalf("reopened chain differs: %+v vs %+v", c2, c)
	}
	if !bytes.Equal(p.Assinar(3).Assinatura, p2.Assinar(3).Assinatura) {
		t.Fatal("reopened key signs differently")
	}
	if _, err := AbrirPrivado(dir, 2*time.Second); err == nil || !strings.Contains(err.Error(), "period") {
		t.Fatalf("reopen with another period: %v", err)
	}
	if _, err := AbrirPrivado(t.TempDir(), 1500*time.Millisecond); err == nil {
		t.Fatal("fractional period accepted")
	}
	if entradas, _ := os.ReadDir(dir); len(entradas) != 1 {
		t.Fatalf("dir has %d entries, want only the key file", len(entradas))
	}
}

func TestPrivadoHandler(t *testing.T) {
	genesis := int64(1_700_000_000)
	agora := time.Unix(genesis+9, 500_000_000) // round 10 published at genesis+9
	p := NovoPrivado([]byte("handler"), genesis, time.Second).ComRelogio(func() time.Time { return agora })
	srv := httptest.NewServer(p.Handler())
	defer srv.Close()
	get := func(caminho string) (int, []byte) {
		t.Helper()
		resp, err := http.Get(srv.URL + caminho)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	hash := p.Cadeia().Hash
	for caminho, quer := range map[string]int{
		"/public/10":                        200,
		"/public/11":                        http.StatusTooEarly,
		"/public/99999999":                  http.StatusTooEarly,
		"/public/0":                         http.StatusBadRequest,
		"/public/abc":                       http.StatusBadRequest,
		"/public/-1":                        http.StatusBadRequest,
		"/public/latest":                    200,
		"/info":                             200,
		"/" + hash + "/info":                200,
		"/" + hash + "/public/10":           200,
		"/v2/chains/" + hash + "/info":      200,
		"/v2/chains/" + hash + "/rounds/10": 200,
		"/v2/chains/" + hash + "/rounds/11": http.StatusTooEarly,
		"/v2/chains/" + hash + "/rounds/0":  http.StatusBadRequest,
		"/v2/chains/outra/info":             404,
		"/chains":                           200,
	} {
		if got, corpo := get(caminho); got != quer {
			t.Errorf("GET %s = %d (%s), want %d", caminho, got, corpo, quer)
		}
	}
	_, a := get("/public/10")
	_, b := get("/public/10")
	if !bytes.Equal(a, b) {
		t.Fatal("the same past round answered different bytes")
	}
	var r Rodada
	if err := json.Unmarshal(a, &r); err != nil || r.Numero != 10 {
		t.Fatalf("round 10: %s %v", a, err)
	}
	if err := Verificar(p.Cadeia().ChavePublica, r); err != nil {
		t.Fatal(err)
	}
	_, l := get("/public/latest")
	var latest Rodada
	if err := json.Unmarshal(l, &latest); err != nil || latest.Numero != 10 {
		t.Fatalf("latest: %s %v", l, err)
	}
	for _, caminho := range []string{"/info", "/v2/chains/" + hash + "/info"} {
		_, ib := get(caminho)
		var c Cadeia
		if err := json.Unmarshal(ib, &c); err != nil || !bytes.Equal(c.ChavePublica, p.Cadeia().ChavePublica) || c.Genesis != genesis || c.Periodo != time.Second || c.Esquema != Esquema || c.Hash != hash {
			t.Fatalf("%s: %s %v", caminho, ib, err)
		}
	}
	// Before genesis nothing is published, not even "latest".
	antes := NovoPrivado([]byte("handler"), genesis, time.Second).ComRelogio(func() time.Time { return time.Unix(genesis-1, 0) })
	srv2 := httptest.NewServer(antes.Handler())
	defer srv2.Close()
	resp, err := http.Get(srv2.URL + "/public/latest")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooEarly {
		t.Fatalf("latest before genesis: %d", resp.StatusCode)
	}
}

// LerPrivado reads the chain AbrirPrivado created, at the file's period,
// and never creates a key where there is none.
func TestLerPrivado(t *testing.T) {
	dir := t.TempDir()
	if _, err := LerPrivado(dir); err == nil {
		t.Fatal("LerPrivado on an empty dir: want an error")
	}
	if _, err := os.Stat(filepath.Join(dir, ArquivoPrivado)); err == nil {
		t.Fatal("LerPrivado created a key")
	}
	a, err := AbrirPrivado(dir, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	l, err := LerPrivado(dir)
	if err != nil {
		t.Fatal(err)
	}
	if l.Cadeia().Genesis != a.Cadeia().Genesis || l.Cadeia().Periodo != 2*time.Second || l.Cadeia().Hash != a.Cadeia().Hash {
		t.Fatalf("read %+v, created %+v", l.Cadeia(), a.Cadeia())
	}
}
