package entradas

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/decisao"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/fila"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
)

// despachar is spec 1.4 despacharEvento: x.ev's handler.
func (x *aplicacao) despachar(ctx context.Context, log *slog.Logger) error {
	ev := x.ev
	switch ev.Tipo {
	case evento.AgendaItemDisponivel:
		p, _ := ev.AgendaItemDisponivel()
		return x.onAgendaItemDisponivel(ctx, log, ev, p)
	case evento.ConselheiroCadastrado:
		p, _ := ev.ConselheiroCadastrado()
		return x.onConselheiroCadastrado(ctx, log, ev, p)
	case evento.CicloConcluido:
		p, _ := ev.CicloConcluido()
		return x.onConselheiroCicloConcluido(ctx, log, ev, p)
	case evento.AtribuicaoRecusada:
		p, _ := ev.AtribuicaoRecusada()
		return x.onConselheiroAtribuicaoRecusada(ctx, log, ev, p)
	case evento.DuplicidadeAgregada:
		p, _ := ev.DuplicidadeAgregada()
		return x.onDuplicidadeAgregada(ctx, log, ev, p)
	case evento.DemandaIniciada:
		p, _ := ev.DemandaIniciada()
		return x.onDemandaIniciada(ctx, log, ev, p)
	case evento.SuspensaoExpirada:
		p, _ := ev.SuspensaoExpirada()
		return x.onSuspensaoExpirada(ctx, log, p)
	case evento.Varredura:
		p, _ := ev.Varredura()
		return x.onVarredura(ctx, log, p)
	default:
		// The phase-2 inputs (elegibilidade_externa.go), spec 4.9's stub among them.
		if ok, err := x.despacharFase2(ctx, log, ev); ok {
			return err
		}
		return fmt.Errorf("tipo não consumido: %s", ev.Tipo)
	}
}

// onAgendaItemDisponivel is spec 3.9.
func (x *aplicacao) onAgendaItemDisponivel(ctx context.Context, log *slog.Logger, ev evento.Evento, p evento.AgendaItemDisponivelPayload) error {
	log = log.With("demanda_id", p.DemandaID, "uc_id", p.UnidadeCivicaID)
	// Steps 1, 3 and 4 in one round trip: the event already pending, the
	// demand already assigned, the demand already pending.
	corr := ev.Correlacao(p.DemandaID)
	g, err := x.u.GuardaAgenda(ctx, store.AgendaAGuardar{EventID: ev.EventID, DemandaID: p.DemandaID, Correlacao: corr})
	switch {
	case err != nil:
		return err
	case g.PendentePeloEvento:
		log.Info("agenda.item_disponível reentregue — já na fila de pendentes")
		return nil
	case g.Atribuida:
		log.Warn("demanda já atribuída")
		return nil
	case g.Pendente:
		log.Info("demanda já na fila de pendentes")
		return nil
	}
	// Step 2, the payload, was validated on decoding (CONTRACT §3).
	// 5. draw.
	_, err = x.u.Sortear(ctx, atribuicao.Pedido{
		UC: p.UnidadeCivicaID, DemandaID: p.DemandaID,
		Dados: atribuicao.DadosDemanda{
			ScoreFinal: p.ScoreFinal, CategoriaID: p.CategoriaID, NivelPrecedencia: int32(p.NivelPrecedencia),
			GrupoID: p.GrupoID, CorrelacaoID: corr, EventIDOrigem: ev.EventID,
		},
		SemCandidatosPublicado: g.SemCandidatosPublicado,
	})
	return err
}

// onConselheiroCadastrado is spec 3.10.
func (x *aplicacao) onConselheiroCadastrado(ctx context.Context, log *slog.Logger, ev evento.Evento, p evento.ConselheiroCadastradoPayload) error {
	log = log.With("conselheiro_id", p.CidadaoID, "uc_id", p.UnidadeCivicaID)
	// 1. idempotency by event_id_cadastro; 3. id = cidadao_id, so any
	// duplicate (same citizen, UC and level, or the same citizen at all)
	// is found by id before inserting: a unique violation would abort the
	// transaction.
	var v decisao.Visao
	var err error
	if v.Aplicada, err = x.b.CadastroAplicado(ctx, ev.EventID); err != nil {
		return err
	}
	if _, achou, err := x.b.ConselheiroPorID(ctx, p.CidadaoID); err != nil {
		return err
	} else if achou {
		v.Conselheiro = &decisao.Conselheiro{}
	}
	ef := decisao.Passo(v, decisao.Entrada{Tipo: decisao.Cadastro, Status: p.Status})
	switch {
	case v.Aplicada:
		log.Info("conselheiro.cadastrado reentregue")
		return nil
	case !ef.Cadastrar:
		log.Info("cadastro duplicado — ignorando", "nivel_atuacao", p.NivelAtuacao)
		return nil
	}
	capacitacao, err := x.capacitacaoNoCadastro(ctx, p.CidadaoID, p.CapacitacaoConcluida) // phase 2 (CONTRACT §8)
	if err != nil {
		return err
	}
	if err := x.b.Cadastrar(ctx, store.Cadastro{
		Cidadao: p.CidadaoID, UC: p.UnidadeCivicaID, Nivel: int32(p.NivelAtuacao),
		Status: ef.Status, Capacitacao: capacitacao, Agora: x.u.Agora(), EventID: ev.EventID,
	}); err != nil {
		if c, ok := store.UniqueViolation(err); ok {
			return fmt.Errorf("cadastro duplicado não detectado antes do insert (%s): %w", c, err)
		}
		return err
	}
	x.u.Alterou(p.CidadaoID)
	x.u.Registrar(registro.NovoCadastro(ev.EventID, x.u.SeqGatilho(), p.CidadaoID, p.UnidadeCivicaID, p.NivelAtuacao, ef.Status, p.CapacitacaoConcluida))
	log.Info("Conselheiro cadastrado", "capacitacao_concluida", p.CapacitacaoConcluida, "status", ef.Status)
	// 4. sweep the pending queue of the UC and its descendants.
	return x.varrerFila(ctx, log, p.UnidadeCivicaID)
}

// onConselheiroCicloConcluido is spec 3.11.
func (x *aplicacao) onConselheiroCicloConcluido(ctx context.Context, log *slog.Logger, ev evento.Evento, p evento.ConselheiroCicloConcluidoPayload) error {
	log = log.With("conselheiro_id", p.ConselheiroID, "demanda_id", p.DemandaID)
	// 1. idempotency by event_id_encerramento; 3. the counsellor and
	// their active assignment.
	v, c, a, err := x.visao(ctx, p.ConselheiroID, ev.EventID, store.Tx.EncerramentoAplicado)
	if err != nil || v.Aplicada {
		if v.Aplicada {
			log.Info("conselheiro.ciclo_concluído reentregue")
		}
		return err
	}
	ef := decisao.Passo(v, decisao.Entrada{Tipo: decisao.CicloConcluido, Demanda: p.DemandaID, Agora: x.u.Agora()})
	if v.Conselheiro == nil {
		log.Warn("ciclo concluído de conselheiro não cadastrado")
		if p.UnidadeCivicaID == nil {
			return nil
		}
		return x.varrerFila(ctx, log, *p.UnidadeCivicaID)
	}
	// 4. close the assignment and release the counsellor.
	switch {
	case ef.Encerrar:
		if err := x.g.Encerrar(ctx, a.ID, atribuicao.AtribuicaoConcluida, ev.EventID); err != nil {
			return err
		}
		x.u.Alterou(p.ConselheiroID)
		log.Info("Atribuição concluída", "motivo_encerramento", p.MotivoEncerramento)
	case ef.OutraAtiva:
		log.Warn("ciclo concluído para outra demanda: conselheiro mantém a atribuição ativa e segue ocupado")
	default:
		log.Info("ciclo concluído sem atribuição ativa correspondente — conselheiro liberado mesmo assim")
	}
	if err := x.escreverStatus(ctx, log, c, ef, ev.EventID); err != nil {
		return err
	}
	x.u.Registrar(registro.NovoCicloConcluido(ev.EventID, x.u.SeqGatilho(), c.ID, p.DemandaID, ef.Status))
	// 5. sweep the payload's UC, else the counsellor's.
	uc := c.UC
	if p.UnidadeCivicaID != nil {
		uc = *p.UnidadeCivicaID
	}
	return x.varrerFila(ctx, log, uc)
}

// onConselheiroAtribuicaoRecusada is spec 3.12.
func (x *aplicacao) onConselheiroAtribuicaoRecusada(ctx context.Context, log *slog.Logger, ev evento.Evento, p evento.ConselheiroAtribuicaoRecusadaPayload) error {
	log = log.With("conselheiro_id", p.ConselheiroID, "demanda_id", p.DemandaID, "uc_id", p.UnidadeCivicaID, "motivo", string(p.Motivo))
	// 1. idempotency by evento_id_recusa and event_id_encerramento (the
	// spec's buscarRecusasPorEventoId, buscarAtribuicaoPorEventIdEncerramento).
	// 3. the counsellor, their active assignment (read with 1) and,
	// unless the motive is personal risk, the refusals counted and the
	// parameters in force (d6a.config: a new version applies from the next
	// refusal on).
	v, c, a, err := x.visao(ctx, p.ConselheiroID, ev.EventID, store.Tx.RecusaAplicada, store.Tx.EncerramentoAplicado)
	if err != nil || v.Aplicada {
		if v.Aplicada {
			log.Info("conselheiro.atribuicao_recusada reentregue")
		}
		return err
	}
	e := decisao.Entrada{Tipo: decisao.Recusa, Demanda: p.DemandaID, RiscoPessoal: p.Motivo == evento.RiscoPessoal, Agora: x.u.Agora()}
	var par atribuicao.Parametros
	if !e.RiscoPessoal && v.Ativa != nil {
		if par, err = x.u.Parametros(ctx); err != nil {
			return err
		}
		if v.Recusas, err = x.b.RecusasDesdeAceitacao(ctx, p.ConselheiroID); err != nil {
			return err
		}
		e.Regras = &decisao.Regras{NRecusasSuspensao: par.NRecusasSuspensao, TSuspensao: par.TSuspensao()}
		log = log.With("versao_parametros", par.Versao)
	}
	ef := decisao.Passo(v, e)
	if !ef.Encerrar {
		log.Warn("recusa sem atribuição ativa correspondente")
		return x.varrerFila(ctx, log, p.UnidadeCivicaID)
	}
	// 4. close it and record the refusal.
	if err := x.g.Encerrar(ctx, a.ID, atribuicao.AtribuicaoRecusada, ev.EventID); err != nil {
		return err
	}
	x.u.Alterou(p.ConselheiroID)
	if ef.Registrar {
		if err := x.escreverStatus(ctx, log, c, ef, ev.EventID); err != nil {
			return err
		}
		// No motive: a refusal for personal risk must not show (spec 3.12).
		x.u.Registrar(registro.NovaRecusa(ev.EventID, x.u.SeqGatilho(), c.ID, a.DemandaID, ef.Status))
	}
	x.u.RecusaObservada(string(p.Motivo))
	if ef.Recusas == 0 {
		log.Info("Recusa por risco pessoal: sem contador e sem suspensão")
	} else {
		if err := x.g.ContarRecusa(ctx, store.RecusaContada{
			Conselheiro: p.ConselheiroID, Consecutivas: int32(ef.Recusas), Agora: x.u.Agora(),
			Demanda: p.DemandaID, EventoRecusa: ev.EventID,
		}); err != nil {
			return err
		}
		log.Info("Recusa registrada", "recusas_consecutivas", ef.Recusas)
		if err := x.suspender(ctx, log, c, ev.EventID, ef, par); err != nil {
			return err
		}
	}
	// 5. re-draw the same demand from the assignment's snapshot, excluding
	// the refuser (spec 3.12 step 5, 2.3).
	r, err := x.u.Sortear(ctx, atribuicao.Pedido{
		UC: a.UC, DemandaID: a.DemandaID, Excluir: &p.ConselheiroID,
		Dados: atribuicao.DadosDemanda{
			ScoreFinal: a.Demanda.ScoreFinal, CategoriaID: a.Demanda.CategoriaID, NivelPrecedencia: a.Demanda.NivelPrecedencia,
			GrupoID: a.Demanda.GrupoID, CorrelacaoID: ev.Correlacao(a.DemandaID), EventIDOrigem: ev.EventID,
		},
	})
	if err != nil {
		return err
	}
	if r.Sucesso {
		log.Info("Re-sorteio após recusa concluído", "novo_conselheiro_id", r.ConselheiroID)
	}
	return nil
}

// onDuplicidadeAgregada is spec 3.6: members leave the pending queue; the
// representative stays.
func (x *aplicacao) onDuplicidadeAgregada(ctx context.Context, log *slog.Logger, ev evento.Evento, p evento.DuplicidadeAgregadaPayload) error {
	var fora []uuid.UUID
	for _, m := range p.Membros {
		if m == p.RepresentanteDemandaID {
			continue
		}
		removida, err := x.b.TirarDaFila(ctx, m)
		if err != nil {
			return err
		}
		if removida {
			fora = append(fora, m)
		}
	}
	x.u.Registrar(registro.NovaAgregacao(ev.EventID, x.u.SeqGatilho(), p.RepresentanteDemandaID, fora))
	log.Info("Duplicidade agregada: membros removidos da fila", "agregado_id", p.AgregadoID,
		"representante_demanda_id", p.RepresentanteDemandaID, "membros", len(p.Membros), "removidos", len(fora))
	return nil
}

// varrerFila is the release sweep of spec 3.10 step 4 / 3.11 step 5 / 4.7:
// the oldest pending demand of the UC and its descendants gets a draw.
func (x *aplicacao) varrerFila(ctx context.Context, log *slog.Logger, uc uuid.UUID) error {
	x.registrarVarredura(&uc, nil, "")
	return x.varrerFilaSemRegistro(ctx, log, uc)
}

// varrerFilaSemRegistro is varrerFila once its record is appended.
func (x *aplicacao) varrerFilaSemRegistro(ctx context.Context, log *slog.Logger, uc uuid.UUID) error {
	ucs, err := x.hier.ComDescendentes(ctx, uc)
	if err != nil {
		return err
	}
	// The rows are read, the rule (spec 4.7, FIFO) is fila.Devida, the
	// replay's.
	if err := x.u.Ver(ctx, nil, ucs); err != nil {
		return err
	}
	cabecas, err := x.b.CabecasDaFila(ctx, ucs)
	if err != nil {
		return err
	}
	esperas := make([]fila.Espera, len(cabecas))
	for i, c := range cabecas {
		esperas[i] = c.Espera()
	}
	i := fila.Devida(esperas)
	if i < 0 {
		return nil
	}
	_, err = x.sortearPendente(ctx, log, cabecas[i])
	return err
}

// registrarVarredura appends the record of a sweep (CONTRACT §7 "Queue
// order"): of uc's queue or of one pending demand. A consumed d6a.varredura
// is its own record (acao its payload's); the sweep of another input is
// named after that input.
func (x *aplicacao) registrarVarredura(uc, demanda *uuid.UUID, acao string) {
	id := registro.IDVarredura(x.ev.EventID)
	if x.ev.Tipo == evento.Varredura {
		id = x.ev.EventID
	}
	if acao == "" {
		acao = string(x.ev.Tipo)
	}
	x.u.Registrar(registro.NovaVarredura(id, x.u.SeqGatilho(), uc, demanda, acao))
}

// sortearPendente draws a pending demand; the row leaves the queue when
// the draw's step says so (decisao.Sortear: drawn), and the draw
// (Unidade.Sortear) counts a failed attempt (T35).
func (x *aplicacao) sortearPendente(ctx context.Context, log *slog.Logger, p store.Pendente) (bool, error) {
	log = log.With("demanda_id", p.DemandaID, "pendente_uc_id", p.UC)
	if _, achou, err := x.b.AtribuicaoAtivaDaDemanda(ctx, p.DemandaID); err != nil {
		return false, err
	} else if achou {
		_, err := x.b.TirarDaFila(ctx, p.DemandaID)
		log.Info("pendente já atribuída — removida da fila")
		return false, err
	}
	r, err := x.u.Sortear(ctx, atribuicao.Pedido{
		UC: p.UC, DemandaID: p.DemandaID,
		Dados: atribuicao.DadosDemanda{
			ScoreFinal: p.Demanda.ScoreFinal, CategoriaID: p.Demanda.CategoriaID, NivelPrecedencia: p.Demanda.NivelPrecedencia,
			GrupoID: p.Demanda.GrupoID, CorrelacaoID: p.DemandaID.String(), EventIDOrigem: p.EventIDOrigem,
		},
		NaFila: true,
	})
	if err != nil || !r.SairDaFila {
		return false, err
	}
	_, err = x.b.TirarDaFila(ctx, p.DemandaID)
	log.Info("Fila pendente: sorteio concluído", "conselheiro_id", r.ConselheiroID)
	return true, err
}
