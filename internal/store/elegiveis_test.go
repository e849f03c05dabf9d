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
	statuses := []string{elegibilidade.Disponivel, elegibilidade.Ocupado, elegibilidade.Suspenso, elegibilidade.Inativo}
	for rodada := range 60 {
		cadeia := []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
		var todos []uuid.UUID
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
				_, err := st.Pool.Exec(ctx, `UPDATE d6a.conselheiros SET data_suspensao_ate = $2 WHERE id = $1`, id, agora.Add(time.Hour))
				check(t, err)
			}
			if k := r.IntN(4); k < 2 {
				status := []string{"ativa", "concluida"}[k]
				_, err := st.Pool.Exec(ctx, `INSERT INTO d6a.atribuicoes (conselheiro_id, demanda_id, unidade_civica_id, seed_publico, metodo_sorteio, posicao_sorteada, total_elegiveis, status, data_sorteio, event_id_sorteio)
					VALUES ($1, gen_random_uuid(), $2, 's', 'fisher_yates', 0, 1, $3, $4, gen_random_uuid())`, id, cadeia[0], status, agora)
				check(t, err)
			}
		}
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
