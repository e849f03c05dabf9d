package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The outbox (d6a.outbox): the results a unit of work queued, until the
// relay publishes them on the bus.

// LinhaOutbox is an outbox row waiting for the bus.
type LinhaOutbox struct {
	ID       int64
	EventID  uuid.UUID
	Subject  string
	Envelope []byte
	// EntradaSequence is the input whose unit of work queued it (nil: none).
	EntradaSequence *int64
	// BeaconRodada is a draw's beacon round (header D6a-Beacon-Rodada; nil:
	// none).
	BeaconRodada *int64
}

// SemEsperarWAL begins the relay's transactions and, in the same round
// trip, lets their commit skip the WAL flush: a mark lost in a database
// crash only republishes the row under the same Nats-Msg-Id, which the
// stream drops as a duplicate. The draw's own commit stays synchronous.
var SemEsperarWAL = pgx.TxOptions{BeginQuery: "BEGIN; SET LOCAL synchronous_commit = off"}

// MarcarPublicados marks the rows of these results published, each with the
// stream sequence the bus gave it, at agora.
func (s *Store) MarcarPublicados(ctx context.Context, eventIDs []uuid.UUID, seqs []int64, agora time.Time) error {
	return s.InTxWith(ctx, SemEsperarWAL, func(tx Tx) error {
		if _, err := tx.q.AjustarPlanos(ctx); err != nil {
			return err
		}
		return tx.q.MarcarOutboxPublicadosPorEventId(ctx, dbsqlc.MarcarOutboxPublicadosPorEventIdParams{EventIds: eventIDs, Sequences: seqs, Agora: agora})
	})
}

// PublicarPendentes locks up to limite unpublished rows, oldest first (SKIP
// LOCKED: a second instance's relay takes others), hands them to publicar,
// and marks published, in the same transaction, the rows publicar returns
// with their stream sequences. It returns how many it marked; publicar's
// error only when it returned none (a row that failed goes out on a later
// pass).
func (s *Store) PublicarPendentes(ctx context.Context, limite int32, agora func() time.Time,
	publicar func(context.Context, []LinhaOutbox) (ids, seqs []int64, err error)) (int, error) {
	n := 0
	err := s.InTxWith(ctx, SemEsperarWAL, func(tx Tx) error {
		if _, err := tx.q.AjustarPlanos(ctx); err != nil {
			return err
		}
		rows, err := tx.q.BuscarOutboxPendentes(ctx, limite)
		if err != nil || len(rows) == 0 {
			return err
		}
		linhas := make([]LinhaOutbox, len(rows))
		for i, r := range rows {
			linhas[i] = LinhaOutbox(r)
		}
		ids, seqs, err := publicar(ctx, linhas)
		if len(ids) == 0 {
			return err
		}
		if err := tx.q.MarcarOutboxPublicados(ctx, dbsqlc.MarcarOutboxPublicadosParams{Ids: ids, Sequences: seqs, Agora: agora().UTC()}); err != nil {
			return err
		}
		n = len(ids)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// GravarOutbox writes the outbox rows a batch queued, in decision order,
// in one statement: linhas is their JSON (atribuicao's lote.go).
func (t Tx) GravarOutbox(ctx context.Context, linhas []byte) error {
	return t.q.InserirOutboxLote(ctx, linhas)
}

// OutboxJaTem reports whether the outbox holds the event eventID: an event
// whose id is derived (a timeout's refusal, a sweep's trigger, a
// suspension's end) is queued once.
func (t Tx) OutboxJaTem(ctx context.Context, eventID uuid.UUID) (bool, error) {
	return t.q.ExisteOutboxPorEventId(ctx, eventID)
}

// SemCandidatosPublicado reports whether a result of tipo for the
// correlation is in the outbox (spec 3.9: one sorteio.sem_candidatos per
// demand).
func (t Tx) SemCandidatosPublicado(ctx context.Context, tipo, correlacao string) (bool, error) {
	return t.q.ExisteOutboxPorTipoCorrelacao(ctx, dbsqlc.ExisteOutboxPorTipoCorrelacaoParams{Tipo: tipo, CorrelacaoID: &correlacao})
}

// EventoNoOutbox is an event as the outbox holds it: its envelope and,
// once published, its stream sequence (nil before).
type EventoNoOutbox struct {
	Envelope []byte
	Sequence *int64
}

// OutboxPorEvento reads the outbox row of the event eventID.
func (t Tx) OutboxPorEvento(ctx context.Context, eventID uuid.UUID) (EventoNoOutbox, bool, error) {
	o, err := t.q.BuscarOutboxPorEventId(ctx, eventID)
	if achou, err := Found(err); !achou || err != nil {
		return EventoNoOutbox{}, false, err
	}
	return EventoNoOutbox{Envelope: o.Envelope, Sequence: o.Sequence}, true, nil
}

// TotalOutboxPendentes counts the outbox rows not yet published.
func (t Tx) TotalOutboxPendentes(ctx context.Context) (int64, error) {
	return t.q.ContarOutboxPendentes(ctx)
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

// DevolverOutboxPublicado writes the outbox row of a result already on the
// bus, marked published at agora (a row already there stays).
func (t Tx) DevolverOutboxPublicado(ctx context.Context, r ResultadoPublicado, agora time.Time) error {
	seq := r.Seq
	return t.q.InserirOutboxPublicado(ctx, dbsqlc.InserirOutboxPublicadoParams{
		EventID: r.EventID, Tipo: r.Tipo, Subject: r.Subject, CorrelacaoID: r.CorrelacaoID,
		Envelope: r.Envelope, Agora: agora, Sequence: &seq,
	})
}

// ResultadosNoOutbox is those of ids (published events) whose outbox row
// exists.
func (t Tx) ResultadosNoOutbox(ctx context.Context, ids []uuid.UUID) ([]uuid.UUID, error) {
	return t.q.OutboxExistentes(ctx, ids)
}
