package entradas

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/decisao"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
)

// visao reads, in one round trip, what a step about the counsellor id
// needs for the input eventID: whether one of aplicada says it was applied
// before, the counsellor's row and their active assignment (at most one).
// c is the row and a the assignment the effects are written to.
func (x *aplicacao) visao(ctx context.Context, id, eventID uuid.UUID, aplicada ...func(store.Tx, context.Context, uuid.UUID) (bool, error)) (v decisao.Visao, c store.Conselheiro, a store.AtribuicaoVigente, err error) {
	if err := x.u.Ver(ctx, &id, nil); err != nil {
		return v, c, a, err
	}
	l, err := x.b.LerVisaoConselheiro(ctx, id, eventID, aplicada...)
	if err != nil {
		return v, c, a, err
	}
	v.Aplicada = l.Aplicada
	if l.TemConselheiro {
		v.Conselheiro = &decisao.Conselheiro{Status: l.Conselheiro.Status, Ate: l.Conselheiro.SuspensaoAte}
	}
	if l.TemAtiva {
		v.Ativa = &l.Ativa.DemandaID
	}
	return v, l.Conselheiro, l.Ativa, nil
}

// escreverStatus writes the status a step gave c, with the end of a
// suspension it lifted, and logs a transition spec 4.6 forbade.
func (x *aplicacao) escreverStatus(ctx context.Context, log *slog.Logger, c store.Conselheiro, ef decisao.Efeitos, eventID uuid.UUID) error {
	if ef.Proibida {
		log.Warn("transição de status proibida (spec 4.6) — mantida", "conselheiro_id", c.ID, "status", c.Status)
	}
	if !ef.Mudou {
		return nil
	}
	if err := x.g.MudarStatus(ctx, c.ID, ef.Status, eventID, x.u.Agora()); err != nil {
		return err
	}
	x.u.Alterou(c.Cidadao)
	if ef.FimDaSuspensao != nil {
		return x.u.EncerrarSuspensao(ctx, log, c.ID, *ef.FimDaSuspensao, "transicao")
	}
	return nil
}

// suspender writes the suspension a refusal's step decided (spec 3.12
// step 4): until ate, rescheduled when already suspended (spec 3.13),
// recorded in d6a.suspensoes with the parameters' version.
func (x *aplicacao) suspender(ctx context.Context, log *slog.Logger, c store.Conselheiro, eventID uuid.UUID, ef decisao.Efeitos, par atribuicao.Parametros) error {
	if ef.SuspensaoProibida {
		log.Warn("suspensão não aplicada: transição proibida (spec 4.6)", "conselheiro_id", c.ID, "status", ef.Status)
	}
	if ef.SuspensoAte == nil {
		return nil
	}
	ate := *ef.SuspensoAte
	if err := x.g.Suspender(ctx, c.ID, ate, eventID, x.u.Agora()); err != nil {
		return err
	}
	if err := x.g.AnotarSuspensao(ctx, store.Suspensao{
		Conselheiro: c.ID, EventoRecusa: eventID, Consecutivas: int32(ef.Recusas),
		Ate: ate, VersaoParametros: int32(par.Versao), Agora: x.u.Agora(),
	}); err != nil {
		return err
	}
	x.u.Alterou(c.Cidadao)
	// CONTRACT §7: public, but not checkable from the public log alone
	// (the refusals' motives are not in it).
	x.u.Registrar(registro.NovaSuspensao(eventID, x.u.SeqGatilho(), c.ID, ate))
	log.Warn("Conselheiro suspenso por recusas consecutivas", "conselheiro_id", c.ID,
		"recusas_consecutivas", ef.Recusas, "data_suspensao_ate", ate.Format(time.RFC3339),
		"n_recusas_suspensao", par.NRecusasSuspensao, "t_suspensao_dias", par.TSuspensaoDias)
	return nil
}
