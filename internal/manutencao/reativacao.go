package manutencao

import (
	"context"
	"log/slog"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/store"
)

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
		vencidos, err := u.Tx().BuscarSuspensosComPrazoVencido(ctx, u.Agora())
		if err != nil {
			return err
		}
		for _, c := range vencidos {
			ate := c.DataSuspensaoAte.UTC()
			// The status after the end, by the rule the replay applies to
			// its record.
			if _, err := u.Tx().AtualizarStatusConselheiro(ctx, store.AtualizarStatusConselheiroParams{
				ID: c.ID, Status: elegibilidade.StatusAposSuspensaoExpirada(c.Status), EventID: atribuicao.IDSuspensaoExpirada(c.ID, ate), Agora: u.Agora(),
			}); err != nil {
				return err
			}
			u.Alterou(c.CidadaoID)
			log := log.With("conselheiro_id", c.ID)
			if err := u.EncerrarSuspensao(ctx, log, c.ID, ate, "reativacao-prazo"); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
