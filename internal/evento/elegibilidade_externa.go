package evento

import (
	"github.com/google/uuid"
)

// Payloads of the phase-2 eligibility inputs (spec 8.3, CONTRACT §8).
// Fields other than these are ignored.

// ConselheiroElegibilidadeAtualizadaPayload is the payload of
// conselheiro.elegibilidade_atualizada (spec 3.5): the unit whose
// eligibility criteria changed upstream, and the version of the criteria.
type ConselheiroElegibilidadeAtualizadaPayload struct {
	UnidadeCivicaID  uuid.UUID
	VersaoParametros string
}

// CapacitacaoConcluidaPayload is the payload of capacitação.concluída
// (CONTRACT §8): the counsellor's training on the external record.
type CapacitacaoConcluidaPayload struct {
	ConselheiroID uuid.UUID
	CursoID       string
	// ConcluidaEm is the completion as the producer wrote it.
	ConcluidaEm string
}

// VinculoValidadoPayload is the payload of vínculo.validado (CONTRACT §8):
// the counsellor's link to the unit validated (Valido) or revoked.
type VinculoValidadoPayload struct {
	ConselheiroID   uuid.UUID
	UnidadeCivicaID uuid.UUID
	Valido          bool
	ValidadoEm      string
}

// ProgressaoHabilitadaPayload is the payload of progressão.habilitada
// (CONTRACT §8): the counsellor's unit of action becomes UnidadeCivicaID,
// of level NivelAtuacao (1 to 7).
type ProgressaoHabilitadaPayload struct {
	ConselheiroID   uuid.UUID
	UnidadeCivicaID uuid.UUID
	NivelAtuacao    int
}

// ElegibilidadeAtualizada returns the payload when the event is of that type.
func (e Evento) ElegibilidadeAtualizada() (ConselheiroElegibilidadeAtualizadaPayload, bool) {
	p, ok := e.Payload.(ConselheiroElegibilidadeAtualizadaPayload)
	return p, ok
}

// CapacitacaoConcluida returns the payload when the event is of that type.
func (e Evento) CapacitacaoConcluida() (CapacitacaoConcluidaPayload, bool) {
	p, ok := e.Payload.(CapacitacaoConcluidaPayload)
	return p, ok
}

// VinculoValidado returns the payload when the event is of that type.
func (e Evento) VinculoValidado() (VinculoValidadoPayload, bool) {
	p, ok := e.Payload.(VinculoValidadoPayload)
	return p, ok
}

// ProgressaoHabilitada returns the payload when the event is of that type.
func (e Evento) ProgressaoHabilitada() (ProgressaoHabilitadaPayload, bool) {
	p, ok := e.Payload.(ProgressaoHabilitadaPayload)
	return p, ok
}

// spec 3.5: unidade_civica_id and versao_parametros are required.
func decodificarElegibilidade(o objeto) (ConselheiroElegibilidadeAtualizadaPayload, error) {
	var p ConselheiroElegibilidadeAtualizadaPayload
	var err error
	if p.UnidadeCivicaID, err = o.uuid("unidade_civica_id"); err != nil {
		return p, err
	}
	if p.VersaoParametros, err = o.texto("versao_parametros"); err != nil {
		return p, err
	}
	if len(p.VersaoParametros) > 200 {
		return p, inutilizavel("payload.versao_parametros com mais de 200 bytes")
	}
	return p, nil
}

// CONTRACT §8: conselheiro_id, curso_id and concluida_em are required.
func decodificarCapacitacao(o objeto) (CapacitacaoConcluidaPayload, error) {
	var p CapacitacaoConcluidaPayload
	var err error
	if p.ConselheiroID, err = o.uuid("conselheiro_id"); err != nil {
		return p, err
	}
	if p.CursoID, err = o.texto("curso_id"); err != nil {
		return p, err
	}
	if len(p.CursoID) > 200 {
		return p, inutilizavel("payload.curso_id com mais de 200 bytes")
	}
	if p.ConcluidaEm, err = o.texto("concluida_em"); err != nil {
		return p, err
	}
	return p, nil
}

// CONTRACT §8: conselheiro_id, unidade_civica_id and valido are required;
// validado_em may be absent.
func decodificarVinculo(o objeto) (VinculoValidadoPayload, error) {
	var p VinculoValidadoPayload
	var err error
	if p.ConselheiroID, err = o.uuid("conselheiro_id"); err != nil {
		return p, err
	}
	if p.UnidadeCivicaID, err = o.uuid("unidade_civica_id"); err != nil {
		return p, err
	}
	v, ok, err := o.booleanoOpcional("valido")
	if err != nil {
		return p, err
	}
	if !ok {
		return p, o.ausente("valido")
	}
	p.Valido = v
	if p.ValidadoEm, err = o.textoOuVazio("validado_em"); err != nil {
		return p, err
	}
	return p, nil
}

// CONTRACT §8: conselheiro_id, unidade_civica_id and nivel_atuacao (1 to 7)
// are required.
func decodificarProgressao(o objeto) (ProgressaoHabilitadaPayload, error) {
	var p ProgressaoHabilitadaPayload
	var err error
	if p.ConselheiroID, err = o.uuid("conselheiro_id"); err != nil {
		return p, err
	}
	if p.UnidadeCivicaID, err = o.uuid("unidade_civica_id"); err != nil {
		return p, err
	}
	n, ok, err := o.inteiroOpcional("nivel_atuacao")
	if err != nil {
		return p, err
	}
	if !ok {
		return p, o.ausente("nivel_atuacao")
	}
	if n < 1 || n > 7 {
		return p, inutilizavel("payload.nivel_atuacao fora de 1..7: %d", n)
	}
	p.NivelAtuacao = int(n)
	return p, nil
}
