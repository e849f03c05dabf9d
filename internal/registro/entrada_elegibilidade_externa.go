package registro

import (
	"fmt"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
)

// Record kinds of the phase-2 eligibility inputs (CONTRACT §8) and of the
// gates in force: each consumed input keeps its type's name; the gates a
// start runs with are "d6a.regras_elegibilidade".
const (
	TipoCapacitacao             = "capacitação.concluída"
	TipoVinculo                 = "vínculo.validado"
	TipoProgressao              = "progressão.habilitada"
	TipoElegibilidadeAtualizada = "conselheiro.elegibilidade_atualizada"
	TipoRegras                  = "d6a.regras_elegibilidade"
)

var tiposFase2 = []string{TipoCapacitacao, TipoVinculo, TipoProgressao, TipoElegibilidadeAtualizada, TipoRegras}

// NovaCapacitacao is the record of a capacitação.concluída.
func NovaCapacitacao(eventID uuid.UUID, gatilho *int64, conselheiro uuid.UUID, curso string) Entrada {
	return Entrada{Tipo: TipoCapacitacao, EventID: eventID, GatilhoSequence: gatilho, ConselheiroID: &conselheiro, CursoID: curso}
}

// NovoVinculo is the record of a vínculo.validado: the link to uc valid or
// revoked.
func NovoVinculo(eventID uuid.UUID, gatilho *int64, conselheiro, uc uuid.UUID, valido bool) Entrada {
	return Entrada{Tipo: TipoVinculo, EventID: eventID, GatilhoSequence: gatilho, ConselheiroID: &conselheiro, UnidadeCivicaID: &uc, Valido: &valido}
}

// NovaProgressao is the record of a progressão.habilitada: the counsellor's
// unit of action becomes uc, of level nivel.
func NovaProgressao(eventID uuid.UUID, gatilho *int64, conselheiro, uc uuid.UUID, nivel int) Entrada {
	n := int64(nivel)
	return Entrada{Tipo: TipoProgressao, EventID: eventID, GatilhoSequence: gatilho, ConselheiroID: &conselheiro, UnidadeCivicaID: &uc, NivelAtuacao: &n}
}

// NovaElegibilidadeAtualizada is the record of a
// conselheiro.elegibilidade_atualizada: the unit and its criteria version.
func NovaElegibilidadeAtualizada(eventID uuid.UUID, gatilho *int64, uc uuid.UUID, versao string) Entrada {
	return Entrada{Tipo: TipoElegibilidadeAtualizada, EventID: eventID, GatilhoSequence: gatilho, UnidadeCivicaID: &uc, VersaoParametros: versao}
}

// nsRegras is the namespace of the ids of gates records.
var nsRegras = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/formigueiro/d6a/transparencia/regras"))

// IDRegras is the record id of the n-th change of the gates: a function
// of what it records, so two services consuming the same bus agree.
func IDRegras(n int64, p elegibilidade.Portoes) uuid.UUID {
	return uuid.NewSHA1(nsRegras, fmt.Appendf(nil, "%d|%t|%t", n, p.CapacitacaoExterna, p.ExigirVinculo))
}

// NovasRegras is the record of the gates a start runs with, appended when
// they differ from the latest recorded (none recorded: both off).
func NovasRegras(eventID uuid.UUID, p elegibilidade.Portoes) Entrada {
	k, v := p.CapacitacaoExterna, p.ExigirVinculo
	return Entrada{Tipo: TipoRegras, EventID: eventID, CapacitacaoExterna: &k, ExigirVinculo: &v}
}

func conferirEntradaFase2(r Entrada, precisa func(bool, string) error) error {
	switch r.Tipo {
	case TipoCapacitacao:
		return precisa(r.ConselheiroID != nil, "conselheiro_id")
	case TipoVinculo:
		return precisa(r.ConselheiroID != nil && r.UnidadeCivicaID != nil && r.Valido != nil, "conselheiro_id/unidade_civica_id/valido")
	case TipoProgressao:
		if err := precisa(r.ConselheiroID != nil && r.UnidadeCivicaID != nil && r.NivelAtuacao != nil, "conselheiro_id/unidade_civica_id/nivel_atuacao"); err != nil {
			return err
		}
		if *r.NivelAtuacao < 1 || *r.NivelAtuacao > 7 {
			return NovaFalha("registro.nivel_atuacao", *r.NivelAtuacao, "1 to 7")
		}
	case TipoElegibilidadeAtualizada:
		return precisa(r.UnidadeCivicaID != nil && r.VersaoParametros != "", "unidade_civica_id/versao_parametros")
	case TipoRegras:
		return precisa(r.CapacitacaoExterna != nil && r.ExigirVinculo != nil, "capacitacao_externa/exigir_vinculo")
	}
	return nil
}
