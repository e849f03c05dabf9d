package beacon

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	"encoding/hex"
	"encoding/json"
	"github.com/cloudflare/circl/ecc/bls12381"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

type fonte struct {
	Repository string `json:"repository"`
	Path       string `json:"path"`
	Commit     string `json:"commit"`
}

// rodadasQuicknet reads the real quicknet rounds in testdata/beacon; each
// must name where it came from.
func rodadasQuicknet(t testing.TB) (Cadeia, []Rodada) {
	t.Helper()
	_, arq, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(arq), "..", "..", "testdata", "beacon", "quicknet-rounds.json"))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Chain  Cadeia            `json:"chain"`
		Rounds []json.RawMessage `json:"rounds"`
	}
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	var rs []Rodada
	for _, raw := range a.Rounds {
		var r Rodada
		var f struct {
			Source fonte `json:"source"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		if f.Source.Repository == "" || f.Source.Path == "" || len(f.Source.Commit) != 40 {
			t.Fatalf("round %d: source %+v does not name repository, path and commit", r.Numero, f.Source)
		}
		rs = append(rs, r)
	}
	if len(rs) < 3 {
		t.Fatalf("want at least 3 real rounds, have %d", len(rs))
	}
	return a.Chain, rs
}

func TestQuicknetRodadasReais(t *testing.T) {
	c, rs := rodadasQuicknet(t)
	q := Quicknet()
	if hex.EncodeToString(c.ChavePublica) != QuicknetChave || c.Genesis != q.Genesis || c.Periodo != q.Periodo || c.Hash != QuicknetHash || c.Esquema != Esquema {
		t.Fatalf("testdata chain %+v is not quicknet", c)
	}
	for _, r := range rs {
		if err := Verificar(q.ChavePublica, r); err != nil {
			t.Errorf("real quicknet round %d: %v", r.Numero, err)
		}
	}
	if err := VerificarLote(q.ChavePublica, rs); err != nil {
		t.Errorf("batch of real rounds: %v", err)
	}
}

func TestQuicknetHashDeCadeia(t *testing.T) {
	// drand's chain hash from the quicknet info (groupHash f477d5c8…,
	// beacon id "quicknet") must give quicknet's published hash: the
	// formula we use for the private chain is drand's.
	q := Quicknet()
	seed, _ := hex.DecodeString("f477d5c89f21a17c863a7f937c6a6d15859414d2be09cd448d4279af331c5d3e")
	if h := hashCadeia(q.Periodo, q.Genesis, q.ChavePublica, seed, "quicknet"); h != QuicknetHash {
		t.Fatalf("chain hash %s, want %s", h, QuicknetHash)
	}
	if !q.Quicknet() || NovoPrivado([]byte("x"), 1, time.Second).Cadeia().Quicknet() {
		t.Fatal("Quicknet() does not tell quicknet by its key")
	}
}

func TestBitTrocadoFalha(t *testing.T) {
	_, rs := rodadasQuicknet(t)
	q := Quicknet()
	for _, r := range rs {
		for _, bit := range []int{0, 7, 100, 200, 383} { // bit 0..2 are flags; the rest are x
			s := append([]byte(nil), r.Assinatura...)
			s[bit/8] ^= 1 << (bit % 8)
			rnd := sha256.Sum256(s)
			// Randomness consistent with the bad signature: only the BLS check can catch it.
			ruim := Rodada{Numero: r.Numero, Assinatura: s, Randomness: rnd[:]}
			if err := Verificar(q.ChavePublica, ruim); !errors.Is(err, ErrAssinatura) {
				t.Errorf("round %d bit %d flipped: err = %v, want ErrAssinatura", r.Numero, bit, err)
			}
			ruim.Randomness = r.Randomness
			if err := Verificar(q.ChavePublica, ruim); err == nil {
				t.Errorf("round %d bit %d flipped, original randomness: accepted", r.Numero, bit)
			}
		}
	}
}

func TestRodadaOuChaveErradaFalha(t *testing.T) {
	_, rs := rodadasQuicknet(t)
	q := Quicknet()
	outra := NovoPrivado([]byte("outra"), q.Genesis, q.Periodo).Cadeia().ChavePublica
	for _, r := range rs {
		x := r
		x.Numero++
		if err := Verificar(q.ChavePublica, x); !errors.Is(err, ErrAssinatura) {
			t.Errorf("round %d relabelled %d: err = %v", r.Numero, x.Numero, err)
		}
		if err := Verificar(outra, r); !errors.Is(err, ErrAssinatura) {
			t.Errorf("round %d under another key: err = %v", r.Numero, err)
		}
	}
	if err := Verificar(q.ChavePublica, Rodada{}); !errors.Is(err, ErrAssinatura) || !strings.Contains(err.Error(), "round 0") {
		t.Errorf("round 0: err = %v", err)
	}
}

func TestRandomnessErradaFalha(t *testing.T) {
	_, rs := rodadasQuicknet(t)
	q := Quicknet()
	for i, r := range rs {
		x := r
		x.Randomness = rs[(i+1)%len(rs)].Randomness
		err := Verificar(q.ChavePublica, x)
		if !errors.Is(err, ErrRandomness) || !strings.Contains(err.Error(), fmt.Sprintf("round %d", r.Numero)) {
			t.Errorf("round %d with another round's randomness: err = %v", r.Numero, err)
		}
		x.Randomness = nil
		if err := Verificar(q.ChavePublica, x); !errors.Is(err, ErrRandomness) {
			t.Errorf("round %d without randomness: err = %v", r.Numero, err)
		}
	}
}

func TestChaveHex(t *testing.T) {
	k, err := ChaveHex("  0x" + QuicknetChave + "\n")
	if err != nil || hex.EncodeToString(k) != QuicknetChave {
		t.Fatalf("quicknet key: %v", err)
	}
	kb, _ := hex.DecodeString(QuicknetChave)
	kb[len(kb)-1] ^= 1 // another x: not on the curve or not in G2
	naoNoGrupo := hex.EncodeToString(kb)
	casos := map[string]string{
		"":                              "empty",
		"zz" + QuicknetChave[2:]:        "not hex",
		QuicknetChave[:190]:             "95 bytes",
		QuicknetChave + "00":            "97 bytes",
		"03" + QuicknetChave[2:]:        "not in compressed form",
		string(naoNoGrupo):              "not a G2 point",
		"c0" + strings.Repeat("0", 190): "identity",
	}
	for s, quer := range casos {
		if _, err := ChaveHex(s); err == nil || !strings.Contains(err.Error(), quer) {
			t.Errorf("ChaveHex(%.12q…) = %v, want error containing %q", s, err, quer)
		}
	}
}

func privadas(n int) (*Privado, []Rodada) {
	p := NovoPrivado([]byte("lote"), 1_700_000_000, time.Second)
	rs := make([]Rodada, n)
	for i := range rs {
		rs[i] = p.Assinar(uint64(1000 + i))
	}
	return p, rs
}

func TestVerificarLote(t *testing.T) {
	p, rs := privadas(200)
	chave := p.Cadeia().ChavePublica
	if err := VerificarLote(chave, rs); err != nil {
		t.Fatalf("200 good rounds: %v", err)
	}
	if err := VerificarLote(chave, nil); err != nil {
		t.Fatalf("empty batch: %v", err)
	}

	// The one-by-one fallback costs a pairing per round before the bad one
	// (slow under -race), so the bad rounds sit early and the other cases
	// use a 40-round prefix.
	copia := func() []Rodada { return append([]Rodada(nil), rs...) }
	curta := func() []Rodada { return append([]Rodada(nil), rs[:40]...) }

	t.Run("assinatura_de_outra_rodada", func(t *testing.T) {
		ruins := copia()
		ruins[37] = p.Assinar(5) // a valid signature, of another round
		ruins[37].Numero = rs[37].Numero
		err := VerificarLote(chave, ruins)
		if !errors.Is(err, ErrAssinatura) || !strings.Contains(err.Error(), fmt.Sprintf("round %d", rs[37].Numero)) {
			t.Fatalf("err = %v, want ErrAssinatura naming round %d", err, rs[37].Numero)
		}
	})
	t.Run("assinaturas_trocadas", func(t *testing.T) {
		// Swapping two signatures keeps Σσᵢ and ΣH(mᵢ) paired up; only the
		// random coefficients catch it.
		ruins := curta()
		ruins[10].Assinatura, ruins[11].Assinatura = ruins[11].Assinatura, ruins[10].Assinatura
		ruins[10].Randomness, ruins[11].Randomness = ruins[11].Randomness, ruins[10].Randomness
		err := VerificarLote(chave, ruins)
		if !errors.Is(err, ErrAssinatura) || !strings.Contains(err.Error(), fmt.Sprintf("round %d", rs[10].Numero)) {
			t.Fatalf("err = %v, want ErrAssinatura naming round %d", err, rs[10].Numero)
		}
	})
	t.Run("randomness", func(t *testing.T) {
		ruins := curta()
		ruins[39].Randomness = ruins[0].Randomness
		err := VerificarLote(chave, ruins)
		if !errors.Is(err, ErrRandomness) || !strings.Contains(err.Error(), fmt.Sprintf("round %d", rs[39].Numero)) {
			t.Fatalf("err = %v, want ErrRandomness naming round %d", err, rs[39].Numero)
		}
	})
	t.Run("lixo", func(t *testing.T) {
		ruins := curta()
		ruins[20].Assinatura = ruins[20].Assinatura[:47]
		err := VerificarLote(chave, ruins)
		if !errors.Is(err, ErrAssinatura) || !strings.Contains(err.Error(), fmt.Sprintf("round %d", rs[20].Numero)) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("outra_chave", func(t *testing.T) {
		outra := NovoPrivado([]byte("outra"), 0, time.Second).Cadeia().ChavePublica
		if err := VerificarLote(outra, rs); !errors.Is(err, ErrAssinatura) {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestSomaPonderada: the bucket sum equals Σ kᵢ·pᵢ by circl's ScalarMult,
// for batch sizes on either side of each window width and scalars with
// zero, one and all-ones digits.
func TestSomaPonderada(t *testing.T) {
	for _, tam := range []int{1, 8, 16} {
		for _, n := range []int{1, 2, 5, 33, 130} {
			ks := make([][]byte, n)
			ps := make([]*bls12381.G1, n)
			var want bls12381.G1
			want.SetIdentity()
			for i := range n {
				k := make([]byte, tam)
				switch i % 4 {
				case 0:
					rand.Read(k)
				case 1:
					k[tam-1] = 1
				case 2:
					for b := range k {
						k[b] = 0xff
					}
				}
				ks[i], ps[i] = k, hashRodada(uint64(i+1))
				var s bls12381.Scalar
				s.SetBytes(k)
				var t bls12381.G1
				t.ScalarMult(&s, ps[i])
				want.Add(&want, &t)
			}
			var got bls12381.G1
			somaPonderada(&got, ks, ps)
			if !got.IsEqual(&want) {
				t.Errorf("%d-byte scalars, %d points: the bucket sum differs from Σ ScalarMult", tam, n)
			}
		}
	}
}

func BenchmarkVerificar(b *testing.B) {
	p, rs := privadas(200)
	chave := p.Cadeia().ChavePublica
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := Verificar(chave, rs[i%len(rs)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/round")
}

func BenchmarkVerificarLote200(b *testing.B) {
	p, rs := privadas(200)
	chave := p.Cadeia().ChavePublica
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := VerificarLote(chave, rs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rs)), "ns/round")
}
