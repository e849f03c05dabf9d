package atribuicao

import (
	"context"
	"log/slog"
	"time"

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
func (u *uow) publicarTimeout(ctx context.Context, a store.AtribuicaoVigente) (id uuid.UUID, nova bool, err error) {
	id = IDTimeout(a.EventIDSorteio)
	ja, err := u.tx.OutboxJaTem(ctx, id)
	if err != nil || ja {
		return id, false, err
	}
	t := sorteio.FormatTimestamp(u.agora)
	err = u.publicar(ctx, evento.AtribuicaoRecusada, id, a.DemandaID.String(), t, outbox.Recusa{
		ConselheiroID: a.ConselheiroID, DemandaID: a.DemandaID, UnidadeCivicaID: a.UC,
		Motivo: string(evento.TimeoutResposta), Timestamp: t,
	})
	return id, err == nil, err
}

// onDemandaIniciada records when an assignment started
// (conselheiro.demanda_iniciada, CONTRACT §3): the active assignment of the
// pair, else its latest one. The first start recorded wins.
func (u *uow) onDemandaIniciada(ctx context.Context, log *slog.Logger, ev evento.Evento, p evento.DemandaIniciadaPayload) error {
	log = log.With("conselheiro_id", p.ConselheiroID, "demanda_id", p.DemandaID)
	a, err := u.tx.BuscarAtribuicaoAtivaPorConselheiroEDemanda(ctx, store.AtivaPorConselheiroEDemandaParams{
		ConselheiroID: p.ConselheiroID, DemandaID: p.DemandaID,
	})
	achou, err := store.Found(err)
	if err != nil {
		return err
	}
	if !achou {
		a, err = u.tx.BuscarUltimaAtribuicaoPorConselheiroEDemanda(ctx, store.UltimaPorConselheiroEDemandaParams{
			ConselheiroID: p.ConselheiroID, DemandaID: p.DemandaID,
		})
		if achou, err = store.Found(err); err != nil {
			return err
		} else if !achou {
			log.Warn("demanda iniciada sem atribuição correspondente — ignorada")
			return nil
		}
	}
	inicio := u.agora
	for _, ts := range []string{p.Timestamp, ev.Timestamp} {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			inicio = t.UTC()
			break
		}
	}
	n, err := u.tx.RegistrarInicio(ctx, store.RegistrarInicioParams{
		AtribuicaoID: a.ID, EventIDSorteio: a.EventIDSorteio, ConselheiroID: a.ConselheiroID, DemandaID: a.DemandaID,
		IniciadaEm: inicio, EventID: ev.EventID, Agora: u.agora,
	})
	if err != nil {
		return err
	}
	if n == 0 {
		log.Info("início da atribuição já registrado", "event_id_sorteio", a.EventIDSorteio)
		return nil
	}
	if a.Status != AtribuicaoAtiva {
		log.Warn("demanda iniciada de atribuição já encerrada — registrada", "event_id_sorteio", a.EventIDSorteio, "status", a.Status)
		return nil
	}
	log.Info("Atribuição iniciada", "event_id_sorteio", a.EventIDSorteio, "iniciada_em", inicio.Format(time.RFC3339))
	return nil
}
