package equidade

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestQuiQuadradoCauda(t *testing.T) {
	// Critical values from the chi-square table.
	for _, c := range []struct {
		x    float64
		gl   int
		want float64
	}{
		{3.841459, 1, 0.05}, {6.634897, 1, 0.01}, {10.827566, 1, 0.001},
		{18.307038, 10, 0.05}, {23.209251, 10, 0.01}, {29.588298, 10, 0.001},
		{124.342113, 100, 0.05}, {149.449252, 100, 0.001}, {100, 100, 0.481192},
		{0.5, 3, 0.918891},
	} {
		if got := QuiQuadradoCauda(c.x, c.gl); math.Abs(got-c.want) > 1e-5 {
			t.Errorf("Q(%v; %d) = %.6f, want %.6f", c.x, c.gl, got, c.want)
		}
	}
}

// An empty log, or one too small to test, is not suspicious.
func TestSemSorteiosNaoESuspeito(t *testing.T) {
	for _, a := range []*Acumulador{NovoAcumulador(), func() *Acumulador {
		a := NovoAcumulador()
		a.Sorteio([]string{"a", "b"}, "a")
		a.Sorteio([]string{"c"}, "c")
		return a
	}()} {
		if r := a.Resultado(); r.PValor != 1 || r.Suspeito() {
			t.Errorf("%d draws: p = %v, suspeito = %v; want 1, false", r.Sorteios, r.PValor, r.Suspeito())
		}
	}
}

func TestSomasDaDefinicao(t *testing.T) {
	a := NovoAcumulador()
	a.Sorteio([]string{"a", "b"}, "a")
	a.Sorteio([]string{"a", "b", "c", "d"}, "c")
	a.Sorteio([]string{"b"}, "b")
	r := a.Resultado()
	if r.Sorteios != 3 || r.SorteiosN1 != 1 {
		t.Fatalf("sorteios %d n1 %d", r.Sorteios, r.SorteiosN1)
	}
	want := map[string][3]float64{"a": {2, 0.75, 1}, "b": {3, 1.75, 1}, "c": {1, 0.25, 1}, "d": {1, 0.25, 0}}
	for _, c := range r.Conselheiros {
		w := want[c.ID]
		if float64(c.SorteiosElegivel) != w[0] || math.Abs(c.Esperado-w[1]) > 1e-12 || float64(c.Observado) != w[2] {
			t.Errorf("%s: %+v, want elegível %v esperado %v observado %v", c.ID, c, w[0], w[1], w[2])
		}
	}
}

// simular draws m times in a country of units of 5 to 40 counsellors; each
// draw's list is the unit's counsellors not busy (each busy with
// probability 0.2, at least one left); escolher picks the winner.
func simular(r *rand.Rand, nUnidades, m int, escolher func(r *rand.Rand, lista []string) string) Resultado {
	var unidades [][]string
	for u := range nUnidades {
		k := 5 + r.IntN(36)
		var ids []string
		for i := range k {
			ids = append(ids, fmt.Sprintf("u%02d-c%02d", u, i))
		}
		unidades = append(unidades, ids)
	}
	a := NovoAcumulador()
	lista := make([]string, 0, 40)
	for range m {
		u := unidades[r.IntN(len(unidades))]
		lista = lista[:0]
		for _, id := range u {
			if r.Float64() >= 0.2 {
				lista = append(lista, id)
			}
		}
		if len(lista) == 0 {
			lista = append(lista, u[0])
		}
		a.Sorteio(lista, escolher(r, lista))
	}
	return a.Resultado()
}

func justo(r *rand.Rand, l []string) string { return l[r.IntN(len(l))] }

// The false-alarm rate of Limiar on honest logs, measured: 2,000 logs of
// 2,000 draws. Pearson's statistic over Σ 1/n is conservative here (a
// draw from a list of n has variance (1/n)(1−1/n) < 1/n, and units are
// independent multinomials counted as one), so the rate stays at or below
// the nominal 0.1%; docs/verificacao.md §8 quotes the figure this prints.
func TestAlarmeFalso(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const logs = 2000
	alarmes := 0
	for range logs {
		if simular(r, 20, 2000, justo).Suspeito() {
			alarmes++
		}
	}
	t.Logf("false alarms: %d of %d honest logs (%.2f%%) at p < %v", alarmes, logs, 100*float64(alarmes)/logs, Limiar)
	if alarmes > 4 {
		t.Errorf("%d false alarms in %d honest logs, want at most 4 (0.2%%)", alarmes, logs)
	}
}

// Biased shuffles are flagged: the lowest id wins one draw in ten, or one
// counsellor wins twice their share. 10,000 draws over 5 units, so the
// favoured counsellor expects 50 to 400 wins: a counsellor at twice their
// share is flagged once they expect about 30 (docs/verificacao.md §8).
func TestViesDetectado(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	menor := func(r *rand.Rand, l []string) string {
		if r.IntN(10) == 0 {
			m := l[0]
			for _, id := range l {
				m = min(m, id)
			}
			return m
		}
		return justo(r, l)
	}
	const favorito = "u03-c01"
	dobro := func(r *rand.Rand, l []string) string {
		for _, id := range l {
			// Twice its share: win with 2/n, the others share the rest.
			if id == favorito && r.Float64() < 2/float64(len(l)) {
				return id
			}
		}
		for {
			if id := justo(r, l); id != favorito || len(l) == 1 {
				return id
			}
		}
	}
	for nome, f := range map[string]func(*rand.Rand, []string) string{"menor id 1 em 10": menor, "um conselheiro com o dobro": dobro} {
		pegos := 0
		for range 20 {
			if simular(r, 5, 10000, f).Suspeito() {
				pegos++
			}
		}
		if pegos < 19 {
			t.Errorf("%s: flagged in %d of 20 logs of 10,000 draws, want at least 19", nome, pegos)
		}
	}
}
