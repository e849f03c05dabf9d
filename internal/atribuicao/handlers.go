package atribuicao

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/fila"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
)

// Assignment statuses (spec 2.3).
const (
	AtribuicaoAtiva     = "ativa"
	AtribuicaoRecusada  = "recusada"
	AtribuicaoConcluida = "concluida"
)

// Handle applies one decoded event in one transaction: the handler's effects,
// its outbox rows, the consumer_offset row (spec 2.6) and the inbox row
// commit together. A nil return means the message may be acked; an error
// means nothing was applied and the message should be redelivered.
func (s *Servico) Handle(ctx context.Context, ev evento.Evento, seq uint64) error {
	return s.HandleLote(ctx, []evento.Evento{ev}, []uint64{seq})[0]
}

// HandleLote applies events in this order, as Handle would one by one; they
// may share one transaction (the executor's batch). errs[i] is evs[i]'s.
func (s *Servico) HandleLote(ctx context.Context, evs []evento.Evento, seqs []uint64) []error {
	us := make([]unidade, len(evs))
	for i, ev := range evs {
		us[i] = unidade{
			fn:        s.aplicar(ev, seqs[i]),
			inbox:     &store.Processamento{EventID: ev.EventID, Tipo: string(ev.Tipo), Seq: int64(seqs[i])},
			diferivel: ev.Tipo == evento.AgendaItemDisponivel && !s.o.GravarJa,
		}
		if p, ok := ev.AgendaItemDisponivel(); ok && us[i].diferivel {
			us[i].guarda = &guardaAgenda{eventID: ev.EventID, demandaID: p.DemandaID, uc: p.UnidadeCivicaID, correlacao: correlacao(ev, p.DemandaID)}
		}
	}
	return s.executarVarios(ctx, us)
}

// aplicar is the unit of work of one event, whose inbox row the executor
// checks and writes.
func (s *Servico) aplicar(ev evento.Evento, seq uint64) func(context.Context, *uow) error {
	return func(ctx context.Context, u *uow) error {
		log := s.log.With("event_id", ev.EventID, "tipo", string(ev.Tipo), "sequence", seq)
		if ev.CorrelacaoID != nil {
			log = log.With("correlacao_id", *ev.CorrelacaoID)
		}
		return u.despachar(ctx, log, ev, seq)
	}
}

// despachar is spec 1.4 despacharEvento. The event at stream sequence seq
// is the trigger of whatever this unit decides (CONTRACT §4).
func (u *uow) despachar(ctx context.Context, log *slog.Logger, ev evento.Evento, seq uint64) error {
	if !ev.Armazenado.IsZero() {
		u.gatilho = &Gatilho{EventID: ev.EventID, Seq: int64(seq), Armazenado: ev.Armazenado}
	}
	u.evento = &ev
	switch ev.Tipo {
	case evento.AgendaItemDisponivel:
		p, _ := ev.AgendaItemDisponivel()
		return u.onAgendaItemDisponivel(ctx, log, ev, p)
	case evento.ConselheiroCadastrado:
		p, _ := ev.ConselheiroCadastrado()
		return u.onConselheiroCadastrado(ctx, log, ev, p)
	case evento.CicloConcluido:
		p, _ := ev.CicloConcluido()
		return u.onConselheiroCicloConcluido(ctx, log, ev, p)
	case evento.AtribuicaoRecusada:
		p, _ := ev.AtribuicaoRecusada()
		return u.onConselheiroAtribuicaoRecusada(ctx, log, ev, p)
	case evento.DuplicidadeAgregada:
		p, _ := ev.DuplicidadeAgregada()
		return u.onDuplicidadeAgregada(ctx, log, ev, p)
	case evento.DemandaIniciada:
		p, _ := ev.DemandaIniciada()
		return u.onDemandaIniciada(ctx, log, ev, p)
	case evento.SuspensaoExpirada:
		p, _ := ev.SuspensaoExpirada()
		return u.onSuspensaoExpirada(ctx, log, p)
	case evento.Varredura:
		p, _ := ev.Varredura()
		return u.onVarredura(ctx, log, p)
	default:
		// The phase-2 inputs (fase2.go), spec 4.9's stub among them.
		if ok, err := u.despacharFase2(ctx, log, ev); ok {
			return err
		}
		return fmt.Errorf("tipo não consumido: %s", ev.Tipo)
	}
}

// correlacao propagates the incoming correlacao_id, else the demand id
// (CONTRACT §3).
func correlacao(ev evento.Evento, demanda uuid.UUID) string {
	if ev.CorrelacaoID != nil && *ev.CorrelacaoID != "" {
		return *ev.CorrelacaoID
	}
	return demanda.String()
}

// onAgendaItemDisponivel is spec 3.9.
func (u *uow) onAgendaItemDisponivel(ctx context.Context, log *slog.Logger, ev evento.Evento, p evento.AgendaItemDisponivelPayload) error {
	log = log.With("demanda_id", p.DemandaID, "uc_id", p.UnidadeCivicaID)
	// Steps 1, 3 and 4 in one round trip: the event already pending, the
	// demand already assigned, the demand already pending.
	corr := correlacao(ev, p.DemandaID)
	g, lido := u.lote.guardas[ev.EventID]
	var err error
	if !lido {
		g, err = u.tx.GuardaDaAgenda(ctx, store.AgendaAGuardar{EventID: ev.EventID, DemandaID: p.DemandaID, Correlacao: corr})
	}
	// What this batch decided and has not written yet counts too.
	g.PendentePeloEvento = g.PendentePeloEvento || u.lote.porEvento[ev.EventID]
	g.Atribuida = g.Atribuida || u.lote.atribuidas[p.DemandaID]
	_, naFila := u.lote.pendentesDe[p.DemandaID]
	g.Pendente = g.Pendente || naFila
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
	_, err = u.executarSorteio(ctx, Pedido{
		UC: p.UnidadeCivicaID, DemandaID: p.DemandaID,
		Dados: DadosDemanda{
			ScoreFinal: p.ScoreFinal, CategoriaID: p.CategoriaID, NivelPrecedencia: int32(p.NivelPrecedencia),
			GrupoID: p.GrupoID, CorrelacaoID: corr, EventIDOrigem: ev.EventID,
		},
		semCandidatosPublicado: g.SemCandidatosPublicado || u.lote.correlacoes[corr],
	})
	return err
}

// onConselheiroCadastrado is spec 3.10.
func (u *uow) onConselheiroCadastrado(ctx context.Context, log *slog.Logger, ev evento.Evento, p evento.ConselheiroCadastradoPayload) error {
	log = log.With("conselheiro_id", p.CidadaoID, "uc_id", p.UnidadeCivicaID)
	// 1. idempotency by event_id_cadastro.
	if achou, err := u.tx.CadastroAplicado(ctx, ev.EventID); err != nil || achou {
		if achou {
			log.Info("conselheiro.cadastrado reentregue")
		}
		return err
	}
	// 3. persist with id = cidadao_id. Any duplicate (same citizen, UC and
	// level, or the same citizen at all, since id = cidadao_id) is found by
	// id before inserting: a unique violation would abort the transaction.
	if _, achou, err := u.tx.ConselheiroPorID(ctx, p.CidadaoID); err != nil || achou {
		if achou {
			log.Info("cadastro duplicado — ignorando", "nivel_atuacao", p.NivelAtuacao)
		}
		return err
	}
	status := elegibilidade.StatusCadastro(p.Status)
	capacitacao, err := u.capacitacaoNoCadastro(ctx, p.CidadaoID, p.CapacitacaoConcluida) // phase 2 (CONTRACT §8)
	if err != nil {
		return err
	}
	if err := u.tx.Cadastrar(ctx, store.Cadastro{
		Cidadao: p.CidadaoID, UC: p.UnidadeCivicaID, Nivel: int32(p.NivelAtuacao),
		Status: status, Capacitacao: capacitacao, Agora: u.agora, EventID: ev.EventID,
	}); err != nil {
		if c, ok := store.UniqueViolation(err); ok {
			return fmt.Errorf("cadastro duplicado não detectado antes do insert (%s): %w", c, err)
		}
		return err
	}
	u.alterou(p.CidadaoID)
	u.registros = append(u.registros, registro.NovoCadastro(ev.EventID, u.seqGatilho(), p.CidadaoID, p.UnidadeCivicaID, p.NivelAtuacao, status, p.CapacitacaoConcluida))
	log.Info("Conselheiro cadastrado", "capacitacao_concluida", p.CapacitacaoConcluida, "status", status)
	// 4. sweep the pending queue of the UC and its descendants.
	return u.varrerFila(ctx, log, p.UnidadeCivicaID)
}

// onConselheiroCicloConcluido is spec 3.11.
func (u *uow) onConselheiroCicloConcluido(ctx context.Context, log *slog.Logger, ev evento.Evento, p evento.ConselheiroCicloConcluidoPayload) error {
	log = log.With("conselheiro_id", p.ConselheiroID, "demanda_id", p.DemandaID)
	// 1. idempotency by event_id_encerramento.
	if achou, err := u.tx.EncerramentoAplicado(ctx, ev.EventID); err != nil || achou {
		if achou {
			log.Info("conselheiro.ciclo_concluído reentregue")
		}
		return err
	}
	// 3. the counsellor.
	c, achou, err := u.tx.ConselheiroParaAtualizar(ctx, p.ConselheiroID)
	if err != nil {
		return err
	}
	if !achou {
		log.Warn("ciclo concluído de conselheiro não cadastrado")
		if p.UnidadeCivicaID == nil {
			return nil
		}
		return u.varrerFila(ctx, log, *p.UnidadeCivicaID)
	}
	// 4. close the assignment and release the counsellor.
	a, achou, err := u.tx.AtribuicaoAtivaDoPar(ctx, p.ConselheiroID, p.DemandaID)
	if err != nil {
		return err
	} else if achou {
		if err := u.tx.Encerrar(ctx, a.ID, AtribuicaoConcluida, ev.EventID); err != nil {
			return err
		}
		u.alterou(p.ConselheiroID)
		log.Info("Atribuição concluída", "motivo_encerramento", p.MotivoEncerramento)
	} else {
		log.Info("ciclo concluído sem atribuição ativa correspondente — conselheiro liberado mesmo assim")
	}
	// A cycle naming another demand than the one the counsellor holds must
	// not make him disponivel while an assignment is still active
	// (ocupado iff an active assignment exists).
	_, outra, err := u.tx.AtribuicaoAtivaDoConselheiro(ctx, c.ID)
	if err != nil {
		return err
	}
	depois := elegibilidade.StatusAposCiclo(c.Status, c.SuspensaoAte, outra, u.agora)
	if outra {
		log.Warn("ciclo concluído para outra demanda: conselheiro mantém a atribuição ativa e segue ocupado")
	} else if err := u.transitar(ctx, log, c, elegibilidade.Disponivel, ev.EventID); err != nil {
		return err
	}
	u.registros = append(u.registros, registro.NovoCicloConcluido(ev.EventID, u.seqGatilho(), c.ID, p.DemandaID, depois))
	// 5. sweep the payload's UC, else the counsellor's.
	uc := c.UC
	if p.UnidadeCivicaID != nil {
		uc = *p.UnidadeCivicaID
	}
	return u.varrerFila(ctx, log, uc)
}

// onConselheiroAtribuicaoRecusada is spec 3.12.
func (u *uow) onConselheiroAtribuicaoRecusada(ctx context.Context, log *slog.Logger, ev evento.Evento, p evento.ConselheiroAtribuicaoRecusadaPayload) error {
	log = log.With("conselheiro_id", p.ConselheiroID, "demanda_id", p.DemandaID, "uc_id", p.UnidadeCivicaID, "motivo", string(p.Motivo))
	// 1. idempotency by evento_id_recusa and event_id_encerramento (the
	// spec's buscarRecusasPorEventoId, buscarAtribuicaoPorEventIdEncerramento).
	if achou, err := u.tx.RecusaAplicada(ctx, ev.EventID); err != nil || achou {
		if achou {
			log.Info("conselheiro.atribuicao_recusada reentregue")
		}
		return err
	}
	if achou, err := u.tx.EncerramentoAplicado(ctx, ev.EventID); err != nil || achou {
		if achou {
			log.Info("conselheiro.atribuicao_recusada reentregue")
		}
		return err
	}
	// 3. the active assignment of the pair.
	a, achou, err := u.tx.AtribuicaoAtivaDoPar(ctx, p.ConselheiroID, p.DemandaID)
	if err != nil {
		return err
	}
	if !achou {
		log.Warn("recusa sem atribuição ativa correspondente")
		return u.varrerFila(ctx, log, p.UnidadeCivicaID)
	}
	// 4. close it and record the refusal.
	if err := u.tx.Encerrar(ctx, a.ID, AtribuicaoRecusada, ev.EventID); err != nil {
		return err
	}
	u.alterou(p.ConselheiroID)
	c, temConselheiro, err := u.tx.ConselheiroParaAtualizar(ctx, p.ConselheiroID)
	if err != nil {
		return err
	}
	// The refuser goes back to disponivel; a suspended one is not released.
	if temConselheiro {
		if depois := elegibilidade.StatusAposRecusa(c.Status); depois != c.Status {
			if err := u.transitar(ctx, log, c, depois, ev.EventID); err != nil {
				return err
			}
			c.Status = depois
		}
		// No motive: a refusal for personal risk must not show (spec 3.12).
		u.registros = append(u.registros, registro.NovaRecusa(ev.EventID, u.seqGatilho(), c.ID, a.DemandaID, c.Status))
	}
	motivo := string(p.Motivo)
	u.depois = append(u.depois, func() { u.servico.o.Observador.Recusa(motivo) })
	if p.Motivo == evento.RiscoPessoal {
		log.Info("Recusa por risco pessoal: sem contador e sem suspensão")
	} else {
		// The parameters in force (d6a.config): a new version applies from
		// the next refusal on.
		par, err := u.parametros(ctx)
		if err != nil {
			return err
		}
		log = log.With("versao_parametros", par.Versao)
		recusas, err := u.tx.RecusasDesdeAceitacao(ctx, p.ConselheiroID)
		if err != nil {
			return err
		}
		consecutivas := recusas + 1
		if err := u.tx.ContarRecusa(ctx, store.RecusaContada{
			Conselheiro: p.ConselheiroID, Consecutivas: int32(consecutivas), Agora: u.agora,
			Demanda: p.DemandaID, EventoRecusa: ev.EventID,
		}); err != nil {
			return err
		}
		log.Info("Recusa registrada", "recusas_consecutivas", consecutivas)
		if consecutivas > int64(par.NRecusasSuspensao) && temConselheiro {
			if err := u.suspender(ctx, log, c, ev.EventID, consecutivas, par); err != nil {
				return err
			}
		}
	}
	// 5. re-draw the same demand from the assignment's snapshot, excluding
	// the refuser (spec 3.12 step 5, 2.3).
	r, err := u.executarSorteio(ctx, Pedido{
		UC: a.UC, DemandaID: a.DemandaID, Excluir: &p.ConselheiroID,
		Dados: DadosDemanda{
			ScoreFinal: a.Demanda.ScoreFinal, CategoriaID: a.Demanda.CategoriaID, NivelPrecedencia: a.Demanda.NivelPrecedencia,
			GrupoID: a.Demanda.GrupoID, CorrelacaoID: correlacao(ev, a.DemandaID), EventIDOrigem: ev.EventID,
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
func (u *uow) onDuplicidadeAgregada(ctx context.Context, log *slog.Logger, ev evento.Evento, p evento.DuplicidadeAgregadaPayload) error {
	var fora []uuid.UUID
	for _, m := range p.Membros {
		if m == p.RepresentanteDemandaID {
			continue
		}
		removida, err := u.tx.TirarDaFila(ctx, m)
		if err != nil {
			return err
		}
		if removida {
			fora = append(fora, m)
		}
	}
	u.registros = append(u.registros, registro.NovaAgregacao(ev.EventID, u.seqGatilho(), p.RepresentanteDemandaID, fora))
	log.Info("Duplicidade agregada: membros removidos da fila", "agregado_id", p.AgregadoID,
		"representante_demanda_id", p.RepresentanteDemandaID, "membros", len(p.Membros), "removidos", len(fora))
	return nil
}

// varrerFila is the release sweep of spec 3.10 step 4 / 3.11 step 5 / 4.7:
// the oldest pending demand of the UC and its descendants gets a draw.
func (u *uow) varrerFila(ctx context.Context, log *slog.Logger, uc uuid.UUID) error {
	u.registrarVarredura(&uc, nil, "")
	return u.varrerFilaSemRegistro(ctx, log, uc)
}

// varrerFilaSemRegistro is varrerFila once its record is appended.
func (u *uow) varrerFilaSemRegistro(ctx context.Context, log *slog.Logger, uc uuid.UUID) error {
	ucs, err := u.servico.o.Hierarquia.ComDescendentes(ctx, uc)
	if err != nil {
		return err
	}
	// The rows are read, the rule (spec 4.7, FIFO) is fila.Devida, the
	// replay's.
	cabecas, err := u.tx.CabecasDaFila(ctx, ucs)
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
	_, err = u.sortearPendente(ctx, log, cabecas[i])
	return err
}

// registrarVarredura appends the record of a sweep (CONTRACT §7 "Queue
// order"): of uc's queue or of one pending demand. A consumed d6a.varredura
// is its own record (acao its payload's); the sweep of another input is
// named after that input.
func (u *uow) registrarVarredura(uc, demanda *uuid.UUID, acao string) {
	var id uuid.UUID
	switch {
	case u.evento == nil:
		id = u.novoID()
	case u.evento.Tipo == evento.Varredura:
		id = u.evento.EventID
	default:
		id = registro.IDVarredura(u.evento.EventID)
	}
	if acao == "" && u.evento != nil {
		acao = string(u.evento.Tipo)
	}
	u.registros = append(u.registros, registro.NovaVarredura(id, u.seqGatilho(), uc, demanda, acao))
}

// sortearPendente draws a pending demand; the row leaves the queue on
// success, and executarSorteio counts the failed attempt (T35).
func (u *uow) sortearPendente(ctx context.Context, log *slog.Logger, p store.Pendente) (bool, error) {
	log = log.With("demanda_id", p.DemandaID, "pendente_uc_id", p.UC)
	if _, achou, err := u.tx.AtribuicaoAtivaDaDemanda(ctx, p.DemandaID); err != nil {
		return false, err
	} else if achou {
		_, err := u.tx.TirarDaFila(ctx, p.DemandaID)
		log.Info("pendente já atribuída — removida da fila")
		return false, err
	}
	r, err := u.executarSorteio(ctx, Pedido{
		UC: p.UC, DemandaID: p.DemandaID,
		Dados: DadosDemanda{
			ScoreFinal: p.Demanda.ScoreFinal, CategoriaID: p.Demanda.CategoriaID, NivelPrecedencia: p.Demanda.NivelPrecedencia,
			GrupoID: p.Demanda.GrupoID, CorrelacaoID: p.DemandaID.String(), EventIDOrigem: p.EventIDOrigem,
		},
		naFila: true,
	})
	if err != nil || !r.Sucesso {
		return false, err
	}
	_, err = u.tx.TirarDaFila(ctx, p.DemandaID)
	log.Info("Fila pendente: sorteio concluído", "conselheiro_id", r.ConselheiroID)
	return true, err
}
