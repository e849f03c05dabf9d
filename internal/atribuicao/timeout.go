package atribuicao

import (
	"context"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/outbox"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/store"
)

// nsTimeout is the UUIDv5 namespace of the timeout refusals' event ids.
var nsTimeout = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/formigueiro/d6a/timeout_resposta"))

// IDTimeout is the event id of the response-timeout refusal of the
// assignment drawn by eventIDSorteio: derived from the assignment, so the
// console, the automatic check, two passes or two instances can only ever
// publish one refusal per assignment (the outbox's unique event_id, then
// the stream's Nats-Msg-Id).
func IDTimeout(eventIDSorteio uuid.UUID) uuid.UUID {
	return uuid.NewSHA1(nsTimeout, eventIDSorteio[:])
}

// publicarTimeout queues conselheiro.atribuicao_recusada with motivo
// timeout_resposta for an active assignment (CONTRACT §3), unless it was
// queued before; nova reports whether this call queued it. D-6a consumes it
// back like any refusal (spec 3.12).
func (u *unidade) publicarTimeout(ctx context.Context, a store.AtribuicaoVigente) (id uuid.UUID, nova bool, err error) {
	id = IDTimeout(a.EventIDSorteio)
	ja, err := u.naOutbox(ctx, id)
	if err != nil || ja {
		return id, false, err
	}
	t := sorteio.FormatTimestamp(u.agora)
	err = u.publicar(evento.AtribuicaoRecusada, id, a.DemandaID.String(), t, outbox.Recusa{
		ConselheiroID: a.ConselheiroID, DemandaID: a.DemandaID, UnidadeCivicaID: a.UC,
		Motivo: string(evento.TimeoutResposta), Timestamp: t,
	})
	return id, err == nil, err
}
