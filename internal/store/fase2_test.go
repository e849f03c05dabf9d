package store_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/store"
)

// The phase-2 gates (CONTRACT §8) in SQL and in Go agree: on random chains
// in every state, with external training records and links (valid,
// revoked, to another unit) written as the handlers write them, and the
// gates on or off, BuscarElegiveisDoDegrau and BuscarElegiveisDosDegraus
// pick the step and the counsellors that Portoes.Aplicar and Filtrar pick.
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
				check(t, q.RegistrarCapacitacao(ctx, store.RegistrarCapacitacaoParams{ConselheiroID: id, CursoID: "c", ConcluidaEm: "x", EventID: uuid.New(), Agora: agora}))
				_, err := q.MarcarCapacitacaoConcluida(ctx, store.MarcarCapacitacaoConcluidaParams{ID: id, EventID: uuid.New(), Agora: agora})
				check(t, err)
				f = elegibilidade.AposCapacitacao(f)
			}
			for range r.IntN(3) {
				uc, valido := cadeia[r.IntN(len(cadeia))], r.IntN(3) != 0
				check(t, q.RegistrarVinculo(ctx, store.RegistrarVinculoParams{ConselheiroID: id, UnidadeCivicaID: uc, Valido: valido, Origem: "vinculo.validado", EventID: uuid.New(), Agora: agora}))
				f = elegibilidade.AposVinculo(f, uc, valido)
			}
			fase2[id] = f
		}
		linhas := val(q.BuscarCandidatosPorUcs(ctx, cadeia)).must(t)
		cands := make([]elegibilidade.Candidato, len(linhas))
		for i, l := range linhas {
			f := fase2[l.ID]
			f.Autodeclarada = l.CapacitacaoConcluida
			cands[i] = g.Aplicar(elegibilidade.Candidato{ID: l.ID, UC: l.UnidadeCivicaID, Status: l.Status, SuspensaoAte: l.DataSuspensaoAte, Ocupado: l.Ocupado}, f)
		}
		want := elegibilidade.Filtrar(cadeia, cands, nil, agora)

		d := val(q.BuscarElegiveisDoDegrau(ctx, store.ElegiveisDoDegrauParams{Cadeia: cadeia, Agora: agora,
			CapacitacaoExterna: g.CapacitacaoExterna, ExigirVinculo: g.ExigirVinculo})).must(t)
		lote := val(q.BuscarElegiveisDosDegraus(ctx, store.ElegiveisDosDegrausParams{Ucs: cadeia, Inicios: []int32{0}, Tamanhos: []int32{3}, Agora: agora,
			CapacitacaoExterna: g.CapacitacaoExterna, ExigirVinculo: g.ExigirVinculo})).must(t)
		if len(lote) != 1 {
			t.Fatalf("round %d: %d rows from the batch read", rodada, len(lote))
		}
		for nome, l := range map[string]struct {
			ordem int32
			ids   []uuid.UUID
			cad   int64
			ocup  int64
		}{"degrau": {d.Ordem, d.Ids, d.Cadastrados, d.Ocupados}, "degraus": {lote[0].Ordem, lote[0].Ids, lote[0].Cadastrados, lote[0].Ocupados}} {
			if (len(l.ids) > 0) != (len(want.Elegiveis) > 0) {
				t.Fatalf("round %d (%+v) %s: SQL %+v, Go %+v", rodada, g, nome, l, want)
			}
			if len(l.ids) == 0 {
				if got := elegibilidade.MotivoPorContagem(int(l.cad), int(l.ocup)); got != want.Motivo {
					t.Fatalf("round %d %s: motive %s, Go %s", rodada, nome, got, want.Motivo)
				}
				continue
			}
			ids := slices.Clone(l.ids)
			slices.SortFunc(ids, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
			if cadeia[l.ordem-1] != want.Degrau || !slices.Equal(ids, want.Elegiveis) {
				t.Fatalf("round %d (%+v) %s: SQL step %d %v, Go step %v %v", rodada, g, nome, l.ordem, ids, want.Degrau, want.Elegiveis)
			}
		}
	}
}
