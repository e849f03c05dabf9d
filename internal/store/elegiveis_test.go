package store_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/store"
)

// BuscarElegiveisDoDegrau is spec 4.3 in SQL; elegibilidade.Filtrar is the
// same rule in Go over every counsellor of the chain. On random chains of
// counsellors in every state (statuses, training, current and expired
// suspensions, active and closed assignments, an excluded refuser), both
// pick the same step and the same counsellors, and ContarCadeia gives the
// same motive when nobody qualifies.
func TestElegiveisDoDegrauIgualAoFiltro(t *testing.T) {
	ctx, st, q := open(t)
	agora := at(0)
	r := rand.New(rand.NewPCG(3, 5))
	for rodada := range 60 {
		cadeia := []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
		todos := povoarCadeia(t, st, r, cadeia, agora)
		var excluir *uuid.UUID
		if len(todos) > 0 && r.IntN(3) == 0 {
			excluir = &todos[r.IntN(len(todos))]
		}
		linhas := val(q.BuscarCandidatosPorUcs(ctx, cadeia)).must(t)
		cands := make([]elegibilidade.Candidato, len(linhas))
		for i, l := range linhas {
			cands[i] = elegibilidade.Candidato{ID: l.ID, UC: l.UnidadeCivicaID, Status: l.Status, Capacitacao: l.CapacitacaoConcluida, SuspensaoAte: l.DataSuspensaoAte, Ocupado: l.Ocupado}
		}
		want := elegibilidade.Filtrar(cadeia, cands, excluir, agora)

		d := val(q.BuscarElegiveisDoDegrau(ctx, store.ElegiveisDoDegrauParams{Cadeia: cadeia, Agora: agora, Excluir: excluir})).must(t)
		achou := len(d.Ids) > 0
		if achou != (len(want.Elegiveis) > 0) {
			t.Fatalf("round %d: SQL found %v (%+v), Go %+v", rodada, achou, d, want)
		}
		if !achou {
			if got := elegibilidade.MotivoPorContagem(int(d.Cadastrados), int(d.Ocupados)); got != want.Motivo {
				t.Fatalf("round %d: motive %s from counts %+v, Go %s", rodada, got, d, want.Motivo)
			}
			continue
		}
		slices.SortFunc(d.Ids, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
		if cadeia[d.Ordem-1] != want.Degrau || !slices.Equal(d.Ids, want.Elegiveis) {
			t.Fatalf("round %d: SQL step %d %v, Go step %v %v", rodada, d.Ordem, d.Ids, want.Degrau, want.Elegiveis)
		}
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
		check(t, q.InserirConselheiro(ctx, store.InserirConselheiroParams{
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

// BuscarElegiveisDosDegraus reads many chains (of 1 to 4 steps) in one
// statement: for each, the same step, counsellors and counts as
// BuscarElegiveisDoDegrau, and proxima, the earliest suspension end at or
// after agora among the trained, disponivel or suspenso counsellors of the
// steps it walked.
func TestElegiveisDosDegrausIgualAoDegrau(t *testing.T) {
	ctx, st, q := open(t)
	agora := at(0)
	r := rand.New(rand.NewPCG(7, 9))
	var (
		cadeias [][]uuid.UUID
		p       store.ElegiveisDosDegrausParams
	)
	for range 80 {
		cadeia := make([]uuid.UUID, 1+r.IntN(4))
		for i := range cadeia {
			cadeia[i] = uuid.New()
		}
		povoarCadeia(t, st, r, cadeia, agora)
		cadeias = append(cadeias, cadeia)
		p.Inicios = append(p.Inicios, int32(len(p.Ucs)))
		p.Tamanhos = append(p.Tamanhos, int32(len(cadeia)))
		p.Ucs = append(p.Ucs, cadeia...)
	}
	p.Agora = agora
	linhas := val(q.BuscarElegiveisDosDegraus(ctx, p)).must(t)
	if len(linhas) != len(cadeias) {
		t.Fatalf("%d rows for %d chains", len(linhas), len(cadeias))
	}
	achados := 0
	for n, l := range linhas {
		cadeia := cadeias[n]
		want := val(q.BuscarElegiveisDoDegrau(ctx, store.ElegiveisDoDegrauParams{Cadeia: cadeia, Agora: agora})).must(t)
		slices.SortFunc(want.Ids, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
		slices.SortFunc(l.Ids, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
		if int(l.Cadeia) != n+1 || l.Ordem != want.Ordem || !slices.Equal(l.Ids, want.Ids) ||
			l.Cadastrados != want.Cadastrados || l.Ocupados != want.Ocupados {
			t.Fatalf("chain %d: got %+v, one by one %+v", n+1, l, want)
		}
		if len(l.Ids) > 0 {
			achados++
		}
		andados := cadeia
		if l.Ordem > 0 {
			andados = cadeia[:l.Ordem]
		}
		var proxima *time.Time
		err := st.Pool.QueryRow(ctx, `SELECT min(data_suspensao_ate) FROM d6a.conselheiros
			WHERE unidade_civica_id = ANY($1) AND status IN ('disponivel', 'suspenso') AND capacitacao_concluida
			  AND data_suspensao_ate >= $2`, andados, agora).Scan(&proxima)
		check(t, err)
		if (proxima == nil) != (l.Proxima == nil) || (proxima != nil && !proxima.Equal(*l.Proxima)) {
			t.Fatalf("chain %d: proxima %v, want %v", n+1, l.Proxima, proxima)
		}
	}
	if achados == 0 || achados == len(cadeias) {
		t.Fatalf("%d of %d chains had a winning step: the data exercise too little", achados, len(cadeias))
	}
}
