package main

import (
	"context"
	"encoding/binary"
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
	nivel    []int8
	porNivel [nNiveis][]int32
}

// gerarPais builds the 255,598 units. Municipalities are spread over
// states and neighbourhoods over municipalities with a Zipf-like weight (a
// few big cities, many small ones); micro-areas uniformly over
// neighbourhoods. Every unit has at least one child.
func gerarPais(seed uint64) *pais {
	rng := rand.New(rand.NewPCG(seed, 0x6436612d62656e63))
	p := &pais{}
	add := func(nivel int, parent int32) {
		p.porNivel[nivel] = append(p.porNivel[nivel], int32(len(p.ids)))
		p.ids = append(p.ids, uuidDe(rng))
		p.parent = append(p.parent, parent)
		p.nivel = append(p.nivel, int8(nivel))
	}
	add(nivelPais, -1)
	for nivel := nivelEstado; nivel < nNiveis; nivel++ {
		acima := p.porNivel[nivel-1]
		escolher := func() int { return rng.IntN(len(acima)) }
		if nivel != nivelMicroarea {
			escolher = escolhaZipf(rng, len(acima), 0.9)
		}
		for k := range tamanhoNivel[nivel] {
			if k < len(acima) {
				add(nivel, acima[k]) // at least one child each
			} else {
				add(nivel, acima[escolher()])
			}
		}
	}
	return p
}

// uuidDe draws a version-4 UUID from rng (reproducible, unlike uuid.New).
func uuidDe(rng *rand.Rand) uuid.UUID {
	var u uuid.UUID
	binary.LittleEndian.PutUint64(u[:8], rng.Uint64())
	binary.LittleEndian.PutUint64(u[8:], rng.Uint64())
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
	return func() int { return ordem[sort.SearchFloat64s(acum, rng.Float64()*soma)] }
}

func (p *pais) Tamanho() int { return len(p.ids) }

// copiar COPYs n rows made by linha into tabela, telling prog every 4,096.
func copiar(ctx context.Context, conn *pgx.Conn, tabela string, cols []string, n int, linha func(i int) []any, prog func(int)) error {
	got, err := conn.CopyFrom(ctx, pgx.Identifier(strings.Split(tabela, ".")), cols, pgx.CopyFromSlice(n, func(i int) ([]any, error) {
		row := linha(i)
		if i+1 == n || (i+1)%4096 == 0 {
			prog(i + 1)
		}
		return row, nil
	}))
	if err == nil && int(got) != n {
		err = fmt.Errorf("%d rows, want %d", got, n)
	}
	if err != nil {
		return fmt.Errorf("COPY %s: %w", tabela, err)
	}
	return nil
}

// criarHierarquia creates core.uc_polygons (the table d6a reads, CONTRACT
// §5) and loads the country into it.
func criarHierarquia(ctx context.Context, conn *pgx.Conn, p *pais, prog func(int)) error {
	if err := executarSQL(ctx, conn, `CREATE SCHEMA IF NOT EXISTS core`, `CREATE TABLE core.uc_polygons (id uuid NOT NULL, parent_uc_id uuid)`); err != nil {
		return err
	}
	err := copiar(ctx, conn, "core.uc_polygons", []string{"id", "parent_uc_id"}, len(p.ids), func(i int) []any {
		if p.parent[i] < 0 {
			return []any{p.ids[i], nil}
		}
		return []any{p.ids[i], p.ids[p.parent[i]]}
	}, prog)
	if err != nil {
		return err
	}
	// The key is built after the load: one sort instead of 255,598 inserts.
	return executarSQL(ctx, conn, `ALTER TABLE core.uc_polygons ADD PRIMARY KEY (id)`, `ANALYZE core.uc_polygons`)
}

// parcela is a share of K registered on one level.
type parcela struct {
	nivel  int
	fracao float64
}

// formas are the country shapes, uniform inside each level. "sparse" has
// none above the municipality; "dense" puts 1% on states and 9% on
// municipalities (issue 11), so every draw has thousands of counsellors
// above its winning step.
var formas = map[string][]parcela{
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
// d6a.conselheiros (id = cidadao_id, CONTRACT §5) in the shape forma, then
// vacuums and analyzes them when analisar (else the table stays as a bulk
// load leaves it).
func carregarConselheiros(ctx context.Context, conn *pgx.Conn, p *pais, forma string, k int, seed uint64, analisar bool, prog func(int)) error {
	dist := formas[forma]
	rng := rand.New(rand.NewPCG(seed, uint64(k)))
	limites := make([]int, len(dist))
	acum := 0.0
	for i, d := range dist {
		acum += d.fracao
		limites[i] = int(math.Round(acum * float64(k)))
	}
	limites[len(limites)-1] = k
	cols := []string{"id", "cidadao_id", "unidade_civica_id", "nivel_atuacao", "status", "capacitacao_concluida", "event_id_cadastro", "event_id_ultima_alteracao"}
	err := copiar(ctx, conn, "d6a.conselheiros", cols, k, func(i int) []any {
		ucs := p.porNivel[dist[sort.SearchInts(limites, i+1)].nivel]
		uc := p.ids[ucs[rng.IntN(len(ucs))]]
		id, ev := uuidDe(rng), uuidDe(rng)
		return []any{id, id, uc, int32(1), "disponivel", true, ev, ev}
	}, prog)
	if err != nil || !analisar {
		return err
	}
	return executarSQL(ctx, conn, `VACUUM (ANALYZE) d6a.conselheiros`)
}
