package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Levels of the synthetic country, top down.
const (
	nivelPais = iota
	nivelEstado
	nivelMunicipio
	nivelBairro
	nivelMicroarea
	nNiveis
)

var nomeNivel = [nNiveis]string{"country", "states", "municipalities", "neighbourhoods", "micro-areas"}

// Sizes of a Brazil-like country (the figures).
var tamanhoNivel = [nNiveis]int{1, 27, 5_570, 50_000, 200_000}

// pais is a synthetic 5-level civic-unit hierarchy, generated
// deterministically from a seed. Index 0 is the country.
type pais struct {
	ids      []uuid.UUID
	parent   []int32 // -1 at the root
	porNivel [nNiveis][]int32
}

// gerarPais builds 1 country → 27 states → 5,570 municipalities → 50,000
// neighbourhoods → 200,000 micro-areas (255,598 units). Municipalities are
// spread over states and neighbourhoods over municipalities with a
// Zipf-like weight (a few big cities, many small ones); micro-areas are
// spread uniformly over neighbourhoods. Every unit has at least one child.
func gerarPais(seed uint64) *pais {
	rng := rand.New(rand.NewPCG(seed, 0x6436612d62656e63))
	total := 0
	for _, n := range tamanhoNivel {
		total += n
	}
	p := &pais{ids: make([]uuid.UUID, 0, total), parent: make([]int32, 0, total)}
	add := func(nivel int, parent int32) {
		i := int32(len(p.ids))
		p.ids = append(p.ids, uuidDe(rng))
		p.parent = append(p.parent, parent)
		p.porNivel[nivel] = append(p.porNivel[nivel], i)
	}
	add(nivelPais, -1)
	for nivel := nivelEstado; nivel < nNiveis; nivel++ {
		acima := p.porNivel[nivel-1]
		escolher := func() int { return rng.IntN(len(acima)) }
		if nivel != nivelMicroarea {
			escolher = escolhaZipf(rng, len(acima), 0.9)
		}
		for k := 0; k < tamanhoNivel[nivel]; k++ {
			if k < len(acima) {
				add(nivel, acima[k]) // at least one child each
				continue
			}
			add(nivel, acima[escolher()])
		}
	}
	return p
}

// uuidDe draws a version-4 UUID from rng (reproducible, unlike uuid.New).
func uuidDe(rng *rand.Rand) uuid.UUID {
	var u uuid.UUID
	a, b := rng.Uint64(), rng.Uint64()
	for i := range 8 {
		u[i] = byte(a >> (8 * i))
		u[8+i] = byte(b >> (8 * i))
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}

// escolhaZipf picks among n items with weight 1/(rank^s), ranks shuffled so
// the big items are not the first ones generated.
func escolhaZipf(rng *rand.Rand, n int, s float64) func() int {
	ordem := rng.Perm(n)
	acum := make([]float64, n)
	soma := 0.0
	for r := range n {
		soma += 1 / math.Pow(float64(r+1), s)
		acum[r] = soma
	}
	return func() int {
		x := rng.Float64() * soma
		return ordem[sort.SearchFloat64s(acum, x)]
	}
}

// Tamanho is the number of units.
func (p *pais) Tamanho() int { return len(p.ids) }

// criarHierarquia creates core.uc_polygons (the table d6a reads, CONTRACT
// §5) and loads the country into it with COPY.
func criarHierarquia(ctx context.Context, conn *pgx.Conn, p *pais, prog func(int)) error {
	if err := executarSQL(ctx, conn, `CREATE SCHEMA IF NOT EXISTS core`, `CREATE TABLE core.uc_polygons (id uuid NOT NULL, parent_uc_id uuid)`); err != nil {
		return err
	}
	i := 0
	n, err := conn.CopyFrom(ctx, pgx.Identifier{"core", "uc_polygons"}, []string{"id", "parent_uc_id"},
		pgx.CopyFromFunc(func() ([]any, error) {
			if i >= len(p.ids) {
				return nil, nil
			}
			var parent any
			if p.parent[i] >= 0 {
				parent = p.ids[p.parent[i]]
			}
			row := []any{p.ids[i], parent}
			i++
			if i%4096 == 0 || i == len(p.ids) {
				prog(i)
			}
			return row, nil
		}))
	if err != nil {
		return fmt.Errorf("COPY core.uc_polygons: %w", err)
	}
	if int(n) != len(p.ids) {
		return fmt.Errorf("COPY core.uc_polygons: %d rows, want %d", n, len(p.ids))
	}
	// The key is built after the load: one sort instead of 255,598 inserts.
	return executarSQL(ctx, conn, `ALTER TABLE core.uc_polygons ADD PRIMARY KEY (id)`, `ANALYZE core.uc_polygons`)
}

// formas are the country shapes: where counsellors register, as shares of
// K per level, uniformly inside each level. "sparse" has none above the
// municipality; "dense" puts 1% on states and 9% on municipalities (issue
// 11), so every draw has thousands of counsellors above its winning step.
var formas = map[string][]struct {
	nivel  int
	fracao float64
}{
	"sparse": {{nivelMicroarea, 0.60}, {nivelBairro, 0.30}, {nivelMunicipio, 0.10}},
	"dense":  {{nivelEstado, 0.01}, {nivelMunicipio, 0.09}, {nivelBairro, 0.90}},
}

// descreverForma is the shape in words, for the report.
func descreverForma(forma string) string {
	var p []string
	for _, d := range formas[forma] {
		p = append(p, fmt.Sprintf("%.0f%% on %s", 100*d.fracao, nomeNivel[d.nivel]))
	}
	return strings.Join(p, ", ")
}

// carregarConselheiros COPYs k available, trained counsellors into
// d6a.conselheiros (id = cidadao_id, CONTRACT §5), spread over the country
// by the shape forma. With analisar the table is then vacuumed and
// analyzed; without, it is left as a bulk load leaves it.
func carregarConselheiros(ctx context.Context, conn *pgx.Conn, p *pais, forma string, k int, seed uint64, analisar bool, prog func(int)) error {
	dist, ok := formas[forma]
	if !ok {
		return fmt.Errorf("unknown country shape %q", forma)
	}
	rng := rand.New(rand.NewPCG(seed, uint64(k)))
	limites := make([]int, len(dist))
	acum := 0.0
	for i, d := range dist {
		acum += d.fracao
		limites[i] = int(math.Round(acum * float64(k)))
	}
	limites[len(limites)-1] = k
	i := 0
	n, err := conn.CopyFrom(ctx, pgx.Identifier{"d6a", "conselheiros"},
		[]string{"id", "cidadao_id", "unidade_civica_id", "nivel_atuacao", "status", "capacitacao_concluida",
			"event_id_cadastro", "event_id_ultima_alteracao"},
		pgx.CopyFromFunc(func() ([]any, error) {
			if i >= k {
				return nil, nil
			}
			faixa := sort.SearchInts(limites, i+1)
			ucs := p.porNivel[dist[faixa].nivel]
			uc := p.ids[ucs[rng.IntN(len(ucs))]]
			id, ev := uuidDe(rng), uuidDe(rng)
			i++
			if i%4096 == 0 || i == k {
				prog(i)
			}
			return []any{id, id, uc, int32(1), "disponivel", true, ev, ev}, nil
		}))
	if err != nil {
		return fmt.Errorf("COPY d6a.conselheiros: %w", err)
	}
	if int(n) != k {
		return fmt.Errorf("COPY d6a.conselheiros: %d rows, want %d", n, k)
	}
	if !analisar {
		return nil
	}
	_, err = conn.Exec(ctx, `VACUUM (ANALYZE) d6a.conselheiros`)
	return err
}
