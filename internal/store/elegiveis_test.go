package store_test

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The executor reads a chain step by step (BuscarDegrausCadastrados, one
// step holding registered counsellors per round trip) and decides with
// elegibilidade.Subir; what it decides is what elegibilidade.Filtrar, the
// rule the replay runs, decides over every counsellor of the chain. On
// random chains of counsellors in every state (statuses, training, current
// and expired suspensions, active and closed assignments, an excluded
// refuser): the same step, counsellors, suspensions ended, motive and
// counts, and each read is the first step at or above the one asked that
// holds anyone.
func TestSubirIgualAoFiltro(t *testing.T) {
	ctx, st, q := open(t)
	agora := at(0)
	r := rand.New(rand.NewPCG(3, 5))
	releituras := 0
	for rodada := range 60 {
		cadeia := []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
		todos := povoarCadeia(t, st, r, cadeia, agora)
		var excluir *uuid.UUID
		if len(todos) > 0 && r.IntN(3) == 0 {
			excluir = &todos[r.IntN(len(todos))]
		}
		cands := candidatosDaCadeia(t, q, cadeia, elegibilidade.Portoes{}, nil)
		want := elegibilidade.Filtrar(cadeia, cands, excluir, agora)

		got, leituras, err := elegibilidade.Subir(cadeia, excluir, agora, func(desde int) (elegibilidade.Degrau, error) {
			d, err := q.LerDegrau(ctx, cadeia, desde, elegibilidade.Portoes{})
			conferirDegrau(t, rodada, cadeia, cands, desde, d)
			return d, err
		})
		check(t, err)
		releituras += leituras - 1
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: read step by step %+v, over the whole chain %+v", rodada, got, want)
		}
	}
	if releituras == 0 {
		t.Fatal("no chain needed a second read: the data exercise too little")
	}
}

// candidatosDaCadeia is every counsellor registered on cadeia, with the
// gates g applied over their phase-2 state fase2 (the replay's view). It
// reads the whole chain in one plain statement, independent of the
// step-by-step read it checks.
func candidatosDaCadeia(t *testing.T, q store.Tx, cadeia []uuid.UUID, g elegibilidade.Portoes, fase2 map[uuid.UUID]elegibilidade.Fase2) []elegibilidade.Candidato {
	t.Helper()
	rows, err := store.Conexao(q).Query(t.Context(), `
		SELECT c.id, c.unidade_civica_id, c.status, c.capacitacao_concluida, c.data_suspensao_ate,
		       EXISTS (SELECT 1 FROM d6a.atribuicoes a WHERE a.conselheiro_id = c.id AND a.status = 'ativa')
		FROM d6a.conselheiros c
		WHERE c.unidade_civica_id = ANY($1)
		ORDER BY c.id`, cadeia)
	check(t, err)
	defer rows.Close()
	cands := []elegibilidade.Candidato{}
	for rows.Next() {
		var c elegibilidade.Candidato
		var autodeclarada bool
		check(t, rows.Scan(&c.ID, &c.UC, &c.Status, &autodeclarada, &c.SuspensaoAte, &c.Ocupado))
		f := fase2[c.ID]
		f.Autodeclarada = autodeclarada
		cands = append(cands, g.Aplicar(c, f))
	}
	check(t, rows.Err())
	return cands
}

// conferirDegrau checks a read from position desde: the first step at or
// above it holding anyone, with all of its counsellors.
func conferirDegrau(t *testing.T, rodada int, cadeia []uuid.UUID, cands []elegibilidade.Candidato, desde int, d elegibilidade.Degrau) {
	t.Helper()
	pos := len(cadeia)
	for i := desde; i < len(cadeia) && pos == len(cadeia); i++ {
		if slices.ContainsFunc(cands, func(c elegibilidade.Candidato) bool { return c.UC == cadeia[i] }) {
			pos = i
		}
	}
	var ids []uuid.UUID
	for _, c := range d.Candidatos {
		ids = append(ids, c.ID)
	}
	var want []uuid.UUID
	for _, c := range cands {
		if pos < len(cadeia) && c.UC == cadeia[pos] {
			want = append(want, c.ID)
		}
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
	slices.SortFunc(want, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
	if d.Posicao != pos || !slices.Equal(ids, want) {
		t.Fatalf("round %d: read from %d gave step %d %v, want %d %v", rodada, desde, d.Posicao, ids, pos, want)
	}
}

// povoarCadeia registers up to 11 counsellors on random steps of cadeia, in
// every state: statuses, training, current and expired suspensions, active
// and closed assignments.
func povoarCadeia(t *testing.T, st *store.Store, r *rand.Rand, cadeia []uuid.UUID, agora time.Time) (todos []uuid.UUID) {
	t.Helper()
	ctx, q := t.Context(), st.Read()
	statuses := []string{elegibilidade.Disponivel, elegibilidade.Ocupado, elegibilidade.Suspenso, elegibilidade.Inativo}
	for range r.IntN(12) {
		id := uuid.New()
		todos = append(todos, id)
		check(t, store.Consultas(q).InserirConselheiro(ctx, dbsqlc.InserirConselheiroParams{
			CidadaoID: id, UnidadeCivicaID: cadeia[r.IntN(len(cadeia))], NivelAtuacao: 1,
			Status: statuses[r.IntN(len(statuses))], CapacitacaoConcluida: r.IntN(5) != 0, Agora: agora, EventID: uuid.New(),
		}))
		switch r.IntN(4) {
		case 0:
			_, err := st.Pool.Exec(ctx, `UPDATE d6a.conselheiros SET data_suspensao_ate = $2 WHERE id = $1`, id, agora.Add(-time.Hour))
			check(t, err)
		case 1:
			_, err := st.Pool.Exec(ctx, `UPDATE d6a.conselheiros SET data_suspensao_ate = $2 WHERE id = $1`, id, agora.Add(time.Duration(1+r.IntN(9))*time.Hour))
			check(t, err)
		}
		if k := r.IntN(4); k < 2 {
			status := []string{"ativa", "concluida"}[k]
			_, err := st.Pool.Exec(ctx, `INSERT INTO d6a.atribuicoes (conselheiro_id, demanda_id, unidade_civica_id, seed_publico, metodo_sorteio, posicao_sorteada, total_elegiveis, status, data_sorteio, event_id_sorteio)
				VALUES ($1, gen_random_uuid(), $2, 's', 'fisher_yates', 0, 1, $3, $4, gen_random_uuid())`, id, cadeia[0], status, agora)
			check(t, err)
		}
	}
	return todos
}

// LerDegraus (BuscarDegrausCadastrados) reads many chains (of 1 to 4 steps) in one
// statement, the executor's read-ahead of a run of agenda items: for each,
// the same step and counsellors as the chain read alone (LerDegrau).
func TestDegrausCadastradosEmLote(t *testing.T) {
	ctx, st, q := open(t)
	agora := at(0)
	r := rand.New(rand.NewPCG(7, 9))
	var (
		cadeias [][]uuid.UUID
		pedidos []store.PedidoDegrau
	)
	for range 80 {
		cadeia := make([]uuid.UUID, 1+r.IntN(4))
		for i := range cadeia {
			cadeia[i] = uuid.New()
		}
		povoarCadeia(t, st, r, cadeia, agora)
		cadeias = append(cadeias, cadeia)
		pedidos = append(pedidos, store.PedidoDegrau{Cadeia: cadeia})
	}
	lidos := val(q.LerDegraus(ctx, pedidos, elegibilidade.Portoes{})).must(t)
	if len(lidos) != len(cadeias) {
		t.Fatalf("%d steps read for %d chains", len(lidos), len(cadeias))
	}
	vazias := 0
	for n, cadeia := range cadeias {
		got := lidos[n]
		if got.Posicao == len(cadeia) {
			vazias++
		}
		want := val(q.LerDegrau(ctx, cadeia, 0, elegibilidade.Portoes{})).must(t)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("chain %d: in the batch %+v, alone %+v", n+1, got, want)
		}
	}
	if vazias == 0 || vazias == len(cadeias) {
		t.Fatalf("%d of %d chains held nobody: the data exercise too little", vazias, len(cadeias))
	}
}
