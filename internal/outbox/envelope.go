package outbox

import (
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/schemas"
)

// The payloads of the events d6a publishes (CONTRACT §3), as schemas/
// describes them. They live beside the envelope that carries them: the
// executor fills them, Envelope encodes and checks them.

// Sorteado is conselheiro.sorteado's payload.
type Sorteado struct {
	ConselheiroID      uuid.UUID `json:"conselheiro_id"`
	DemandaID          uuid.UUID `json:"demanda_id"`
	UnidadeCivicaID    uuid.UUID `json:"unidade_civica_id"`
	MetodoSorteio      string    `json:"metodo_sorteio"`
	SeedPublico        string    `json:"seed_publico"`
	ListaElegiveisHash string    `json:"lista_elegiveis_hash"`
	PosicaoSorteada    int       `json:"posicao_sorteada"`
	TotalElegiveis     int       `json:"total_elegiveis"`
	Timestamp          string    `json:"timestamp"`
}

// SemCandidatos is sorteio.sem_candidatos's payload.
type SemCandidatos struct {
	DemandaID       uuid.UUID `json:"demanda_id"`
	UnidadeCivicaID uuid.UUID `json:"unidade_civica_id"`
	TotalElegiveis  int       `json:"total_elegiveis"`
	Motivo          string    `json:"motivo"`
	Timestamp       string    `json:"timestamp"`
}

// Recusa is conselheiro.atribuicao_recusada's payload, as d6a publishes it
// for a response timeout.
type Recusa struct {
	ConselheiroID   uuid.UUID `json:"conselheiro_id"`
	DemandaID       uuid.UUID `json:"demanda_id"`
	UnidadeCivicaID uuid.UUID `json:"unidade_civica_id"`
	Motivo          string    `json:"motivo"`
	Timestamp       string    `json:"timestamp"`
}

// Varredura is d6a.varredura's payload, a sweep's trigger.
type Varredura struct {
	DemandaID       *uuid.UUID `json:"demanda_id"`
	UnidadeCivicaID *uuid.UUID `json:"unidade_civica_id"`
	Acao            string     `json:"acao"`
	Timestamp       string     `json:"timestamp"`
}

// SuspensaoExpirada is conselheiro.suspensao_expirada's payload.
type SuspensaoExpirada struct {
	ConselheiroID    uuid.UUID `json:"conselheiro_id"`
	DataSuspensaoAte string    `json:"data_suspensao_ate"`
	Timestamp        string    `json:"timestamp"`
}

// envelope is the published envelope: exactly seven fields (CONTRACT §3).
type envelope struct {
	EventID      uuid.UUID `json:"event_id"`
	Tipo         string    `json:"tipo"`
	Origem       string    `json:"origem"`
	VersaoSchema string    `json:"versao_schema"`
	CorrelacaoID string    `json:"correlacao_id"`
	Timestamp    string    `json:"timestamp"`
	Payload      any       `json:"payload"`
}

// Envelope encodes a published event and validates it against schemas/:
// nothing that fails the schema enters the outbox.
func Envelope(tipo evento.Tipo, eventID uuid.UUID, correlacao, timestamp string, payload any) ([]byte, error) {
	data, err := json.Marshal(envelope{
		EventID: eventID, Tipo: string(tipo), Origem: "D-6a", VersaoSchema: "1.0.0",
		CorrelacaoID: correlacao, Timestamp: timestamp, Payload: payload,
	})
	if err != nil {
		return nil, err
	}
	if err := schemas.Validar(string(tipo), data); err != nil {
		return nil, fmt.Errorf("evento de saída inválido: %w", err)
	}
	return data, nil
}
