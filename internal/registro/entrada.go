package registro

import (
	"bytes"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/sorteio"
)

// Kinds of the input records (CONTRACT §7): each input or state change
// that the eligibility of spec 4.3 depends on. The consumed events keep
// their type's name; the state changes d6a decides are "d6a.…".
const (
	TipoCadastro          = "conselheiro.cadastrado"
	TipoCicloConcluido    = "conselheiro.ciclo_concluído"
	TipoRecusa            = "conselheiro.atribuicao_recusada"
	TipoAgregacao         = "duplicidade.agregada"
	TipoSuspensao         = "d6a.suspensao"
	TipoSuspensaoExpirada = "conselheiro.suspensao_expirada"
	TipoInativacao        = "d6a.inativacao"
	TipoReativacao        = "d6a.reativacao"
	// TipoLiberacao is the boot's repair of an occupied counsellor
	// without an active assignment (spec 4.8).
	TipoLiberacao = "d6a.liberacao"
	// TipoVarredura is a sweep of the pending queue (spec 4.7): a consumed
	// d6a.varredura, or the sweep another input makes (a registration, a
	// cycle end, a suspension's end, a refusal that matches no active
	// assignment). It names what it sweeps, a unit or one demand, so the
	// replay knows which waiting demand was due (CONTRACT §7 "Queue
	// order").
	TipoVarredura = "d6a.varredura"
)

// tiposEntrada are the kinds an Entrada may have (the phase-2 ones in
// entrada_elegibilidade_externa.go).
var tiposEntrada = append([]string{TipoCadastro, TipoCicloConcluido, TipoRecusa, TipoAgregacao, TipoSuspensao, TipoSuspensaoExpirada, TipoInativacao, TipoReativacao, TipoLiberacao, TipoVarredura},
	tiposFase2...)

// Entrada is the record of an input or a state change that eligibility
// depends on, appended in the order it was applied, in its transaction.
// Which keys a kind carries is in docs/verificacao.md §0.1; absent ones are
// left out. The field order is the key order and must not change.
//
// No record says why a refusal was made: a refusal for personal risk
// (spec 3.12) carries no penalty and is sensitive, so every refusal's
// record is alike, and a suspension's record says it cannot be checked
// from the public log (ConferivelPublicamente false): the counsellor
// concerned checks it with what they alone received.
type Entrada struct {
	Tipo string `json:"tipo"`
	// EventID is the consumed event's id (a suspension's is derived from
	// its refusal's: IDSuspensao).
	EventID uuid.UUID `json:"event_id"`
	// GatilhoSequence is the stream sequence of the consumed message it
	// follows (null for the console's actions and the periodic job).
	GatilhoSequence      *int64      `json:"gatilho_sequence"`
	ConselheiroID        *uuid.UUID  `json:"conselheiro_id,omitempty"`
	UnidadeCivicaID      *uuid.UUID  `json:"unidade_civica_id,omitempty"`
	NivelAtuacao         *int64      `json:"nivel_atuacao,omitempty"`
	Status               string      `json:"status,omitempty"`
	CapacitacaoConcluida *bool       `json:"capacitacao_concluida,omitempty"`
	DemandaID            *uuid.UUID  `json:"demanda_id,omitempty"`
	Removidas            []uuid.UUID `json:"removidas,omitempty"`
	DataSuspensaoAte     string      `json:"data_suspensao_ate,omitempty"`
	// ConferivelPublicamente is false for a suspension: the refusals it
	// counts are public, their motives are not.
	ConferivelPublicamente *bool `json:"conferivel_publicamente,omitempty"`
	// Acao is what led to a sweep (a d6a.varredura's acao, or the type of
	// the input that swept).
	Acao string `json:"acao,omitempty"`
	// Phase-2 inputs (CONTRACT §8, entrada_elegibilidade_externa.go).
	CursoID            string `json:"curso_id,omitempty"`
	Valido             *bool  `json:"valido,omitempty"`
	VersaoParametros   string `json:"versao_parametros,omitempty"`
	CapacitacaoExterna *bool  `json:"capacitacao_externa,omitempty"`
	ExigirVinculo      *bool  `json:"exigir_vinculo,omitempty"`
}

func (r Entrada) Chaves() (uuid.UUID, uuid.UUID) {
	if r.DemandaID != nil {
		return r.EventID, *r.DemandaID
	}
	return r.EventID, uuid.Nil
}

// Bytes is the canonical encoding, as Registro.Bytes.
func (r Entrada) Bytes() ([]byte, error) { return codificarRapido(r) }

// nsSuspensao is the namespace of the ids of suspension records.
var nsSuspensao = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/formigueiro/d6a/transparencia/suspensao"))

// IDSuspensao is the record id of the suspension a refusal led to.
func IDSuspensao(recusa uuid.UUID) uuid.UUID { return uuid.NewSHA1(nsSuspensao, recusa[:]) }

// NovoCadastro is the record of a counsellor's registration.
func NovoCadastro(eventID uuid.UUID, gatilho *int64, conselheiro, uc uuid.UUID, nivel int, status string, capacitacao bool) Entrada {
	n := int64(nivel)
	return Entrada{Tipo: TipoCadastro, EventID: eventID, GatilhoSequence: gatilho, ConselheiroID: &conselheiro,
		UnidadeCivicaID: &uc, NivelAtuacao: &n, Status: status, CapacitacaoConcluida: &capacitacao}
}

// NovoCicloConcluido is the record of a cycle end: status is what the
// counsellor is after it (disponivel when it freed them).
func NovoCicloConcluido(eventID uuid.UUID, gatilho *int64, conselheiro, demanda uuid.UUID, status string) Entrada {
	return Entrada{Tipo: TipoCicloConcluido, EventID: eventID, GatilhoSequence: gatilho, ConselheiroID: &conselheiro, DemandaID: &demanda, Status: status}
}

// NovaRecusa is the record of a refusal, without its motive.
func NovaRecusa(eventID uuid.UUID, gatilho *int64, conselheiro, demanda uuid.UUID, status string) Entrada {
	return Entrada{Tipo: TipoRecusa, EventID: eventID, GatilhoSequence: gatilho, ConselheiroID: &conselheiro, DemandaID: &demanda, Status: status}
}

// NovaAgregacao is the record of a duplicidade.agregada: the demands that
// left the pending queue, sorted.
func NovaAgregacao(eventID uuid.UUID, gatilho *int64, representante uuid.UUID, removidas []uuid.UUID) Entrada {
	r := slices.Clone(removidas)
	slices.SortFunc(r, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	if r == nil {
		r = []uuid.UUID{}
	}
	return Entrada{Tipo: TipoAgregacao, EventID: eventID, GatilhoSequence: gatilho, DemandaID: &representante, Removidas: r}
}

// NovaSuspensao is the record of a suspension a refusal led to.
func NovaSuspensao(recusa uuid.UUID, gatilho *int64, conselheiro uuid.UUID, ate time.Time) Entrada {
	f := false
	return Entrada{Tipo: TipoSuspensao, EventID: IDSuspensao(recusa), GatilhoSequence: gatilho, ConselheiroID: &conselheiro,
		DataSuspensaoAte: sorteio.FormatTimestamp(ate), ConferivelPublicamente: &f}
}

// NovaSuspensaoExpirada is the record of a suspension's end (its
// conselheiro.suspensao_expirada's id).
func NovaSuspensaoExpirada(eventID uuid.UUID, gatilho *int64, conselheiro uuid.UUID, ate time.Time) Entrada {
	return Entrada{Tipo: TipoSuspensaoExpirada, EventID: eventID, GatilhoSequence: gatilho, ConselheiroID: &conselheiro, DataSuspensaoAte: sorteio.FormatTimestamp(ate)}
}

// NovaMudancaStatus is the record of the console setting (inativo) or
// lifting (status after it) a counsellor's inactivity, or of the boot's
// repair (TipoLiberacao).
func NovaMudancaStatus(tipo string, eventID, conselheiro uuid.UUID, status string) Entrada {
	return Entrada{Tipo: tipo, EventID: eventID, ConselheiroID: &conselheiro, Status: status}
}

// nsVarredura is the namespace of the ids of sweep records made by an
// input of another kind.
var nsVarredura = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/formigueiro/d6a/transparencia/varredura"))

// IDVarredura is the record id of the sweep an input (its event id) made.
func IDVarredura(entrada uuid.UUID) uuid.UUID { return uuid.NewSHA1(nsVarredura, entrada[:]) }

// NovaVarredura is the record of a sweep: of the queue of uc, or of the one
// pending demand (exactly one of them is set).
func NovaVarredura(eventID uuid.UUID, gatilho *int64, uc, demanda *uuid.UUID, acao string) Entrada {
	return Entrada{Tipo: TipoVarredura, EventID: eventID, GatilhoSequence: gatilho, UnidadeCivicaID: uc, DemandaID: demanda, Acao: acao}
}

// conferirEntrada checks what an input record shows by itself: a kind this
// verifier knows, with the keys that kind needs.
func conferirEntrada(r Entrada) error {
	if !slices.Contains(tiposEntrada, r.Tipo) {
		return NovaFalha("registro.tipo", r.Tipo, "a kind of input record (docs/verificacao.md §0.1)")
	}
	precisa := func(ok bool, campo string) error {
		if !ok {
			return NovaFalha("registro."+campo, "(absent)", "present in a "+r.Tipo+" record")
		}
		return nil
	}
	switch r.Tipo {
	case TipoCadastro:
		if err := precisa(r.ConselheiroID != nil && r.UnidadeCivicaID != nil && r.NivelAtuacao != nil && r.Status != "" && r.CapacitacaoConcluida != nil, "conselheiro_id/unidade_civica_id/nivel_atuacao/status/capacitacao_concluida"); err != nil {
			return err
		}
	case TipoCicloConcluido, TipoRecusa:
		return precisa(r.ConselheiroID != nil && r.DemandaID != nil && r.Status != "", "conselheiro_id/demanda_id/status")
	case TipoAgregacao:
		// An aggregation that removed nothing has no "removidas" key
		// (omitempty drops the empty list): absent is empty.
		return precisa(r.DemandaID != nil, "demanda_id")
	case TipoSuspensao:
		if err := precisa(r.ConselheiroID != nil && r.DataSuspensaoAte != "" && r.ConferivelPublicamente != nil, "conselheiro_id/data_suspensao_ate/conferivel_publicamente"); err != nil {
			return err
		}
	case TipoSuspensaoExpirada:
		return precisa(r.ConselheiroID != nil && r.DataSuspensaoAte != "", "conselheiro_id/data_suspensao_ate")
	case TipoInativacao, TipoReativacao, TipoLiberacao:
		return precisa(r.ConselheiroID != nil && r.Status != "", "conselheiro_id/status")
	case TipoVarredura:
		if (r.UnidadeCivicaID == nil) == (r.DemandaID == nil) {
			return NovaFalha("registro.unidade_civica_id", "both or neither", "one of unidade_civica_id and demanda_id in a "+r.Tipo+" record")
		}
		return precisa(r.Acao != "", "acao")
	default:
		return conferirEntradaFase2(r, precisa)
	}
	return nil
}
