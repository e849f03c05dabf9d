package atribuicao

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/store"
)

// nsSuspensao is the UUIDv5 namespace of conselheiro.suspensao_expirada.
var nsSuspensao = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/formigueiro/d6a/suspensao_expirada"))

// IDSuspensaoExpirada is the event id of the end of one suspension: from
// the counsellor and the suspension's end, so two passes or two instances
// publish it once.
func IDSuspensaoExpirada(conselheiro uuid.UUID, ate time.Time) uuid.UUID {
	return uuid.NewSHA1(nsSuspensao, []byte(conselheiro.String()+"|"+sorteio.FormatTimestamp(ate)))
}

type payloadSuspensaoExpirada struct {
	ConselheiroID    uuid.UUID `json:"conselheiro_id"`
	DataSuspensaoAte string    `json:"data_suspensao_ate"`
	Timestamp        string    `json:"timestamp"`
}

// ReativarVencidos is spec 4.8's reativarSuspensosVencidos, at boot and
// periodically: every suspenso whose data_suspensao_ate has passed goes back
// to disponivel and conselheiro.suspensao_expirada is queued (spec 8.2,
// CONTRACT §3), in one unit of work. The queue of each one's unit is swept,
// as on a release, when the end comes back from the bus (onSuspensaoExpirada,
// CONTRACT §4). It returns how many it reactivated.
func (s *Servico) ReativarVencidos(ctx context.Context) (int, error) {
	n := 0
	err := s.executar(ctx, func(ctx context.Context, u *uow) error {
		n = 0
		vencidos, err := u.tx.BuscarSuspensosComPrazoVencido(ctx, u.agora)
		if err != nil {
			return err
		}
		for _, c := range vencidos {
			ate := c.DataSuspensaoAte.UTC()
			// The status after the end, by the rule the replay applies to
			// its record.
			if _, err := u.tx.AtualizarStatusConselheiro(ctx, store.AtualizarStatusConselheiroParams{
				ID: c.ID, Status: elegibilidade.StatusAposSuspensaoExpirada(c.Status), EventID: IDSuspensaoExpirada(c.ID, ate), Agora: u.agora,
			}); err != nil {
				return err
			}
			u.alterou(c.CidadaoID)
			log := s.log.With("conselheiro_id", c.ID)
			if err := u.encerrarSuspensao(ctx, log, c.ID, ate, "reativacao-prazo"); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
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
func (u *uow) encerrarSuspensao(ctx context.Context, log *slog.Logger, conselheiro uuid.UUID, ate time.Time, motivo string) error {
	ate = ate.UTC()
	id := IDSuspensaoExpirada(conselheiro, ate)
	ja, err := u.tx.ExisteOutboxPorEventId(ctx, id)
	if err != nil {
		return err
	}
	if !ja {
		t := sorteio.FormatTimestamp(u.agora)
		if err := u.publicar(ctx, evento.SuspensaoExpirada, id, conselheiro.String(), t, payloadSuspensaoExpirada{
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
