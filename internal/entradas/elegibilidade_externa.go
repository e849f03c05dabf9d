package entradas

import (
	"context"
	"log/slog"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
)

// The handlers of the phase-2 eligibility inputs (spec 8.3, CONTRACT §8).
// Each applies its effect (the rules of elegibilidade's gates.go, whose
// state BuscarDegrausCadastrados reads back for Portoes.Aplicar), appends its record
// to the transparency log, and sweeps the queue of the unit it concerns
// (spec 4.7: the oldest waiting demand there or below).

// Origins of a link (d6a.vinculos.origem).
const (
	origemVinculo    = "vinculo.validado"
	origemProgressao = "progressao.habilitada"
)

// despacharFase2 runs the handler of a phase-2 input; ok false when ev is
// not one.
func (x *aplicacao) despacharFase2(ctx context.Context, log *slog.Logger, ev evento.Evento) (ok bool, err error) {
	switch ev.Tipo {
	case evento.CapacitacaoConcluida:
		p, _ := ev.CapacitacaoConcluida()
		return true, x.onCapacitacaoConcluida(ctx, log, ev, p)
	case evento.VinculoValidado:
		p, _ := ev.VinculoValidado()
		return true, x.onVinculoValidado(ctx, log, ev, p)
	case evento.ProgressaoHabilitada:
		p, _ := ev.ProgressaoHabilitada()
		return true, x.onProgressaoHabilitada(ctx, log, ev, p)
	case evento.ElegibilidadeAtualizada:
		p, _ := ev.ElegibilidadeAtualizada()
		return true, x.onElegibilidadeAtualizada(ctx, log, ev, p)
	}
	return false, nil
}

// onCapacitacaoConcluida stores the external training record. The
// registration's flag is set too, whatever the gate: without
// D6A_CAPACITACAO_EXTERNA the record makes the counsellor trained (CONTRACT
// §8), and a deployment that later turns the gate off reads the same. The
// sweep is of the counsellor's unit; a counsellor not registered yet is
// swept by their registration, which reads the record.
func (x *aplicacao) onCapacitacaoConcluida(ctx context.Context, log *slog.Logger, ev evento.Evento, p evento.CapacitacaoConcluidaPayload) error {
	log = log.With("conselheiro_id", p.ConselheiroID, "curso_id", p.CursoID)
	if err := x.g.AnotarCapacitacao(ctx, store.Capacitacao{
		Conselheiro: p.ConselheiroID, Curso: p.CursoID, ConcluidaEm: p.ConcluidaEm, EventID: ev.EventID, Agora: x.u.Agora(),
	}); err != nil {
		return err
	}
	if err := x.g.MarcarCapacitado(ctx, p.ConselheiroID, ev.EventID, x.u.Agora()); err != nil {
		return err
	}
	x.u.Alterou(p.ConselheiroID)
	x.u.Registrar(registro.NovaCapacitacao(ev.EventID, x.u.SeqGatilho(), p.ConselheiroID, p.CursoID))
	c, achou, err := x.b.ConselheiroPorID(ctx, p.ConselheiroID)
	if err != nil || !achou {
		if err == nil {
			log.Info("capacitação registrada de conselheiro ainda não cadastrado")
		}
		return err
	}
	log.Info("Capacitação registrada (registro externo)")
	return x.varrerFila(ctx, log, c.UC)
}

// onVinculoValidado stores the link to the payload's unit, valid or
// revoked. A revocation never ends an active assignment (CONTRACT §8): the
// counsellor keeps it and is left out of every later list of that unit
// while D6A_EXIGIR_VINCULO is on. The payload's unit is swept, as for every
// phase-2 input (CONTRACT §8); after a revocation the sweep can only serve
// a demand someone else could already serve.
func (x *aplicacao) onVinculoValidado(ctx context.Context, log *slog.Logger, ev evento.Evento, p evento.VinculoValidadoPayload) error {
	log = log.With("conselheiro_id", p.ConselheiroID, "uc_id", p.UnidadeCivicaID, "valido", p.Valido)
	var em *string
	if p.ValidadoEm != "" {
		em = &p.ValidadoEm
	}
	if err := x.g.AnotarVinculo(ctx, store.Vinculo{
		Conselheiro: p.ConselheiroID, UC: p.UnidadeCivicaID, Valido: p.Valido, Origem: origemVinculo,
		ValidadoEm: em, EventID: ev.EventID, Agora: x.u.Agora(),
	}); err != nil {
		return err
	}
	x.u.Alterou(p.ConselheiroID)
	x.u.Registrar(registro.NovoVinculo(ev.EventID, x.u.SeqGatilho(), p.ConselheiroID, p.UnidadeCivicaID, p.Valido))
	log.Info("Vínculo com a UC registrado")
	return x.varrerFila(ctx, log, p.UnidadeCivicaID)
}

// onProgressaoHabilitada moves the counsellor's unit of action to the
// larger unit (their coverage becomes it and every unit below it) and
// grants the link to it; status, training, suspension and refusal count
// carry over. A counsellor the service does not hold is a no-op, logged:
// there is no row whose unit could move, and the registration that comes
// later names its own unit (docs/decisions.md).
func (x *aplicacao) onProgressaoHabilitada(ctx context.Context, log *slog.Logger, ev evento.Evento, p evento.ProgressaoHabilitadaPayload) error {
	log = log.With("conselheiro_id", p.ConselheiroID, "uc_id", p.UnidadeCivicaID, "nivel_atuacao", p.NivelAtuacao)
	c, achou, err := x.b.ConselheiroParaAtualizar(ctx, p.ConselheiroID)
	if err != nil || !achou {
		if err == nil {
			log.Warn("progressão de conselheiro não cadastrado — ignorada")
		}
		return err
	}
	nivel := int32(p.NivelAtuacao)
	// elegibilidade.AposProgressao: the new unit of action, and a valid
	// link to it.
	nova, depois := elegibilidade.AposProgressao(elegibilidade.Fase2{}, p.UnidadeCivicaID)
	if err := x.g.Progredir(ctx, c.ID, nova, nivel, ev.EventID, x.u.Agora()); err != nil {
		return err
	}
	if err := x.g.AnotarVinculo(ctx, store.Vinculo{
		Conselheiro: c.ID, UC: nova, Valido: depois.Vinculos[nova], Origem: origemProgressao,
		EventID: ev.EventID, Agora: x.u.Agora(),
	}); err != nil {
		return err
	}
	x.u.Alterou(c.Cidadao)
	x.u.Registrar(registro.NovaProgressao(ev.EventID, x.u.SeqGatilho(), c.ID, p.UnidadeCivicaID, p.NivelAtuacao))
	log.Info("Progressão habilitada: nova unidade de atuação", "uc_anterior", c.UC)
	return x.varrerFila(ctx, log, p.UnidadeCivicaID)
}

// onElegibilidadeAtualizada is spec 4.9's handler acted on (CONTRACT §8):
// the unit's criteria version is stored and recorded, and its queue swept.
func (x *aplicacao) onElegibilidadeAtualizada(ctx context.Context, log *slog.Logger, ev evento.Evento, p evento.ConselheiroElegibilidadeAtualizadaPayload) error {
	log = log.With("uc_id", p.UnidadeCivicaID, "versao_parametros", p.VersaoParametros)
	if err := x.g.AnotarCriterios(ctx, p.UnidadeCivicaID, p.VersaoParametros, ev.EventID, x.u.Agora()); err != nil {
		return err
	}
	x.u.Registrar(registro.NovaElegibilidadeAtualizada(ev.EventID, x.u.SeqGatilho(), p.UnidadeCivicaID, p.VersaoParametros))
	log.Info("Critérios de elegibilidade da UC atualizados")
	return x.varrerFila(ctx, log, p.UnidadeCivicaID)
}

// capacitacaoNoCadastro is the training a registration stores: the
// self-declared flag, or an external record that came first.
func (x *aplicacao) capacitacaoNoCadastro(ctx context.Context, conselheiro uuid.UUID, autodeclarada bool) (bool, error) {
	externa := false
	if !autodeclarada {
		var err error
		if externa, err = x.b.CapacitadoExternamente(ctx, conselheiro); err != nil {
			return false, err
		}
	}
	// The stored flag is the rule without the gate (Portoes.Aplicar reads
	// it then; with the gate, the d6a.capacitacoes record).
	return elegibilidade.Portoes{}.Capacitado(elegibilidade.Fase2{Autodeclarada: autodeclarada, Externa: externa}), nil
}
