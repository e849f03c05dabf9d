package registro

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/sorteio"
)

// Barramento reads one message of the platform's bus stream by sequence
// (read-only: the platform's event log is public, spec 4.1); *bus.Bus is
// one.
type Barramento interface {
	MsgPorSequencia(ctx context.Context, seq uint64) (data []byte, subject string, armazenado time.Time, err error)
}

// ConferirGatilho checks a draw made under the trigger's rule (CONTRACT
// §4) against the bus: the message at base_sequence is the one whose
// event_id is base, and T is the time the bus server stored it, to the
// millisecond. No window: d6a had no choice of either.
func ConferirGatilho(ctx context.Context, b Barramento, r Registro) error {
	if r.BaseSequence == nil {
		return NovaFalha("base_sequence", "null", "the trigger's stream sequence")
	}
	data, _, em, err := b.MsgPorSequencia(ctx, uint64(*r.BaseSequence))
	if err != nil {
		return fmt.Errorf("gatilho: mensagem %d do barramento: %w", *r.BaseSequence, err)
	}
	var env struct {
		EventID string `json:"event_id"`
	}
	if err := json.Unmarshal(data, &env); err != nil || env.EventID != r.Base {
		return NovaFalha("base", r.Base, fmt.Sprintf("%q (event_id of the trigger at sequence %d)", env.EventID, *r.BaseSequence))
	}
	if t := sorteio.FormatTimestamp(em); t != r.Timestamp {
		return NovaFalha("timestamp", r.Timestamp, t+fmt.Sprintf(" (the bus time of the trigger at sequence %d)", *r.BaseSequence))
	}
	return nil
}

// ConferirNoBarramento checks a record against the bus: a draw's trigger
// (conferiu: it was a draw), an input's message (ConferirEntrada). It
// reads nothing but b, so the tile fetchers run it in parallel.
func ConferirNoBarramento(ctx context.Context, b Barramento, f Registravel) (conferiu bool, err error) {
	switch r := f.(type) {
	case Registro:
		return true, ConferirGatilho(ctx, b, r)
	case Entrada:
		_, err := ConferirEntrada(ctx, b, r)
		return false, err
	}
	return false, nil
}

// ConferirEntrada checks an input record that copies a consumed message
// (a registration, cycle end, refusal or aggregation) against that message
// on the bus: the message at gatilho_sequence has the record's event_id
// and names the same counsellor and demand. conferiu is false for the
// kinds d6a derives itself (a suspension, its end, the console's).
func ConferirEntrada(ctx context.Context, b Barramento, e Entrada) (conferiu bool, err error) {
	switch e.Tipo {
	case TipoCadastro, TipoCicloConcluido, TipoRecusa, TipoAgregacao,
		TipoCapacitacao, TipoVinculo, TipoProgressao, TipoElegibilidadeAtualizada: // phase 2 (CONTRACT §8)
	default:
		return false, nil
	}
	if e.GatilhoSequence == nil {
		return true, NovaFalha("gatilho_sequence", "null", "the stream sequence of the consumed "+e.Tipo)
	}
	data, _, _, err := b.MsgPorSequencia(ctx, uint64(*e.GatilhoSequence))
	if err != nil {
		return true, fmt.Errorf("entrada: mensagem %d do barramento: %w", *e.GatilhoSequence, err)
	}
	m, _, invalida := LerMensagem(uint64(*e.GatilhoSequence), e.Tipo, data)
	if invalida || m.EventID != e.EventID {
		return true, NovaFalha("event_id", e.EventID, fmt.Sprintf("%q (event_id of the message at sequence %d)", m.EventID, *e.GatilhoSequence))
	}
	igual := func(campo string, no uuid.UUID, reg *uuid.UUID) error {
		if reg == nil || no != *reg {
			return NovaFalha(campo, fmt.Sprint(reg), fmt.Sprintf("the %s of the message at sequence %d", campo, *e.GatilhoSequence))
		}
		return nil
	}
	// LerMensagem reads a registration's counsellor from cidadao_id and an
	// aggregation's demand from its representative, and leaves out what a
	// kind does not name.
	if e.Tipo != TipoAgregacao && e.Tipo != TipoElegibilidadeAtualizada {
		if err := igual("conselheiro_id", m.Conselheiro, e.ConselheiroID); err != nil {
			return true, err
		}
	}
	if e.Tipo == TipoCadastro || slices.Contains(tiposFase2, e.Tipo) {
		return true, nil
	}
	return true, igual("demanda_id", m.Demanda, e.DemandaID)
}

// MensagemEntrada is a consumed bus message of an input kind, with the
// ids its checks need: ConferirEntrada's against its record, and the
// replay's that none was dropped.
type MensagemEntrada struct {
	Seq                  uint64
	Tipo                 string
	EventID              uuid.UUID
	Conselheiro, Demanda uuid.UUID
	// UC is a cycle end's payload unidade_civica_id (uuid.Nil: absent),
	// the unit its sweep must sweep (spec 3.11 step 5).
	UC uuid.UUID
}

// LerMensagem takes the ids of an input message of kind tipo; ok false
// when it is not one of the kinds checked, invalida when it cannot be read.
func LerMensagem(seq uint64, tipo string, data []byte) (m MensagemEntrada, ok, invalida bool) {
	switch tipo {
	case TipoCadastro, TipoCicloConcluido, TipoRecusa, TipoAgregacao, TipoSuspensaoExpirada, TipoVarredura,
		TipoCapacitacao, TipoVinculo, TipoProgressao, TipoElegibilidadeAtualizada: // phase 2 (CONTRACT §8)
	default:
		return m, false, false
	}
	var env struct {
		EventID string `json:"event_id"`
		Payload struct {
			ConselheiroID string `json:"conselheiro_id"`
			CidadaoID     string `json:"cidadao_id"`
			DemandaID     string `json:"demanda_id"`
			Representante string `json:"representante_demanda_id"`
			UC            string `json:"unidade_civica_id"`
		} `json:"payload"`
	}
	if json.Unmarshal(data, &env) != nil {
		return m, true, true
	}
	m = MensagemEntrada{Seq: seq, Tipo: tipo}
	var err error
	if m.EventID, err = uuid.Parse(env.EventID); err != nil {
		return m, true, true
	}
	quem, demanda := env.Payload.ConselheiroID, env.Payload.DemandaID
	switch tipo {
	case TipoCadastro:
		quem = env.Payload.CidadaoID
	case TipoAgregacao:
		quem, demanda = "", env.Payload.Representante
	}
	if quem != "" {
		if m.Conselheiro, err = uuid.Parse(quem); err != nil {
			return m, true, true
		}
	}
	if demanda != "" {
		if m.Demanda, err = uuid.Parse(demanda); err != nil {
			return m, true, true
		}
	}
	if tipo == TipoCicloConcluido && env.Payload.UC != "" {
		if m.UC, err = uuid.Parse(env.Payload.UC); err != nil {
			return m, true, true
		}
	}
	return m, true, false
}

// SeqDe is the stream sequence a record names: its trigger's.
func SeqDe(reg Registravel) *int64 {
	switch f := reg.(type) {
	case Registro:
		return f.BaseSequence
	case SemCandidatos:
		return f.GatilhoSequence
	case Entrada:
		return f.GatilhoSequence
	case Hierarquia:
		return f.GatilhoSequence
	}
	return nil
}
