package manutencao

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/decisao"
	"github.com/formigueiro/d6a/internal/store"
)

// Suspensoes is what the reactivation reads and writes of the counsellors
// (store.Tx).
type Suspensoes interface {
	SuspensoesVencidas(ctx context.Context, agora time.Time) ([]store.SuspensaoVencida, error)
	MudarStatus(ctx context.Context, conselheiro uuid.UUID, status string, eventID uuid.UUID, agora time.Time) error
}

// ReativarVencidos is spec 4.8's reativarSuspensosVencidos, at boot and
// periodically: every suspenso whose data_suspensao_ate has passed goes back
// to disponivel and conselheiro.suspensao_expirada is queued (spec 8.2,
// CONTRACT §3), in one unit of work. The queue of each one's unit is swept,
// as on a release, when the end comes back from the bus (onSuspensaoExpirada,
// CONTRACT §4). It returns how many it reactivated.
func ReativarVencidos(ctx context.Context, e Executor, log *slog.Logger) (int, error) {
	n := 0
	err := e.Submeter(ctx, func(ctx context.Context, u atribuicao.Unidade) error {
		n = 0
		var tx Suspensoes = u.Tx()
		vencidas, err := tx.SuspensoesVencidas(ctx, u.Agora())
		if err != nil {
			return err
		}
		for _, v := range vencidas {
			// The status after the end, by the rule the replay applies to
			// its record.
			ate := v.Ate
			status := decisao.Passo(decisao.Visao{Conselheiro: &decisao.Conselheiro{Status: v.Status, Ate: &ate}},
				decisao.Entrada{Tipo: decisao.SuspensaoExpirada, Agora: u.Agora()}).Status
			if err := tx.MudarStatus(ctx, v.Conselheiro, status, atribuicao.IDSuspensaoExpirada(v.Conselheiro, v.Ate), u.Agora()); err != nil {
				return err
			}
			u.Alterou(v.Cidadao)
			log := log.With("conselheiro_id", v.Conselheiro)
			if err := u.EncerrarSuspensao(ctx, log, v.Conselheiro, v.Ate, "reativacao-prazo"); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
