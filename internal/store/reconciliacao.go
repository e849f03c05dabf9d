package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The repair after a failover (internal/reparo) reads and writes through
// these methods, in its own words and types, not sqlc's (its queries are
// sql/queries/reconciliacao.sql and a few shared ones); it declares them as
// reparo.Banco. They read and write; the repair decides (what is a
// conflict, what is re-created).

// SorteioReconciliado is a draw the bus holds and the database lost, as the
// repair re-creates it: the published conselheiro.sorteado and the demand's
// snapshot from its agenda item.
type SorteioReconciliado struct {
	EventID, ConselheiroID, DemandaID, UC uuid.UUID
	Seed, ListaHash                       string
	Posicao, Total                        int32
	Quando                                time.Time
	ScoreFinal                            float64
	CategoriaID                           string
	NivelPrecedencia                      int32
	GrupoID                               *uuid.UUID
}

// ResultadoPublicado is a result on the bus whose outbox row the database
// lost.
type ResultadoPublicado struct {
	EventID      uuid.UUID
	Tipo         string
	Subject      string
	CorrelacaoID *string
	Envelope     []byte
	Seq          int64
}

// Reconciliacao is the d6a.reconciliacoes row of a re-created draw. Base is
// empty, and BaseSeq 0, when the bus window read did not hold the seed's
// base.
type Reconciliacao struct {
	EventIDSorteio, AtribuicaoID, DemandaID, ConselheiroID uuid.UUID
	Seq                                                    int64
	Base                                                   string
	BaseSeq                                                int64
}

// ResultadoNovo is a result a unit of work just queued, not yet published.
type ResultadoNovo struct {
	EventID   uuid.UUID
	Tipo      string
	DemandaID uuid.UUID
}

// SorteioTemAtribuicao says whether the draw eventID has its assignment.
func (t Tx) SorteioTemAtribuicao(ctx context.Context, eventID uuid.UUID) (bool, error) {
	_, err := t.q.BuscarAtribuicaoPorEventIdSorteio(ctx, eventID)
	return Found(err)
}

// AtribuicaoAtivaDaDemanda reads the demand's active assignment, if any.
func (t Tx) AtribuicaoAtivaDaDemanda(ctx context.Context, demanda uuid.UUID) (AtribuicaoVigente, bool, error) {
	a, err := t.q.BuscarAtribuicaoAtivaPorDemanda(ctx, demanda)
	return vigente(a, err)
}

// AtribuicaoAtivaDoConselheiro reads the counsellor's active assignment, if
// any.
func (t Tx) AtribuicaoAtivaDoConselheiro(ctx context.Context, conselheiro uuid.UUID) (AtribuicaoVigente, bool, error) {
	a, err := t.q.BuscarAtribuicaoAtivaPorConselheiro(ctx, conselheiro)
	return vigente(a, err)
}

// RecriarAtribuicao writes the active assignment of a re-created draw and
// returns its id.
func (t Tx) RecriarAtribuicao(ctx context.Context, s SorteioReconciliado) (uuid.UUID, error) {
	hash := s.ListaHash
	return t.q.InserirAtribuicao(ctx, dbsqlc.InserirAtribuicaoParams{
		ConselheiroID: s.ConselheiroID, DemandaID: s.DemandaID, UnidadeCivicaID: s.UC,
		SeedPublico: s.Seed, PosicaoSorteada: s.Posicao, TotalElegiveis: s.Total,
		ListaElegiveisHash: &hash, DataSorteio: s.Quando, EventIDSorteio: s.EventID,
		ScoreFinal: s.ScoreFinal, CategoriaID: s.CategoriaID, NivelPrecedencia: s.NivelPrecedencia, GrupoID: s.GrupoID,
	})
}

// OcuparConselheiro marks the counsellor ocupado under eventID; false when
// no counsellor has that id.
func (t Tx) OcuparConselheiro(ctx context.Context, conselheiro, eventID uuid.UUID, agora time.Time) (bool, error) {
	n, err := t.q.MarcarConselheiroOcupado(ctx, dbsqlc.MarcarConselheiroOcupadoParams{ID: conselheiro, EventID: eventID, Agora: agora})
	return n > 0, err
}

// MarcarProcessado writes the inbox row of an input applied elsewhere (a
// row already there stays).
func (t Tx) MarcarProcessado(ctx context.Context, eventID uuid.UUID, tipo string, seq int64, agora time.Time) error {
	_, err := t.q.RegistrarEventoProcessado(ctx, dbsqlc.RegistrarEventoProcessadoParams{
		EventID: eventID, TipoEvento: tipo, Sequence: seq, Agora: agora,
	})
	return err
}

// TirarDaFila removes the demand from the pending queue; removida is false
// when it did not wait there.
func (t Tx) TirarDaFila(ctx context.Context, demanda uuid.UUID) (removida bool, err error) {
	n, err := t.q.RemoverFilaPendentePorDemanda(ctx, demanda)
	return n > 0, err
}

// DevolverOutboxPublicado writes the outbox row of a result already on the
// bus, marked published at agora (a row already there stays).
func (t Tx) DevolverOutboxPublicado(ctx context.Context, r ResultadoPublicado, agora time.Time) error {
	seq := r.Seq
	return t.q.InserirOutboxPublicado(ctx, dbsqlc.InserirOutboxPublicadoParams{
		EventID: r.EventID, Tipo: r.Tipo, Subject: r.Subject, CorrelacaoID: r.CorrelacaoID,
		Envelope: r.Envelope, Agora: agora, Sequence: &seq,
	})
}

// RegistrarReconciliacao writes the d6a.reconciliacoes row of a re-created
// draw.
func (t Tx) RegistrarReconciliacao(ctx context.Context, r Reconciliacao, agora time.Time) error {
	var base *string
	var baseSeq *int64
	if r.Base != "" {
		b, s := r.Base, r.BaseSeq
		base, baseSeq = &b, &s
	}
	return t.q.InserirReconciliacao(ctx, dbsqlc.InserirReconciliacaoParams{
		EventIDSorteio: r.EventIDSorteio, AtribuicaoID: r.AtribuicaoID, DemandaID: r.DemandaID, ConselheiroID: r.ConselheiroID,
		Sequence: r.Seq, Base: base, BaseSequence: baseSeq, Agora: agora,
	})
}

// ResultadosNovos lists the results the unit of work at agora queued and
// has not published (its rows carry its clock reading, and the executor's
// global lock keeps every other unit out).
func (t Tx) ResultadosNovos(ctx context.Context, agora time.Time) ([]ResultadoNovo, error) {
	rows, err := t.q.OutboxNaoPublicadoEm(ctx, agora)
	if err != nil {
		return nil, err
	}
	out := make([]ResultadoNovo, len(rows))
	for i, r := range rows {
		out[i] = ResultadoNovo{EventID: r.EventID, Tipo: r.Tipo, DemandaID: r.DemandaID}
	}
	return out, nil
}

// The check of the bus against the database (internal/verificar/barramento)
// asks, of a page of event ids, which the database holds.

// ResultadosNoOutbox is those of ids (published events) whose outbox row
// exists.
func (t Tx) ResultadosNoOutbox(ctx context.Context, ids []uuid.UUID) ([]uuid.UUID, error) {
	return t.q.OutboxExistentes(ctx, ids)
}

// SorteiosComAtribuicao is those of ids (conselheiro.sorteado event ids)
// whose assignment exists.
func (t Tx) SorteiosComAtribuicao(ctx context.Context, ids []uuid.UUID) ([]uuid.UUID, error) {
	return t.q.AtribuicoesExistentes(ctx, ids)
}
