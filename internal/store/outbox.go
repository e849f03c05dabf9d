package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

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
