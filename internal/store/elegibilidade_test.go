package store_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The phase-2 gates (CONTRACT §8) are applied to what the executor reads
// as the replay applies them: on random chains in every state, with
// external training records and links (valid, revoked, to another unit)
// written as the handlers write them, and the gates on or off, the step
// by step read (LerDegrau, elegibilidade.Subir) picks the step and the
// counsellors that Portoes.Aplicar and Filtrar pick over the phase-2 state
// the inputs give.
func TestElegiveisComPortoesIgualAoFiltro(t *testing.T) {
	ctx, st, q := open(t)
	agora := at(0)
	r := rand.New(rand.NewPCG(41, 8))
	for rodada := range 60 {
		g := elegibilidade.Portoes{CapacitacaoExterna: r.IntN(2) == 0, ExigirVinculo: r.IntN(2) == 0}
		cadeia := []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
		todos := povoarCadeia(t, st, r, cadeia, agora)
		fase2 := map[uuid.UUID]elegibilidade.Fase2{}
		for _, id := range todos {
			var f elegibilidade.Fase2
			if r.IntN(2) == 0 { // capacitação.concluída, as onCapacitacaoConcluida writes it
				check(t, store.Consultas(q).RegistrarCapacitacao(ctx, dbsqlc.RegistrarCapacitacaoParams{ConselheiroID: id, CursoID: "c", ConcluidaEm: "x", EventID: uuid.New(), Agora: agora}))
				_, err := store.Consultas(q).MarcarCapacitacaoConcluida(ctx, dbsqlc.MarcarCapacitacaoConcluidaParams{ID: id, EventID: uuid.New(), Agora: agora})
				check(t, err)
				f = elegibilidade.AposCapacitacao(f)
			}
			for range r.IntN(3) {
				uc, valido := cadeia[r.IntN(len(cadeia))], r.IntN(3) != 0
				check(t, store.Consultas(q).RegistrarVinculo(ctx, dbsqlc.RegistrarVinculoParams{ConselheiroID: id, UnidadeCivicaID: uc, Valido: valido, Origem: "vinculo.validado", EventID: uuid.New(), Agora: agora}))
				f = elegibilidade.AposVinculo(f, uc, valido)
			}
			fase2[id] = f
		}
		want := elegibilidade.Filtrar(cadeia, candidatosDaCadeia(t, q, cadeia, g, fase2), nil, agora)
		got, _, err := elegibilidade.Subir(cadeia, nil, agora, func(desde int) (elegibilidade.Degrau, error) {
			return q.LerDegrau(ctx, cadeia, desde, g)
		})
		check(t, err)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d (%+v): read step by step %+v, Go over the inputs %+v", rodada, g, got, want)
		}
	}
}
