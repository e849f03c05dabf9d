package atribuicao

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
)

// transitar moves c to status `to` when spec 4.6 allows it, and logs the
// refusal otherwise. Lifting a suspension is only allowed once its date has
// passed.
func (u *uow) transitar(ctx context.Context, log *slog.Logger, c store.Conselheiro, to string, eventID uuid.UUID) error {
	if !u.permitido(c, to) {
		log.Warn("transição de status proibida (spec 4.6) — mantida", "conselheiro_id", c.ID, "de", c.Status, "para", to)
		return nil
	}
	if err := u.tx.MudarStatus(ctx, c.ID, to, eventID, u.agora); err != nil {
		return err
	}
	u.alterou(c.Cidadao)
	if c.Status == elegibilidade.Suspenso && to == elegibilidade.Disponivel && c.SuspensaoAte != nil {
		return u.encerrarSuspensao(ctx, log, c.ID, *c.SuspensaoAte, "transicao")
	}
	return nil
}

// permitido reports whether c may move to status to now (spec 4.6).
func (u *uow) permitido(c store.Conselheiro, to string) bool {
	return elegibilidade.Permitido(c.Status, c.SuspensaoAte, to, u.agora)
}

// alterou notes a citizen whose situation this unit of work changed.
func (u *uow) alterou(cidadao uuid.UUID) { u.alterados = append(u.alterados, cidadao) }

// suspender applies spec 3.12 step 4: suspension for the T_SUSPENSAO_DIAS
// of the parameters in force from now, rescheduled when already suspended
// (spec 3.13), recorded in d6a.suspensoes with the version.
func (u *uow) suspender(ctx context.Context, log *slog.Logger, c store.Conselheiro, eventID uuid.UUID, consecutivas int64, par Parametros) error {
	if !elegibilidade.PodeSuspender(c.Status) {
		log.Warn("suspensão não aplicada: transição proibida (spec 4.6)", "conselheiro_id", c.ID, "status", c.Status)
		return nil
	}
	ate := u.agora.Add(par.TSuspensao())
	if err := u.tx.Suspender(ctx, c.ID, ate, eventID, u.agora); err != nil {
		return err
	}
	if err := u.tx.AnotarSuspensao(ctx, store.Suspensao{
		Conselheiro: c.ID, EventoRecusa: eventID, Consecutivas: int32(consecutivas),
		Ate: ate, VersaoParametros: int32(par.Versao), Agora: u.agora,
	}); err != nil {
		return err
	}
	u.alterou(c.Cidadao)
	// CONTRACT §7: public, but not checkable from the public log alone
	// (the refusals' motives are not in it).
	u.registros = append(u.registros, registro.NovaSuspensao(eventID, u.seqGatilho(), c.ID, ate))
	log.Warn("Conselheiro suspenso por recusas consecutivas", "conselheiro_id", c.ID,
		"recusas_consecutivas", consecutivas, "data_suspensao_ate", ate.Format(time.RFC3339),
		"n_recusas_suspensao", par.NRecusasSuspensao, "t_suspensao_dias", par.TSuspensaoDias)
	return nil
}
