package store_test

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The hot path's combined statements write exactly what their separate
// counterparts do.

// GravarSorteios, the one write of a draw (a batch's, or one unit's at
// once), writes the assignment, the counsellor's status the rules gave and
// the audit record; the partial unique index still refuses a second active
// assignment.
func TestGravarSorteios(t *testing.T) {
	t.Parallel()
	ctx, st, q := open(t)
	uc := uuid.New()
	p := conselheiroParams(uc, "disponivel")
	check(t, store.Consultas(q).InserirConselheiro(ctx, p))
	grupo, evento, atrib := uuid.New(), uuid.New(), uuid.New()
	linha := func(atrib, evento uuid.UUID) []byte {
		b, err := json.Marshal([]map[string]any{{
			"atribuicao_id": atrib, "event_id_sorteio": evento, "conselheiro_id": p.CidadaoID, "demanda_id": uuid.New(),
			"unidade_civica_id": uc, "seed": "s", "posicao_sorteada": 0, "total_elegiveis": 1, "lista_elegiveis_hash": "h",
			"data_sorteio": at(0), "score_final": 12.5, "categoria_id": "SAUDE", "nivel_precedencia": 3, "grupo_id": grupo,
			"base": "b", "base_sequence": 7, "timestamp_sorteio": "2026-11-29T12:00:00.000Z",
			"elegiveis_entrada": []string{p.CidadaoID.String()}, "ordenados": []string{p.CidadaoID.String()},
			"degrau": uc, "cadeia": []string{uc.String()}, "excluido": nil, "agora": at(0), "status": elegibilidade.Ocupado,
		}})
		check(t, err)
		return b
	}
	err := st.InTx(ctx, func(tx store.Tx) error {
		return tx.GravarSorteios(ctx, linha(atrib, evento), []uuid.UUID{p.CidadaoID})
	})
	check(t, err)
	a := val(store.Consultas(q).BuscarAtribuicaoPorEventIdSorteio(ctx, evento)).must(t)
	if a.ID != atrib || a.Status != "ativa" || a.ScoreFinal != 12.5 || a.CategoriaID != "SAUDE" || a.NivelPrecedencia != 3 || *a.GrupoID != grupo {
		t.Fatalf("assignment %+v", a)
	}
	c := val(store.Consultas(q).BuscarConselheiroPorId(ctx, p.CidadaoID)).must(t)
	if c.Status != "ocupado" || c.EventIDUltimaAlteracao != evento || c.DataUltimaAtribuicao == nil {
		t.Fatalf("counsellor %+v", c)
	}
	au := val(store.Consultas(q).BuscarAuditoria(ctx, evento)).must(t)
	if au.AtribuicaoID != atrib || au.Selecionado != p.CidadaoID || au.Base != "b" {
		t.Fatalf("audit %+v", au)
	}
	err = st.InTx(ctx, func(tx store.Tx) error {
		return tx.GravarSorteios(ctx, linha(uuid.New(), uuid.New()), []uuid.UUID{p.CidadaoID})
	})
	if c, ok := store.UniqueViolation(err); !ok || c != "atribuicoes_uma_ativa_por_conselheiro_key" {
		t.Fatalf("second active assignment: %v", err)
	}
}

func TestGuardasAgendaERegistrarProcessamento(t *testing.T) {
	t.Parallel()
	ctx, st, q := open(t)
	demanda, evento := uuid.New(), uuid.New()
	g := val(store.Consultas(q).GuardasAgenda(ctx, dbsqlc.GuardasAgendaParams{EventID: evento, DemandaID: demanda})).must(t)
	if g.PendentePeloEvento || g.Atribuida || g.Pendente {
		t.Fatalf("empty database: %+v", g)
	}
	enfileirar(t, q, linhaPendente{
		DemandaID: demanda, UnidadeCivicaID: uuid.New(), CategoriaID: "c", NivelPrecedencia: 1, Agora: at(0), EventIDOrigem: evento, Tentativas: 1,
	})
	g = val(store.Consultas(q).GuardasAgenda(ctx, dbsqlc.GuardasAgendaParams{EventID: evento, DemandaID: uuid.New()})).must(t)
	if !g.PendentePeloEvento || g.Pendente {
		t.Fatalf("by event: %+v", g)
	}
	g = val(store.Consultas(q).GuardasAgenda(ctx, dbsqlc.GuardasAgendaParams{EventID: uuid.New(), DemandaID: demanda})).must(t)
	if g.PendentePeloEvento || !g.Pendente {
		t.Fatalf("by demand: %+v", g)
	}

	check(t, st.InTx(ctx, func(tx store.Tx) error {
		return store.Consultas(tx).RegistrarProcessamento(ctx, dbsqlc.RegistrarProcessamentoParams{EventID: evento, TipoEvento: "agenda.item_disponível", Sequence: 7, Agora: at(0)})
	}))
	if !val(store.Consultas(q).EventoJaProcessado(ctx, evento)).must(t) {
		t.Fatal("inbox row missing")
	}
	check(t, store.Consultas(q).RegistrarProcessamento(ctx, dbsqlc.RegistrarProcessamentoParams{EventID: uuid.New(), TipoEvento: "agenda.item_disponível", Sequence: 9, Agora: at(0)}))
	var tipos, ultima int64
	check(t, st.Pool.QueryRow(ctx, `SELECT count(*), max(last_sequence) FROM d6a.consumer_offset`).Scan(&tipos, &ultima))
	if tipos != 1 || ultima != 9 {
		t.Fatalf("%d offsets, last sequence %d; want 1, 9", tipos, ultima)
	}
	// The same event twice is refused by the inbox's key.
	err := store.Consultas(q).RegistrarProcessamento(ctx, dbsqlc.RegistrarProcessamentoParams{EventID: evento, TipoEvento: "agenda.item_disponível", Sequence: 10, Agora: at(0)})
	if c, ok := store.UniqueViolation(err); !ok || c != "eventos_processados_pkey" {
		t.Fatalf("duplicate event: %v", err)
	}
}
