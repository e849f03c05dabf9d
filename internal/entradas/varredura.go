package entradas

import (
	"context"
	"log/slog"
	"time"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/store"
)

// onVarredura draws what a consumed d6a.varredura names: its pending demand
// (still pending), else the queue of its unit.
func (x *aplicacao) onVarredura(ctx context.Context, log *slog.Logger, p evento.VarreduraPayload) error {
	log = log.With("acao", p.Acao)
	if p.DemandaID == nil {
		x.registrarVarredura(p.UnidadeCivicaID, nil, p.Acao)
		return x.varrerFilaSemRegistro(ctx, log, *p.UnidadeCivicaID)
	}
	x.registrarVarredura(nil, p.DemandaID, p.Acao)
	pend, achou, err := x.b.PendenteDaDemanda(ctx, *p.DemandaID)
	if err != nil {
		return err
	} else if !achou {
		log.Info("varredura de demanda que já não está na fila de pendentes", "demanda_id", *p.DemandaID)
		return nil
	}
	ok, err := x.sortearPendente(ctx, log, pend)
	if err == nil && !ok {
		log.Info("Fila pendente: sem elegíveis na varredura", "demanda_id", pend.DemandaID, "tentativas", pend.Tentativas+1)
	}
	return err
}

// onSuspensaoExpirada sweeps the queue of a counsellor whose suspension
// ended (spec 4.8, as on a release), once the end is on the bus.
func (x *aplicacao) onSuspensaoExpirada(ctx context.Context, log *slog.Logger, p evento.SuspensaoExpiradaPayload) error {
	c, achou, err := x.b.ConselheiroPorID(ctx, p.ConselheiroID)
	if err != nil || !achou {
		if !achou && err == nil {
			log.Warn("suspensão expirada de conselheiro não cadastrado", "conselheiro_id", p.ConselheiroID)
		}
		return err
	}
	return x.varrerFila(ctx, log.With("conselheiro_id", c.ID), c.UC)
}

// onDemandaIniciada records when an assignment started
// (conselheiro.demanda_iniciada, CONTRACT §3): the active assignment of the
// pair, else its latest one. The first start recorded wins.
func (x *aplicacao) onDemandaIniciada(ctx context.Context, log *slog.Logger, ev evento.Evento, p evento.DemandaIniciadaPayload) error {
	log = log.With("conselheiro_id", p.ConselheiroID, "demanda_id", p.DemandaID)
	if err := x.u.Ver(ctx, &p.ConselheiroID, nil); err != nil {
		return err
	}
	ativa, achou, err := x.b.AtribuicaoAtivaDoPar(ctx, p.ConselheiroID, p.DemandaID)
	if err != nil {
		return err
	}
	a := store.AtribuicaoDoSorteio{AtribuicaoVigente: ativa, Status: atribuicao.AtribuicaoAtiva}
	if !achou {
		if a, achou, err = x.b.UltimaAtribuicaoDoPar(ctx, p.ConselheiroID, p.DemandaID); err != nil {
			return err
		} else if !achou {
			log.Warn("demanda iniciada sem atribuição correspondente — ignorada")
			return nil
		}
	}
	inicio := x.u.Agora()
	for _, ts := range []string{p.Timestamp, ev.Timestamp} {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			inicio = t.UTC()
			break
		}
	}
	novo, err := x.b.AnotarInicio(ctx, a.AtribuicaoVigente, inicio, ev.EventID, x.u.Agora())
	if err != nil {
		return err
	}
	if !novo {
		log.Info("início da atribuição já registrado", "event_id_sorteio", a.EventIDSorteio)
		return nil
	}
	if a.Status != atribuicao.AtribuicaoAtiva {
		log.Warn("demanda iniciada de atribuição já encerrada — registrada", "event_id_sorteio", a.EventIDSorteio, "status", a.Status)
		return nil
	}
	log.Info("Atribuição iniciada", "event_id_sorteio", a.EventIDSorteio, "iniciada_em", inicio.Format(time.RFC3339))
	return nil
}
