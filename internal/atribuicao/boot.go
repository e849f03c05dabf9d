package atribuicao

import (
	"context"
	"fmt"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// Boot runs the start-up steps of spec 4.5 (onModuleInit → iniciar) that
// touch the database but draw nothing, after the bus consumers exist and
// before consumption starts: seed the offset records at the bus head, the
// parameters, and repair occupied counsellors without an active assignment
// (4.8). BootSorteios runs the steps that draw. Each step is idempotent;
// running them twice changes nothing the first run did not.
func (s *Servico) Boot(ctx context.Context) error {
	if err := s.seedOffsets(ctx); err != nil {
		return fmt.Errorf("seed offsets: %w", err)
	}
	if err := s.semearParametros(ctx); err != nil {
		return fmt.Errorf("parâmetros (d6a.config): %w", err)
	}
	if err := s.registrarPortoes(ctx); err != nil {
		return fmt.Errorf("regras de elegibilidade: %w", err)
	}
	if err := s.registrarRegrasSorteio(ctx); err != nil {
		return fmt.Errorf("regras do sorteio: %w", err)
	}
	if err := s.verificarConsistenciaOcupados(ctx); err != nil {
		return fmt.Errorf("consistência de ocupados: %w", err)
	}
	return nil
}

// BootSorteios runs the boot step that draws: sweep the whole pending
// queue (4.7). The colony runs the reactivation of expired suspensions
// (4.8, manutencao.ReativarVencidos) just before it: the sweep then reads
// counsellors whose suspension has ended as disponivel, each end already
// published (docs/decisions.md, "Boot: reactivation before the sweep").
// Both decide on what the database holds, so the colony holds them back
// while the bus shows results the database lost (an asynchronous standby
// promoted): a draw made then could give a counsellor the bus already gave
// a demand.
func (s *Servico) BootSorteios(ctx context.Context) error {
	if err := s.processarFilaPendentes(ctx); err != nil {
		return fmt.Errorf("fila de pendentes: %w", err)
	}
	s.log.Info("D-6a Sorteio e Atribuição inicializada")
	return nil
}

// seedOffsets is spec 4.5 step 2: one consumer_offset row per consumed type
// at the bus's highest sequence (the spec's obterMaiorSequence: the
// sequence LastEventID returns), never overwriting.
func (s *Servico) seedOffsets(ctx context.Context) error {
	_, seq, err := s.o.Barramento.LastEventID(ctx)
	if err != nil {
		seq = 0
	}
	return s.executar(ctx, func(ctx context.Context, u *unidade) error {
		for _, t := range evento.Consumidos {
			if err := u.tx.SemearOffset(ctx, string(t), int64(seq), u.agora); err != nil {
				return err
			}
		}
		return nil
	})
}

// verificarConsistenciaOcupados is spec 4.8.
func (s *Servico) verificarConsistenciaOcupados(ctx context.Context) error {
	return s.executar(ctx, func(ctx context.Context, u *unidade) error {
		ocupados, err := u.tx.ConselheirosNoStatus(ctx, elegibilidade.Ocupado)
		if err != nil {
			return err
		}
		for _, c := range ocupados {
			if _, achou, err := u.tx.AtribuicaoAtivaDoConselheiro(ctx, c.Conselheiro); err != nil || achou {
				if err != nil {
					return err
				}
				continue
			}
			s.log.Warn("Conselheiro ocupado sem atribuição ativa. Corrigindo.", "conselheiro_id", c.Conselheiro, "motivo", "consistencia-repair")
			id := s.o.NovoID()
			if err := u.tx.MudarStatus(ctx, c.Conselheiro, elegibilidade.Disponivel, id, u.agora); err != nil {
				return err
			}
			u.alterou(c.Cidadao)
			u.registros = append(u.registros, registro.NovaMudancaStatus(registro.TipoLiberacao, id, c.Conselheiro, elegibilidade.Disponivel))
		}
		return nil
	})
}

// loteGatilhos bounds the boot's sweep triggers queued in one unit of work
// (the automatic timeout's batch, manutencao.LoteTimeout, by the same
// reasoning).
const loteGatilhos = 200

// processarFilaPendentes is spec 4.7: every pending demand, oldest first,
// gets a trigger on the bus (d6a.varredura) and is drawn when it comes back
// (CONTRACT §4: one trigger per draw). Triggers are queued in units of
// loteGatilhos.
func (s *Servico) processarFilaPendentes(ctx context.Context) error {
	pendentes, err := s.o.Store.Read().FilaInteira(ctx)
	if err != nil {
		return err
	}
	for inicio := 0; inicio < len(pendentes); inicio += loteGatilhos {
		parte := pendentes[inicio:min(inicio+loteGatilhos, len(pendentes))]
		err := s.executar(ctx, func(ctx context.Context, u *unidade) error {
			for _, p := range parte {
				if _, err := u.publicarVarredura(ctx, IDVarreduraBoot(p.DemandaID, p.Tentativas), &p.DemandaID, nil, AcaoVarreduraBoot); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if len(pendentes) > 0 {
		s.log.Info("Fila pendente: varredura do reinício publicada", "pendentes", len(pendentes))
	}
	return nil
}

// registrarPortoes is the boot step that records the gates in force
// (CONTRACT §8: they are part of the parameter records) when they differ
// from the latest recorded; none recorded reads as both off, so an MVP
// deployment's log gains nothing.
func (s *Servico) registrarPortoes(ctx context.Context) error {
	return s.executar(ctx, func(ctx context.Context, u *unidade) error {
		g := s.o.Portoes
		// None recorded reads as both off.
		versao, vigentes, _, err := u.tx.PortoesRegistrados(ctx)
		if err != nil || vigentes == g {
			return err
		}
		id := registro.IDRegras(int64(versao)+1, g)
		if err := u.tx.RegistrarPortoes(ctx, g, id, u.agora); err != nil {
			return err
		}
		u.registros = append(u.registros, registro.NovasRegras(id, g))
		s.log.Info("regras de elegibilidade em vigor", "capacitacao_externa", g.CapacitacaoExterna, "exigir_vinculo", g.ExigirVinculo)
		return nil
	})
}

// registrarRegrasSorteio is the boot step that starts the beacon rule
// (CONTRACT §4a): a d6a.regras_sorteio record, stating the chain, the
// margin, the witnesses and where the trigger rule began, appended before
// any draw under it, when the one recorded last differs. Without a beacon
// nothing is recorded and draws keep the rule before it.
func (s *Servico) registrarRegrasSorteio(ctx context.Context) error {
	b := s.o.Beacon
	if b == nil {
		return nil
	}
	return s.executar(ctx, func(ctx context.Context, u *unidade) error {
		gatilhoDesde, ultimo, err := u.tx.RegrasDoSorteio(ctx)
		if err != nil {
			return err
		}
		r := b.Regras(gatilhoDesde)
		dados, err := r.Bytes()
		if err != nil {
			return err
		}
		if ultimo != nil {
			if antes, err := registro.LerRegistravel(ultimo); err == nil {
				if a, ok := antes.(registro.RegrasSorteio); ok && a.Mesma(r) {
					return nil
				}
			}
		}
		tamanho, err := transparencia.Tamanho(ctx, u.tx.ParaOLog())
		if err != nil {
			return err
		}
		if err := u.tx.GravarRegrasDoSorteio(ctx, tamanho, dados); err != nil {
			return err
		}
		u.registros = append(u.registros, r)
		s.log.Info("regras do sorteio em vigor: beacon", "cadeia", r.NomeCadeia(), "chave_publica", r.ChavePublica,
			"periodo_s", r.Periodo, "margem_ms", r.MargemMs, "testemunhas", len(r.Testemunhas), "quorum", r.Quorum)
		return nil
	})
}
