package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// What the executor's boot steps and periodic jobs (internal/atribuicao:
// boot.go, parametros.go, and the derived-id events of timeout.go,
// varredura.go, reativacao.go) read and write inside its units of work, in
// their words and types, not sqlc's (docs/decisions.md, "Layout").

// OutboxJaTem reports whether the outbox holds the event eventID: an event
// whose id is derived (a timeout's refusal, a sweep's trigger, a
// suspension's end) is queued once.
func (t Tx) OutboxJaTem(ctx context.Context, eventID uuid.UUID) (bool, error) {
	return t.q.ExisteOutboxPorEventId(ctx, eventID)
}

// SemearOffset writes the offset of the consumed type tipo at seq, at agora,
// unless the type has one (spec 4.5 step 2: never overwriting).
func (t Tx) SemearOffset(ctx context.Context, tipo string, seq int64, agora time.Time) error {
	return t.q.SeedOffset(ctx, dbsqlc.SeedOffsetParams{TipoEvento: tipo, LastSequence: seq, Agora: agora})
}

// ConselheiroNoStatus is a counsellor found by status: who, and the
// citizen whose situation a change of that status alters.
type ConselheiroNoStatus struct {
	Conselheiro, Cidadao uuid.UUID
}

// ConselheirosNoStatus lists the counsellors whose status is status, by id.
func (t Tx) ConselheirosNoStatus(ctx context.Context, status string) ([]ConselheiroNoStatus, error) {
	rows, err := t.q.BuscarConselheirosPorStatus(ctx, status)
	if err != nil {
		return nil, err
	}
	out := make([]ConselheiroNoStatus, len(rows))
	for i, c := range rows {
		out[i] = ConselheiroNoStatus{Conselheiro: c.ID, Cidadao: c.CidadaoID}
	}
	return out, nil
}

// FilaInteira reads the whole pending queue, oldest first (by data_entrada,
// then order of entry): the boot's sweep (spec 4.7).
func (t Tx) FilaInteira(ctx context.Context) ([]Pendente, error) {
	return pendentes(t.q.BuscarTodosPendentes(ctx))
}

// SemearVersaoInicial writes version 1 of the parameters (d6a.config) from
// v's three values at v.Em, unless a version 1 exists; its sub and reason
// are the environment's own (v.Versao, Sub and Justificativa are ignored).
func (t Tx) SemearVersaoInicial(ctx context.Context, v VersaoParametros) error {
	return t.q.SemearParametros(ctx, dbsqlc.SemearParametrosParams{
		NRecusasSuspensao: v.NRecusasSuspensao, TSuspensaoDias: v.TSuspensaoDias,
		TimeoutRespostaHoras: v.TimeoutRespostaHoras, Agora: v.Em,
	})
}
