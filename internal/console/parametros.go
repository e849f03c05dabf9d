package console

import (
	"context"
	"fmt"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/store"
)

// Parametros returns the version in force (read outside the
// executor; the console and the metrics show it).
func (s *Console) Parametros(ctx context.Context) (atribuicao.Parametros, error) {
	v, achou, err := s.ler().VersaoVigente(ctx)
	if err != nil || !achou {
		if err == nil {
			err = fmt.Errorf("%w: d6a.config vazia (boot não concluído)", ErrNaoEncontrado)
		}
		return atribuicao.Parametros{}, err
	}
	return atribuicao.ParametrosDaVersao(v), nil
}

// VersoesParametros returns every version, oldest first.
func (s *Console) VersoesParametros(ctx context.Context) ([]atribuicao.Parametros, error) {
	vs, err := s.ler().VersoesParametros(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]atribuicao.Parametros, len(vs))
	for i, v := range vs {
		out[i] = atribuicao.ParametrosDaVersao(v)
	}
	return out, nil
}

// NovosParametros writes a new version of d6a.config through the executor,
// with the administrative action that made it, and returns its number. It
// applies from the next refusal on; earlier suspensions keep the version
// they were decided under.
func (s *Console) NovosParametros(ctx context.Context, a Acao, p atribuicao.Parametros) (int, error) {
	if err := a.validar(); err != nil {
		return 0, err
	}
	if err := p.Validar(); err != nil {
		return 0, err
	}
	var versao int32
	err := s.o.Executor.Submeter(ctx, func(ctx context.Context, u atribuicao.Unidade) error {
		anterior, err := u.Parametros(ctx)
		if err != nil {
			return err
		}
		versao, err = banco(u).InserirVersaoParametros(ctx, store.VersaoParametros{
			NRecusasSuspensao: int32(p.NRecusasSuspensao), TSuspensaoDias: int32(p.TSuspensaoDias),
			TimeoutRespostaHoras: int32(p.TimeoutRespostaHoras), Sub: a.Sub, Justificativa: a.Justificativa, Em: u.Agora(),
		})
		if err != nil {
			return err
		}
		s.log.Warn("parâmetros alterados pelo console", "sub", a.Sub, "versao_anterior", anterior.Versao, "versao_parametros", versao,
			"n_recusas_suspensao", p.NRecusasSuspensao, "t_suspensao_dias", p.TSuspensaoDias,
			"timeout_resposta_horas", p.TimeoutRespostaHoras, "justificativa", a.Justificativa)
		return registrarAcao(ctx, u, a, AcaoParametros, fmt.Sprintf("versao %d", versao), nil, map[string]any{
			"versao": versao, "versao_anterior": anterior.Versao, "n_recusas_suspensao": p.NRecusasSuspensao,
			"t_suspensao_dias": p.TSuspensaoDias, "timeout_resposta_horas": p.TimeoutRespostaHoras,
		})
	})
	return int(versao), err
}
