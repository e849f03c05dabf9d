package atribuicao

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/outbox"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
)

// nsSuspensao is the UUIDv5 namespace of conselheiro.suspensao_expirada.
var nsSuspensao = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/formigueiro/d6a/suspensao_expirada"))

// IDSuspensaoExpirada is the event id of the end of one suspension: from
// the counsellor and the suspension's end, so two passes or two instances
// publish it once.
func IDSuspensaoExpirada(conselheiro uuid.UUID, ate time.Time) uuid.UUID {
	return uuid.NewSHA1(nsSuspensao, []byte(conselheiro.String()+"|"+sorteio.FormatTimestamp(ate)))
}

// encerrarSuspensao queues conselheiro.suspensao_expirada for the
// suspension of conselheiro that ended at ate, in this unit of work, once
// (issue 21): whichever path ends a suspension calls it, the periodic job
// and the boot (ReativarVencidos), a draw that takes a counsellor still
// marked suspenso (CONTRACT §5 makes them eligible once the date passed),
// and a cycle end or refusal that frees one (transitar). The event id comes
// from the counsellor and the date, so a second path, a second pass or a
// second instance finds it queued and publishes nothing. motivo names the
// path in the log.
func (u *unidade) encerrarSuspensao(ctx context.Context, log *slog.Logger, conselheiro uuid.UUID, ate time.Time, motivo string) error {
	ate = ate.UTC()
	id := IDSuspensaoExpirada(conselheiro, ate)
	ja, err := u.naOutbox(ctx, id)
	if err != nil {
		return err
	}
	if !ja {
		t := sorteio.FormatTimestamp(u.agora)
		if err := u.publicar(evento.SuspensaoExpirada, id, conselheiro.String(), t, outbox.SuspensaoExpirada{
			ConselheiroID: conselheiro, DataSuspensaoAte: sorteio.FormatTimestamp(ate), Timestamp: t,
		}); err != nil {
			return err
		}
		u.registros = append(u.registros, registro.NovaSuspensaoExpirada(id, u.seqGatilho(), conselheiro, ate))
	}
	log.Info("Conselheiro suspenso reativado após expiração do prazo", "motivo", motivo,
		"data_suspensao_ate", ate.Format(time.RFC3339), "event_id", id)
	return nil
}
