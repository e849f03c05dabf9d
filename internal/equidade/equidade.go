// Package equidade is the lottery's public fairness test (CONTRACT §7
// "Fairness statistics", issue 23): from the draw records alone, how often
// each counsellor was expected to win and how often they won, and one test
// over all counsellors. The service (GET /d6a/transparencia/estatisticas)
// and the verifier (`d6a verify --url --estatisticas`) both run this code.
//
// For a counsellor, esperado = Σ 1/n over the draws whose input list of n
// held them, observado = the draws they won, and z = (observado −
// esperado) / √variancia with variancia = Σ (1/n)(1 − 1/n): under a fair
// shuffle observado is a sum of independent Bernoulli(1/n) (a
// Poisson-binomial), so z is about N(0, 1) once variancia is not small.
//
// The test (Metodo) has two parts, combined by Bonferroni: Pearson's
// chi-square over counsellors with esperado ≥ 5, the rest pooled into one
// cell when their pooled esperado reaches 5, against χ² with cells − 1
// degrees of freedom (a lottery drifting everywhere); and the most extreme
// counsellor's two-sided Poisson tail, corrected for how many were tested
// (one counsellor favoured or shunned). A list of n = 1 carries no
// randomness: it adds 1 to both observado and esperado, so it changes no
// cell's difference; such draws are counted apart (SorteiosN1) and left
// out of the cells' esperado, so they do not make a cell look larger than
// its randomness. docs/verificacao.md §8 says why this test and what false
// alarm rate its threshold gives.
package equidade

import (
	"math"
	"sort"
)

// Metodo names the test in the route's "metodo".
const Metodo = "qui-quadrado de Pearson sobre conselheiros com esperado >= 5 (demais agrupados), gl = celulas - 1, e o conselheiro mais extremo (cauda de Poisson bilateral, Bonferroni sobre os com esperado >= 1); p = min(1, 2 min(p1, p2)); sorteios com n = 1 fora do teste"

// Limiar is the p-value below which the page, the metric's alert and
// `verify --estatisticas` call the lottery suspicious.
const Limiar = 0.001

// minimoCelula is the expected count a cell needs for the chi-square
// approximation (the textbook rule of five).
const minimoCelula = 5

// Conselheiro is one counsellor's sums.
type Conselheiro struct {
	ID               string  `json:"conselheiro_id"`
	SorteiosElegivel int64   `json:"sorteios_elegivel"`
	Esperado         float64 `json:"esperado"`
	Observado        int64   `json:"observado"`
	Z                float64 `json:"z"`
	// Variancia and the n ≥ 2 sums are the test's, not the route's.
	Variancia   float64 `json:"-"`
	EsperadoN2  float64 `json:"-"`
	ObservadoN2 int64   `json:"-"`
}

// Acumulador sums draws, in any order.
type Acumulador struct {
	Registros  int64
	Sorteios   int64
	SorteiosN1 int64
	porID      map[string]*Conselheiro
}

// NovoAcumulador returns an empty Acumulador.
func NovoAcumulador() *Acumulador { return &Acumulador{porID: map[string]*Conselheiro{}} }

func (a *Acumulador) de(id string) *Conselheiro {
	c := a.porID[id]
	if c == nil {
		c = &Conselheiro{ID: id}
		a.porID[id] = c
	}
	return c
}

// Sorteio adds one draw: its input list and its winner.
func (a *Acumulador) Sorteio(elegiveis []string, vencedor string) {
	n := len(elegiveis)
	if n == 0 {
		return
	}
	a.Sorteios++
	p := 1 / float64(n)
	if n == 1 {
		a.SorteiosN1++
	}
	for _, id := range elegiveis {
		c := a.de(id)
		c.SorteiosElegivel++
		c.Esperado += p
		if n > 1 {
			c.EsperadoN2 += p
			c.Variancia += p * (1 - p)
		}
	}
	v := a.de(vencedor)
	v.Observado++
	if n > 1 {
		v.ObservadoN2++
	}
}

// Somar adds a counsellor's sums kept elsewhere (the service's table).
func (a *Acumulador) Somar(c Conselheiro) {
	d := a.de(c.ID)
	d.SorteiosElegivel += c.SorteiosElegivel
	d.Esperado += c.Esperado
	d.Observado += c.Observado
	d.Variancia += c.Variancia
	d.EsperadoN2 += c.EsperadoN2
	d.ObservadoN2 += c.ObservadoN2
}

// Conselheiros returns the sums, by id.
func (a *Acumulador) Conselheiros() []Conselheiro {
	out := make([]Conselheiro, 0, len(a.porID))
	for _, c := range a.porID {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Resultado is the route's answer (CONTRACT §7).
type Resultado struct {
	Registros      int64   `json:"registros"`
	Sorteios       int64   `json:"sorteios"`
	Metodo         string  `json:"metodo"`
	Estatistica    float64 `json:"estatistica"`
	PValor         float64 `json:"p_valor"`
	GrausLiberdade int     `json:"graus_liberdade"`
	SorteiosN1     int64   `json:"sorteios_n1"`
	Limiar         float64 `json:"limiar"`
	// The two parts of the test: the chi-square's p-value, and the most
	// extreme counsellor's (Extremo), corrected for how many were tested.
	PValorQuiQuadrado float64       `json:"p_valor_qui_quadrado"`
	PValorExtremo     float64       `json:"p_valor_extremo"`
	Extremo           string        `json:"extremo"`
	Conselheiros      []Conselheiro `json:"conselheiros"`
}

// Suspeito reports a p-value below Limiar.
func (r Resultado) Suspeito() bool { return r.PValor < Limiar }

// Resultado computes each counsellor's z and the test.
func (a *Acumulador) Resultado() Resultado {
	cs := a.Conselheiros()
	t := NovoTeste(a.Registros, a.Sorteios, a.SorteiosN1)
	for i := range cs {
		t.Somar(&cs[i])
	}
	r := t.Resultado()
	r.Conselheiros = cs
	return r
}

// Teste computes the test one counsellor at a time, so a caller that only
// needs the p-value (the service's metric) streams the stored sums instead
// of holding every counsellor's: at K=1,000,000 every counsellor ends up
// with sums, about 250 bytes each held (issue 24). Fed in id order it
// gives what Acumulador.Resultado gives, bit for bit; in another order the
// sums agree to about 1e-12, within transparencia.DiferencaEstatisticas.
type Teste struct {
	r            Resultado
	poolO, poolE float64
	celulas      int
	pMax         float64
	testados     int
}

// NovoTeste starts a test over the given totals.
func NovoTeste(registros, sorteios, sorteiosN1 int64) *Teste {
	return &Teste{r: Resultado{Registros: registros, Sorteios: sorteios, Metodo: Metodo, SorteiosN1: sorteiosN1, Limiar: Limiar, PValor: 1}, pMax: 1}
}

// Somar adds one counsellor's sums to the test and sets its Z.
func (t *Teste) Somar(c *Conselheiro) {
	if c.Variancia > 0 {
		c.Z = (float64(c.ObservadoN2) - c.EsperadoN2) / math.Sqrt(c.Variancia)
	}
	if c.EsperadoN2 >= minimoCelula {
		d := float64(c.ObservadoN2) - c.EsperadoN2
		t.r.Estatistica += d * d / c.EsperadoN2
		t.celulas++
	} else {
		t.poolO += float64(c.ObservadoN2)
		t.poolE += c.EsperadoN2
	}
	// The chi-square has little power against one counsellor far from
	// their share (one cell among hundreds of degrees of freedom), so the
	// most extreme counsellor is tested too: its two-sided tail under a
	// Poisson of its esperado (wider than the true Poisson-binomial, so
	// conservative), Bonferroni over the counsellors tested.
	if c.EsperadoN2 >= 1 {
		t.testados++
		if p := caudaPoisson(c.ObservadoN2, c.EsperadoN2); p < t.pMax {
			t.pMax, t.r.Extremo = p, c.ID
		}
	}
}

// Resultado ends the test: the two p-values, combined by Bonferroni. It
// carries no list of counsellors.
func (t *Teste) Resultado() Resultado {
	r, celulas := t.r, t.celulas
	if t.poolE >= minimoCelula {
		d := t.poolO - t.poolE
		r.Estatistica += d * d / t.poolE
		celulas++
	}
	pPearson := 1.0
	if celulas >= 2 {
		r.GrausLiberdade = celulas - 1
		pPearson = QuiQuadradoCauda(r.Estatistica, r.GrausLiberdade)
	}
	pMax := t.pMax
	if t.testados > 0 { // nobody tested: pMax stays 1, nothing suspicious
		pMax = math.Min(1, float64(t.testados)*pMax)
	}
	r.PValor = math.Min(1, 2*math.Min(pPearson, pMax))
	r.PValorQuiQuadrado, r.PValorExtremo = pPearson, pMax
	return r
}

// caudaPoisson is the two-sided tail of k under a Poisson of mean lambda:
// 2 min(P(X ≥ k), P(X ≤ k)), at most 1.
func caudaPoisson(k int64, lambda float64) float64 {
	// P(X ≤ k) = Q(k+1, λ); P(X ≥ k) = 1 − Q(k, λ) (Q the regularized
	// upper incomplete gamma, which QuiQuadradoCauda computes).
	baixo := QuiQuadradoCauda(2*lambda, 2*int(k+1))
	alto := 1.0
	if k > 0 {
		alto = 1 - QuiQuadradoCauda(2*lambda, 2*int(k))
	}
	return math.Min(1, 2*math.Min(baixo, alto))
}

// QuiQuadradoCauda is P(X ≥ x) for X ~ χ²(gl): the regularized upper
// incomplete gamma Q(gl/2, x/2), by its series below a+1 and its continued
// fraction above (Numerical Recipes §6.2).
func QuiQuadradoCauda(x float64, gl int) float64 {
	if x <= 0 || gl <= 0 {
		return 1
	}
	a, x := float64(gl)/2, x/2
	lg, _ := math.Lgamma(a)
	if x < a+1 {
		soma, termo := 1/a, 1/a
		for n := 1; n < 1000; n++ {
			termo *= x / (a + float64(n))
			soma += termo
			if math.Abs(termo) < math.Abs(soma)*1e-15 {
				break
			}
		}
		return math.Max(0, 1-soma*math.Exp(-x+a*math.Log(x)-lg))
	}
	const minimo = 1e-300
	b := x + 1 - a
	c := 1 / minimo
	d := 1 / b
	h := d
	for i := 1; i < 1000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < minimo {
			d = minimo
		}
		c = b + an/c
		if math.Abs(c) < minimo {
			c = minimo
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return math.Min(1, math.Exp(-x+a*math.Log(x)-lg)*h)
}
