package store_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/store"
)

// The hot path's combined statements write exactly what their separate
// counterparts do.

func TestGravarSorteio(t *testing.T) {
	t.Parallel()
	ctx, st, q := open(t)
	uc := uuid.New()
	p := conselheiroParams(uc, "disponivel")
	check(t, q.InserirConselheiro(ctx, p))
	grupo, evento, atrib := uuid.New(), uuid.New(), uuid.New()
	hash, corr := "h", "corr-1"
	err := st.InTx(ctx, func(tx store.Tx) error {
		return tx.GravarSorteio(ctx, store.GravarSorteioParams{
			AtribuicaoID: atrib, EventIDSorteio: evento, ConselheiroID: p.CidadaoID, DemandaID: uuid.New(),
			UnidadeCivicaID: uc, Seed: "s", PosicaoSorteada: 0, TotalElegiveis: 1, ListaElegiveisHash: &hash,
			DataSorteio: at(0), ScoreFinal: 12.5, CategoriaID: "SAUDE", NivelPrecedencia: 3, GrupoID: &grupo,
			Base: "b", TimestampSorteio: "2026-11-29T12:00:00.000Z", ElegiveisEntrada: []string{p.CidadaoID.String()},
			Ordenados: []string{p.CidadaoID.String()}, Degrau: uc, Cadeia: []string{uc.String()}, Agora: at(0),
			Subject: "eventos.conselheiro.sorteado", CorrelacaoID: &corr, Envelope: []byte(`{"a":1}`),
		})
	})
	check(t, err)
	a := val(q.BuscarAtribuicaoPorEventIdSorteio(ctx, evento)).must(t)
	if a.ID != atrib || a.Status != "ativa" || a.ScoreFinal != 12.5 || a.CategoriaID != "SAUDE" || a.NivelPrecedencia != 3 || *a.GrupoID != grupo {
		t.Fatalf("assignment %+v", a)
	}
	c := val(q.BuscarConselheiroPorId(ctx, p.CidadaoID)).must(t)
	if c.Status != "ocupado" || c.EventIDUltimaAlteracao != evento || c.DataUltimaAtribuicao == nil {
		t.Fatalf("counsellor %+v", c)
	}
	au := val(q.BuscarAuditoria(ctx, evento)).must(t)
	if au.AtribuicaoID != atrib || au.Selecionado != p.CidadaoID || au.Base != "b" {
		t.Fatalf("audit %+v", au)
	}
	o := val(q.BuscarOutboxPorEventId(ctx, evento)).must(t)
	if o.Tipo != "conselheiro.sorteado" || o.PublicadoEm != nil || *o.CorrelacaoID != corr {
		t.Fatalf("outbox %+v", o)
	}
	// The partial unique index still refuses a second active assignment.
	err = st.InTx(ctx, func(tx store.Tx) error {
		return tx.GravarSorteio(ctx, store.GravarSorteioParams{
			AtribuicaoID: uuid.New(), EventIDSorteio: uuid.New(), ConselheiroID: p.CidadaoID, DemandaID: uuid.New(),
			UnidadeCivicaID: uc, Seed: "s", ListaElegiveisHash: &hash, DataSorteio: at(0), Base: "b",
			TimestampSorteio: "t", ElegiveisEntrada: []string{}, Ordenados: []string{}, Degrau: uc, Cadeia: []string{},
			Agora: at(0), Subject: "x", CorrelacaoID: &corr, Envelope: []byte(`{}`),
		})
	})
	if c, ok := store.UniqueViolation(err); !ok || c != "atribuicoes_uma_ativa_por_conselheiro_key" {
		t.Fatalf("second active assignment: %v", err)
	}
}

func TestGuardasAgendaERegistrarProcessamento(t *testing.T) {
	t.Parallel()
	ctx, st, q := open(t)
	demanda, evento := uuid.New(), uuid.New()
	g := val(q.GuardasAgenda(ctx, store.GuardasAgendaParams{EventID: evento, DemandaID: demanda})).must(t)
	if g.PendentePeloEvento || g.Atribuida || g.Pendente {
		t.Fatalf("empty database: %+v", g)
	}
	check(t, q.InserirFilaPendente(ctx, store.InserirFilaPendenteParams{
		DemandaID: demanda, UnidadeCivicaID: uuid.New(), CategoriaID: "c", NivelPrecedencia: 1, Agora: at(0), EventIDOrigem: evento,
	}))
	g = val(q.GuardasAgenda(ctx, store.GuardasAgendaParams{EventID: evento, DemandaID: uuid.New()})).must(t)
	if !g.PendentePeloEvento || g.Pendente {
		t.Fatalf("by event: %+v", g)
	}
	g = val(q.GuardasAgenda(ctx, store.GuardasAgendaParams{EventID: uuid.New(), DemandaID: demanda})).must(t)
	if g.PendentePeloEvento || !g.Pendente {
		t.Fatalf("by demand: %+v", g)
	}

	check(t, st.InTx(ctx, func(tx store.Tx) error {
		return tx.RegistrarProcessamento(ctx, store.RegistrarProcessamentoParams{EventID: evento, TipoEvento: "agenda.item_disponível", Sequence: 7, Agora: at(0)})
	}))
	if !val(q.EventoJaProcessado(ctx, evento)).must(t) {
		t.Fatal("inbox row missing")
	}
	check(t, q.RegistrarProcessamento(ctx, store.RegistrarProcessamentoParams{EventID: uuid.New(), TipoEvento: "agenda.item_disponível", Sequence: 9, Agora: at(0)}))
	offs := val(q.BuscarTodosOffsets(ctx)).must(t)
	if len(offs) != 1 || offs[0].LastSequence != 9 {
		t.Fatalf("offsets %+v", offs)
	}
	// The same event twice is refused by the inbox's key.
	err := q.RegistrarProcessamento(ctx, store.RegistrarProcessamentoParams{EventID: evento, TipoEvento: "agenda.item_disponível", Sequence: 10, Agora: at(0)})
	if c, ok := store.UniqueViolation(err); !ok || c != "eventos_processados_pkey" {
		t.Fatalf("duplicate event: %v", err)
	}
}
