package atribuicao

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/formigueiro/d6a/internal/store"
)

// Parametros are the rules in force, one version of d6a.config (spec 8.3):
// N_RECUSAS_SUSPENSAO, T_SUSPENSAO_DIAS and TIMEOUT_RESPOSTA_HORAS, with who
// set them, when and why. Version 1 comes from the environment; later ones
// from the administrative console. A version is never edited.
type Parametros struct {
	Versao               int       `json:"versao"`
	NRecusasSuspensao    int       `json:"n_recusas_suspensao"`
	TSuspensaoDias       int       `json:"t_suspensao_dias"`
	TimeoutRespostaHoras int       `json:"timeout_resposta_horas"`
	Sub                  string    `json:"sub"`
	Justificativa        string    `json:"justificativa"`
	CriadoEm             time.Time `json:"criado_em"`
}

// TSuspensao is the suspension length.
func (p Parametros) TSuspensao() time.Duration {
	return time.Duration(p.TSuspensaoDias) * 24 * time.Hour
}

// TimeoutResposta is the response timeout.
func (p Parametros) TimeoutResposta() time.Duration {
	return time.Duration(p.TimeoutRespostaHoras) * time.Hour
}

// ErrParametroInvalido is returned for a new version with a value out of
// range; nothing is written.
var ErrParametroInvalido = errors.New("parâmetro inválido")

// Validar checks the ranges d6a.config enforces: the refusal limit ≥ 0
// (strict >: 0 suspends at the first refusal), at least one day of
// suspension and one hour of timeout.
func (p Parametros) Validar() error {
	switch {
	case p.NRecusasSuspensao < 0 || p.NRecusasSuspensao > 1000:
		return fmt.Errorf("%w: n_recusas_suspensao deve estar entre 0 e 1000", ErrParametroInvalido)
	case p.TSuspensaoDias < 1 || p.TSuspensaoDias > 3650:
		return fmt.Errorf("%w: t_suspensao_dias deve estar entre 1 e 3650", ErrParametroInvalido)
	case p.TimeoutRespostaHoras < 1 || p.TimeoutRespostaHoras > 24*365:
		return fmt.Errorf("%w: timeout_resposta_horas deve estar entre 1 e 8760", ErrParametroInvalido)
	}
	return nil
}

// ParametrosDaVersao is a version of d6a.config as Parametros (the
// executor's and the console's one mapping).
func ParametrosDaVersao(v store.VersaoParametros) Parametros {
	return Parametros{
		Versao: int(v.Versao), NRecusasSuspensao: int(v.NRecusasSuspensao), TSuspensaoDias: int(v.TSuspensaoDias),
		TimeoutRespostaHoras: int(v.TimeoutRespostaHoras), Sub: v.Sub, Justificativa: v.Justificativa, CriadoEm: v.Em.UTC(),
	}
}

// doAmbiente is version 1 as the environment gives it (CONTRACT §2).
func (s *Servico) doAmbiente() store.VersaoParametros {
	horas := int32(s.o.TimeoutResposta / time.Hour)
	if horas < 1 {
		horas = 72
	}
	return store.VersaoParametros{
		NRecusasSuspensao:    int32(s.o.NRecusasSuspensao),
		TSuspensaoDias:       int32(s.o.TSuspensao / (24 * time.Hour)),
		TimeoutRespostaHoras: horas,
	}
}

// parametros reads the version in force inside the unit of work, seeding
// version 1 from the environment when d6a.config is empty. Every refusal
// reads it, so a new version applies from the next refusal on.
func (u *unidade) parametros(ctx context.Context) (Parametros, error) {
	v, achou, err := u.tx.VersaoVigente(ctx)
	if err != nil {
		return Parametros{}, err
	} else if achou {
		return ParametrosDaVersao(v), nil
	}
	seed := u.servico.doAmbiente()
	seed.Em = u.agora
	if u.veLote && !u.lote.vazio() {
		// A draw's audit row takes the version in force when it is written
		// (d6a.auditoria_versao_parametros): the batch's go first.
		if err := u.lote.gravar(ctx, u.adiadas); err != nil {
			return Parametros{}, err
		}
	}
	if err := u.tx.SemearVersaoInicial(ctx, seed); err != nil {
		return Parametros{}, fmt.Errorf("semear d6a.config: %w", err)
	}
	if v, achou, err = u.tx.VersaoVigente(ctx); err != nil {
		return Parametros{}, err
	} else if !achou {
		return Parametros{}, errors.New("d6a.config vazia depois de semeada")
	}
	return ParametrosDaVersao(v), nil
}

// semearParametros is the boot step that writes version 1 of d6a.config
// when the table is empty. An environment that differs from the version in
// force is ignored, with a warning: after version 1, only the console
// changes the parameters, so the history stays the one record.
func (s *Servico) semearParametros(ctx context.Context) error {
	return s.executar(ctx, func(ctx context.Context, u *unidade) error {
		p, err := u.parametros(ctx)
		if err != nil {
			return err
		}
		amb := s.doAmbiente()
		if int32(p.NRecusasSuspensao) != amb.NRecusasSuspensao || int32(p.TSuspensaoDias) != amb.TSuspensaoDias ||
			int32(p.TimeoutRespostaHoras) != amb.TimeoutRespostaHoras {
			s.log.Warn("parâmetros do ambiente diferem da versão em vigor de d6a.config — vale d6a.config (mude pelo console)",
				"versao_parametros", p.Versao, "n_recusas_suspensao", p.NRecusasSuspensao, "t_suspensao_dias", p.TSuspensaoDias,
				"timeout_resposta_horas", p.TimeoutRespostaHoras)
		} else {
			s.log.Info("parâmetros em vigor", "versao_parametros", p.Versao, "n_recusas_suspensao", p.NRecusasSuspensao,
				"t_suspensao_dias", p.TSuspensaoDias, "timeout_resposta_horas", p.TimeoutRespostaHoras)
		}
		return nil
	})
}
