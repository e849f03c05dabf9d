package manutencao

import (
	"context"
	"log/slog"
	"time"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/store"
)

// LoteTimeout bounds the assignments one pass of the automatic timeout
// handles in one unit of work; the next pass takes the rest.
const LoteTimeout = 200

// SemInicio is what the automatic timeout reads of the assignments
// (store.Tx).
type SemInicio interface {
	AtivasSemInicio(ctx context.Context, antesDe time.Time, limite int32) ([]store.AtribuicaoVigente, error)
}

// VerificarTimeouts is the automatic response timeout (spec 8.3, CONTRACT
// §2 D6A_TIMEOUT_AUTOMATICO): every active assignment drawn longer ago than
// the timeout in force, without conselheiro.demanda_iniciada, gets the
// timeout refusal. It returns how many refusals it queued.
func VerificarTimeouts(ctx context.Context, e Executor, log *slog.Logger) (int, error) {
	n := 0
	err := e.Submeter(ctx, func(ctx context.Context, u atribuicao.Unidade) error {
		n = 0
		par, err := u.Parametros(ctx)
		if err != nil {
			return err
		}
		var tx SemInicio = u.Tx()
		vencidas, err := tx.AtivasSemInicio(ctx, u.Agora().Add(-par.TimeoutResposta()), LoteTimeout)
		if err != nil {
			return err
		}
		for _, a := range vencidas {
			id, nova, err := u.PublicarTimeout(ctx, a)
			if err != nil {
				return err
			}
			if nova {
				n++
				log.Warn("timeout de resposta automático", "event_id", id, "event_id_sorteio", a.EventIDSorteio,
					"conselheiro_id", a.ConselheiroID, "demanda_id", a.DemandaID, "data_sorteio", a.DataSorteio.UTC().Format(time.RFC3339),
					"timeout_resposta_horas", par.TimeoutRespostaHoras, "versao_parametros", par.Versao)
			}
		}
		return nil
	})
	return n, err
}
