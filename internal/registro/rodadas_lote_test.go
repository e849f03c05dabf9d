package registro

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/formigueiro/d6a/internal/beacon"
)

// TestLoteRodadasNomeiaCadaDraw: rounds checked in batches, a draw per
// index, some draws sharing a round. Forged signatures deep in a batch
// (another chain's, of the right round) are reported at every draw that
// carries them and at no other; each distinct round is verified once.
func TestLoteRodadasNomeiaCadaDraw(t *testing.T) {
	p := beacon.NovoPrivado([]byte("lote-rodadas"), 1_700_000_000, time.Second)
	alheio := beacon.NovoPrivado([]byte("outra cadeia"), 1_700_000_000, time.Second)
	chave := p.Cadeia().ChavePublica
	const rodadas = 150
	// Round 1000+k is carried by draw 2k and, for even k, by draw 2k+1 too.
	forjadas := map[uint64]bool{1000 + 77: true, 1000 + 78: true, 1000 + 140: true}
	assinadas := make([]beacon.Rodada, rodadas)
	for k := range assinadas {
		n := uint64(1000 + k)
		if forjadas[n] {
			assinadas[k] = alheio.Assinar(n)
		} else {
			assinadas[k] = p.Assinar(n)
		}
	}
	for _, tamanho := range []int{32, 1} {
		l := &LoteRodadas{Tamanho: tamanho}
		var imediatas, esperadas []int64
		indice := int64(0)
		for k, r := range assinadas {
			vezes := 1 + (k+1)%2
			for range vezes {
				if forjadas[r.Numero] {
					esperadas = append(esperadas, indice)
				}
				if err := l.Adicionar(indice, chave, r.Numero, r.Assinatura); err != nil {
					imediatas = append(imediatas, indice)
					var f *Falha
					if !errors.As(err, &f) || f.Campo != "registro.assinatura_rodada" {
						t.Fatalf("tamanho %d, draw %d: %v, want a registro.assinatura_rodada failure", tamanho, indice, err)
					}
				}
				indice++
			}
		}
		var achadas []int64
		for _, f := range l.Fim() {
			achadas = append(achadas, f.Indice)
			var fa *Falha
			if !errors.As(error(f), &fa) || fa.Campo != "registro.assinatura_rodada" {
				t.Fatalf("tamanho %d, draw %d: %v, want a registro.assinatura_rodada failure", tamanho, f.Indice, f)
			}
		}
		achadas = append(achadas, imediatas...)
		slices.Sort(achadas)
		if !slices.Equal(achadas, esperadas) {
			t.Fatalf("tamanho %d: failures at %v, want exactly the draws carrying a forged round %v", tamanho, achadas, esperadas)
		}
		if got := l.Distintas(); got != rodadas {
			t.Fatalf("tamanho %d: %d rounds verified, want each of the %d once", tamanho, got, rodadas)
		}
	}

	// A signature that is not a G1 point fails at once, at its draw.
	l := &LoteRodadas{}
	if err := l.Adicionar(7, chave, 5, []byte{1, 2, 3}); err == nil {
		t.Fatal("a 3-byte signature was taken")
	}
	if fs := l.Fim(); len(fs) != 0 {
		t.Fatalf("failures %v after a malformed one reported at once", fs)
	}
}

// TestLoteRodadasTrocaDeChave: a rule record with another key mid-walk;
// the rounds before it verify under the old key, those after under the
// new one.
func TestLoteRodadasTrocaDeChave(t *testing.T) {
	a := beacon.NovoPrivado([]byte("a"), 1_700_000_000, time.Second)
	b := beacon.NovoPrivado([]byte("b"), 1_700_000_000, time.Second)
	l := &LoteRodadas{Tamanho: 8}
	for i := range 20 {
		p := a
		if i >= 10 {
			p = b
		}
		r := p.Assinar(uint64(50 + i))
		if err := l.Adicionar(int64(i), p.Cadeia().ChavePublica, r.Numero, r.Assinatura); err != nil {
			t.Fatal(err)
		}
	}
	// Round 55 signed by a, claimed under b.
	r := a.Assinar(55)
	if err := l.Adicionar(20, b.Cadeia().ChavePublica, r.Numero, r.Assinatura); err != nil {
		t.Fatal(err)
	}
	fs := l.Fim()
	if len(fs) != 1 || fs[0].Indice != 20 {
		t.Fatalf("failures %v, want draw 20 only", fs)
	}
}
