package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The record of a draw re-created after a failover (d6a.reconciliacoes).

// Reconciliacao is the d6a.reconciliacoes row of a re-created draw. Base is
// empty, and BaseSeq 0, when the bus window read did not hold the seed's
// base.
type Reconciliacao struct {
	EventIDSorteio, AtribuicaoID, DemandaID, ConselheiroID uuid.UUID
	Seq                                                    int64
	Base                                                   string
	BaseSeq                                                int64
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
