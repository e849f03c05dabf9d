package entradas

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
)

// transitar moves c to status `to` when spec 4.6 allows it, and logs the
// refusal otherwise. Lifting a suspension is only allowed once its date has
// passed.
func (x *aplicacao) transitar(ctx context.Context, log *slog.Logger, c store.Conselheiro, to string, eventID uuid.UUID) error {
	if !x.permitido(c, to) {
		log.Warn("transição de status proibida (spec 4.6) — mantida", "conselheiro_id", c.ID, "de", c.Status, "para", to)
		return nil
	}
	if err := x.b.MudarStatus(ctx, c.ID, to, eventID, x.u.Agora()); err != nil {
		return err
	}
	x.u.Alterou(c.Cidadao)
	if c.Status == elegibilidade.Suspenso && to == elegibilidade.Disponivel && c.SuspensaoAte != nil {
		return x.u.EncerrarSuspensao(ctx, log, c.ID, *c.SuspensaoAte, "transicao")
	}
	return nil
}

// permitido reports whether c may move to status to now (spec 4.6).
func (x *aplicacao) permitido(c store.Conselheiro, to string) bool {
	return elegibilidade.Permitido(c.Status, c.SuspensaoAte, to, x.u.Agora())
}

// suspender applies spec 3.12 step 4: suspension for the T_SUSPENSAO_DIAS
// of the parameters in force from now, rescheduled when already suspended
// (spec 3.13), recorded in d6a.suspensoes with the version.
func (x *aplicacao) suspender(ctx context.Context, log *slog.Logger, c store.Conselheiro, eventID uuid.UUID, consecutivas int64, par atribuicao.Parametros) error {
	if !elegibilidade.PodeSuspender(c.Status) {
		log.Warn("suspensão não aplicada: transição proibida (spec 4.6)", "conselheiro_id", c.ID, "status", c.Status)
		return nil
	}
	ate := x.u.Agora().Add(par.TSuspensao())
	if err := x.b.Suspender(ctx, c.ID, ate, eventID, x.u.Agora()); err != nil {
		return err
	}
	if err := x.b.AnotarSuspensao(ctx, store.Suspensao{
		Conselheiro: c.ID, EventoRecusa: eventID, Consecutivas: int32(consecutivas),
		Ate: ate, VersaoParametros: int32(par.Versao), Agora: x.u.Agora(),
	}); err != nil {
		return err
	}
	x.u.Alterou(c.Cidadao)
	// CONTRACT §7: public, but not checkable from the public log alone
	// (the refusals' motives are not in it).
	x.u.Registrar(registro.NovaSuspensao(eventID, x.u.SeqGatilho(), c.ID, ate))
	log.Warn("Conselheiro suspenso por recusas consecutivas", "conselheiro_id", c.ID,
		"recusas_consecutivas", consecutivas, "data_suspensao_ate", ate.Format(time.RFC3339),
		"n_recusas_suspensao", par.NRecusasSuspensao, "t_suspensao_dias", par.TSuspensaoDias)
	return nil
}
