package evento

import (
	"bytes"
	"encoding/json"
	"math"
	"unicode/utf8"

	"github.com/google/uuid"
)

// AgendaItemDisponivelPayload is the payload of agenda.item_disponível
// (spec 3.1), with the fields the draw needs parsed.
type AgendaItemDisponivelPayload struct {
	DemandaID       uuid.UUID
	UnidadeCivicaID uuid.UUID
	// CategoriaID has 1 to 10 characters: the column is VARCHAR(10) (spec 2.3).
	CategoriaID string
	// NivelPrecedencia is between 1 and 5.
	NivelPrecedencia int
	// ScoreFinal defaults to 0 and fits NUMERIC(12,2) once rounded to cents.
	ScoreFinal float64
	// GrupoID is nil for a solo demand.
	GrupoID *uuid.UUID
	// PosicaoNoBacklog is nil when absent.
	PosicaoNoBacklog *float64
	Timestamp        string
}

// ConselheiroCadastradoPayload is the payload of conselheiro.cadastrado
// (spec 3.2). With the unified identity the stored counsellor id is
// CidadaoID (spec 3.10 step 3); ConselheiroID is kept for logs.
type ConselheiroCadastradoPayload struct {
	ConselheiroID   uuid.UUID
	CidadaoID       uuid.UUID
	UnidadeCivicaID uuid.UUID
	// NivelAtuacao is between 1 and 7; absent means 1 (spec 3.10).
	NivelAtuacao int
	// Status is "disponivel" when absent (spec 3.10); it has at most 20
	// characters, the column's size.
	Status string
	// CapacitacaoConcluida is true when absent: version 1.0.0 has no such
	// field and registration implies training (spec 3.2).
	CapacitacaoConcluida bool
}

// ConselheiroCicloConcluidoPayload is the payload of
// conselheiro.ciclo_concluído (spec 3.3); the fields the handler does not use
// are not decoded.
type ConselheiroCicloConcluidoPayload struct {
	ConselheiroID      uuid.UUID
	DemandaID          uuid.UUID
	MotivoEncerramento string
	// UnidadeCivicaID is nil when absent: the handler then uses the
	// counsellor's own unit (spec 3.11 step 5).
	UnidadeCivicaID *uuid.UUID
}

// MotivoRecusa is the reason of a refusal (spec 3.4).
type MotivoRecusa string

// Refusal reasons of schema 1.1.0 (spec 3.4).
const (
	RecusaExplicita  MotivoRecusa = "recusa_explicita"
	RiscoPessoal     MotivoRecusa = "risco_pessoal"
	TimeoutResposta  MotivoRecusa = "timeout_resposta"
	ForaDoTerritorio MotivoRecusa = "fora_do_territorio"
)

// ConselheiroAtribuicaoRecusadaPayload is the payload of
// conselheiro.atribuicao_recusada (spec 3.4).
type ConselheiroAtribuicaoRecusadaPayload struct {
	ConselheiroID   uuid.UUID
	DemandaID       uuid.UUID
	UnidadeCivicaID uuid.UUID
	// Motivo is RecusaExplicita when absent (spec 3.4).
	Motivo    MotivoRecusa
	Timestamp string
}

// DuplicidadeAgregadaPayload is the payload of duplicidade.agregada (spec 3.6).
type DuplicidadeAgregadaPayload struct {
	AgregadoID             uuid.UUID
	RepresentanteDemandaID uuid.UUID
	// Membros holds the demanda_id of each member, in payload order; it is
	// empty when membros is absent.
	Membros []uuid.UUID
}

// DemandaIniciadaPayload is the payload of conselheiro.demanda_iniciada
// (CONTRACT §3); other fields are ignored.
type DemandaIniciadaPayload struct {
	ConselheiroID uuid.UUID
	DemandaID     uuid.UUID
	// Timestamp is the start as the producer wrote it; empty when absent.
	Timestamp string
}

// DemandaIniciada returns the payload when the event is of that type.
func (e Evento) DemandaIniciada() (DemandaIniciadaPayload, bool) {
	p, ok := e.Payload.(DemandaIniciadaPayload)
	return p, ok
}

// AgendaItemDisponivel returns the payload when the event is of that type.
func (e Evento) AgendaItemDisponivel() (AgendaItemDisponivelPayload, bool) {
	p, ok := e.Payload.(AgendaItemDisponivelPayload)
	return p, ok
}

// ConselheiroCadastrado returns the payload when the event is of that type.
func (e Evento) ConselheiroCadastrado() (ConselheiroCadastradoPayload, bool) {
	p, ok := e.Payload.(ConselheiroCadastradoPayload)
	return p, ok
}

// CicloConcluido returns the payload when the event is of that type.
func (e Evento) CicloConcluido() (ConselheiroCicloConcluidoPayload, bool) {
	p, ok := e.Payload.(ConselheiroCicloConcluidoPayload)
	return p, ok
}

// AtribuicaoRecusada returns the payload when the event is of that type.
func (e Evento) AtribuicaoRecusada() (ConselheiroAtribuicaoRecusadaPayload, bool) {
	p, ok := e.Payload.(ConselheiroAtribuicaoRecusadaPayload)
	return p, ok
}

// DuplicidadeAgregada returns the payload when the event is of that type.
func (e Evento) DuplicidadeAgregada() (DuplicidadeAgregadaPayload, bool) {
	p, ok := e.Payload.(DuplicidadeAgregadaPayload)
	return p, ok
}

// spec 3.9 step 2: demanda_id, unidade_civica_id, categoria_id and
// nivel_precedencia are required.
func decodificarAgenda(o objeto) (AgendaItemDisponivelPayload, error) {
	var p AgendaItemDisponivelPayload
	var err error
	if p.DemandaID, err = o.uuid("demanda_id"); err != nil {
		return p, err
	}
	if p.UnidadeCivicaID, err = o.uuid("unidade_civica_id"); err != nil {
		return p, err
	}
	if p.CategoriaID, err = o.texto("categoria_id"); err != nil {
		return p, err
	}
	if utf8.RuneCountInString(p.CategoriaID) > 10 {
		return p, inutilizavel("payload.categoria_id com mais de 10 caracteres")
	}
	n, ok, err := o.inteiroOpcional("nivel_precedencia")
	if err != nil {
		return p, err
	}
	if !ok {
		return p, o.ausente("nivel_precedencia")
	}
	if n < 1 || n > 5 {
		return p, inutilizavel("payload.nivel_precedencia fora de 1..5: %d", n)
	}
	p.NivelPrecedencia = int(n)
	score, _, err := o.numeroOpcional("score_final")
	if err != nil {
		return p, err
	}
	// NUMERIC(12,2) holds |x| < 1e10 after rounding to cents (spec 2.3).
	if math.Abs(math.Round(score*100)/100) >= 1e10 {
		return p, inutilizavel("payload.score_final não cabe em NUMERIC(12,2)")
	}
	p.ScoreFinal = score
	if p.GrupoID, err = o.uuidOpcional("grupo_id"); err != nil {
		return p, err
	}
	pos, ok, err := o.numeroOpcional("posicao_no_backlog")
	if err != nil {
		return p, err
	}
	if ok {
		p.PosicaoNoBacklog = &pos
	}
	if p.Timestamp, err = o.textoOuVazio("timestamp"); err != nil {
		return p, err
	}
	return p, nil
}

// spec 3.10 steps 2–3.
func decodificarCadastro(o objeto) (ConselheiroCadastradoPayload, error) {
	var p ConselheiroCadastradoPayload
	var err error
	if p.ConselheiroID, err = o.uuid("conselheiro_id"); err != nil {
		return p, err
	}
	if p.CidadaoID, err = o.uuid("cidadao_id"); err != nil {
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
		n = 1
	}
	if n < 1 || n > 7 {
		return p, inutilizavel("payload.nivel_atuacao fora de 1..7: %d", n)
	}
	p.NivelAtuacao = int(n)
	if p.Status, err = o.textoOuVazio("status"); err != nil {
		return p, err
	}
	if p.Status == "" {
		p.Status = "disponivel"
	}
	if utf8.RuneCountInString(p.Status) > 20 {
		return p, inutilizavel("payload.status com mais de 20 caracteres")
	}
	c, ok, err := o.booleanoOpcional("capacitacao_concluida")
	if err != nil {
		return p, err
	}
	p.CapacitacaoConcluida = c || !ok
	return p, nil
}

// spec 3.11 step 2.
func decodificarCiclo(o objeto) (ConselheiroCicloConcluidoPayload, error) {
	var p ConselheiroCicloConcluidoPayload
	var err error
	if p.ConselheiroID, err = o.uuid("conselheiro_id"); err != nil {
		return p, err
	}
	if p.DemandaID, err = o.uuid("demanda_id"); err != nil {
		return p, err
	}
	if p.MotivoEncerramento, err = o.texto("motivo_encerramento"); err != nil {
		return p, err
	}
	if p.UnidadeCivicaID, err = o.uuidOpcional("unidade_civica_id"); err != nil {
		return p, err
	}
	return p, nil
}

// spec 3.12 step 2 and the reasons of spec 3.4.
func decodificarRecusa(o objeto) (ConselheiroAtribuicaoRecusadaPayload, error) {
	var p ConselheiroAtribuicaoRecusadaPayload
	var err error
	if p.ConselheiroID, err = o.uuid("conselheiro_id"); err != nil {
		return p, err
	}
	if p.DemandaID, err = o.uuid("demanda_id"); err != nil {
		return p, err
	}
	if p.UnidadeCivicaID, err = o.uuid("unidade_civica_id"); err != nil {
		return p, err
	}
	m, err := o.textoOpcional("motivo")
	if err != nil {
		return p, err
	}
	switch {
	case m == nil:
		p.Motivo = RecusaExplicita
	case *m == string(RecusaExplicita), *m == string(RiscoPessoal),
		*m == string(TimeoutResposta), *m == string(ForaDoTerritorio):
		p.Motivo = MotivoRecusa(*m)
	default:
		return p, inutilizavel("payload.motivo desconhecido: %s", curto(*m))
	}
	if p.Timestamp, err = o.textoOuVazio("timestamp"); err != nil {
		return p, err
	}
	return p, nil
}

// spec 3.6: a payload without agregado_id or representante_demanda_id is
// discarded with an error log; here that means the dead-letter stream.
func decodificarDuplicidade(o objeto) (DuplicidadeAgregadaPayload, error) {
	var p DuplicidadeAgregadaPayload
	var err error
	if p.AgregadoID, err = o.uuid("agregado_id"); err != nil {
		return p, err
	}
	if p.RepresentanteDemandaID, err = o.uuid("representante_demanda_id"); err != nil {
		return p, err
	}
	p.Membros = []uuid.UUID{}
	v, ok := o.valor("membros")
	if !ok {
		return p, nil
	}
	if v[0] != '[' {
		return p, inutilizavel("payload.membros não é lista")
	}
	var itens []json.RawMessage
	if err := json.Unmarshal(v, &itens); err != nil {
		return p, inutilizavel("payload.membros não é lista")
	}
	for i, item := range itens {
		item = bytes.TrimSpace(item)
		if len(item) == 0 || item[0] != '{' {
			return p, inutilizavel("payload.membros[%d] não é objeto", i)
		}
		var campos map[string]json.RawMessage
		if err := json.Unmarshal(item, &campos); err != nil {
			return p, inutilizavel("payload.membros[%d] não é objeto", i)
		}
		m := objeto{campos: campos, prefixo: "payload.membros[" + itoa(i) + "]."}
		id, err := m.uuid("demanda_id")
		if err != nil {
			return p, err
		}
		p.Membros = append(p.Membros, id)
	}
	return p, nil
}

// CONTRACT §3: conselheiro_id and demanda_id are required UUIDs.
func decodificarInicio(o objeto) (DemandaIniciadaPayload, error) {
	var p DemandaIniciadaPayload
	var err error
	if p.ConselheiroID, err = o.uuid("conselheiro_id"); err != nil {
		return p, err
	}
	if p.DemandaID, err = o.uuid("demanda_id"); err != nil {
		return p, err
	}
	if p.Timestamp, err = o.textoOuVazio("timestamp"); err != nil {
		return p, err
	}
	return p, nil
}

// SuspensaoExpiradaPayload is the payload of conselheiro.suspensao_expirada
// (CONTRACT §3), consumed back for the sweep that follows a suspension's end.
type SuspensaoExpiradaPayload struct {
	ConselheiroID uuid.UUID
}

// SuspensaoExpirada returns the payload when the event is of that type.
func (e Evento) SuspensaoExpirada() (SuspensaoExpiradaPayload, bool) {
	p, ok := e.Payload.(SuspensaoExpiradaPayload)
	return p, ok
}

func decodificarSuspensaoExpirada(o objeto) (SuspensaoExpiradaPayload, error) {
	var p SuspensaoExpiradaPayload
	var err error
	p.ConselheiroID, err = o.uuid("conselheiro_id")
	return p, err
}

// VarreduraPayload is the payload of d6a.varredura: the pending demand to
// draw, or the unit whose queue to sweep (spec 4.7), and who decided it.
type VarreduraPayload struct {
	// DemandaID names one pending demand (the boot's sweep, the console);
	// nil sweeps UnidadeCivicaID's queue instead.
	DemandaID       *uuid.UUID
	UnidadeCivicaID *uuid.UUID
	// Acao is what decided the sweep: "boot" or "console".
	Acao string
}

// Varredura returns the payload when the event is of that type.
func (e Evento) Varredura() (VarreduraPayload, bool) {
	p, ok := e.Payload.(VarreduraPayload)
	return p, ok
}

func decodificarVarredura(o objeto) (VarreduraPayload, error) {
	var p VarreduraPayload
	var err error
	if p.DemandaID, err = o.uuidOpcional("demanda_id"); err != nil {
		return p, err
	}
	if p.UnidadeCivicaID, err = o.uuidOpcional("unidade_civica_id"); err != nil {
		return p, err
	}
	if p.DemandaID == nil && p.UnidadeCivicaID == nil {
		return p, inutilizavel("payload.demanda_id e payload.unidade_civica_id ausentes: a varredura não diz o que varrer")
	}
	p.Acao, err = o.texto("acao")
	return p, err
}

// Correlacao is the correlacao_id of what d6a publishes for e about a
// demand: e's own, else the demand's id (CONTRACT §3).
func (e Evento) Correlacao(demanda uuid.UUID) string {
	if e.CorrelacaoID != nil && *e.CorrelacaoID != "" {
		return *e.CorrelacaoID
	}
	return demanda.String()
}
