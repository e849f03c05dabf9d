package store

import (
	"context"

	"github.com/google/uuid"
)

// The verifier of one draw against the database (internal/verificar/banco)
// reads through these methods and AtribuicaoPorSorteio (console.go), in its
// own words and types, not sqlc's (docs/decisions.md, "Layout").

// AuditoriaDoSorteio is a draw's audit record (d6a.auditoria_sorteios):
// its input, its claimed output and where it was decided.
type AuditoriaDoSorteio struct {
	EventIDSorteio, AtribuicaoID, DemandaID, UC, ConselheiroID uuid.UUID
	Base                                                       string
	BaseFallback                                               bool
	// BaseSequence is the base event's stream sequence (nil on a fallback
	// draw).
	BaseSequence       *int64
	TimestampSorteio   string
	Seed               string
	ElegiveisEntrada   []string
	Ordenados          []string
	Selecionado        uuid.UUID
	ListaElegiveisHash string
	// Degrau is the chain's step the draw took its eligible from.
	Degrau uuid.UUID
	Cadeia []string
	// Excluido is the refuser left out of a redraw (nil: none).
	Excluido *uuid.UUID
	// Rodada, AssinaturaRodada and Compromisso are the beacon round the
	// seed mixes in (CONTRACT §4a; nil before its rule).
	Rodada                        *int64
	AssinaturaRodada, Compromisso *string
}

// AuditoriaPorSorteio reads the audit record of the draw eventIDSorteio.
func (t Tx) AuditoriaPorSorteio(ctx context.Context, eventIDSorteio uuid.UUID) (AuditoriaDoSorteio, bool, error) {
	a, err := t.q.BuscarAuditoria(ctx, eventIDSorteio)
	if achou, err := Found(err); !achou || err != nil {
		return AuditoriaDoSorteio{}, false, err
	}
	return AuditoriaDoSorteio{
		EventIDSorteio: a.EventIDSorteio, AtribuicaoID: a.AtribuicaoID, DemandaID: a.DemandaID, UC: a.UnidadeCivicaID,
		ConselheiroID: a.ConselheiroID, Base: a.Base, BaseFallback: a.BaseFallback, BaseSequence: a.BaseSequence,
		TimestampSorteio: a.TimestampSorteio, Seed: a.Seed, ElegiveisEntrada: a.ElegiveisEntrada, Ordenados: a.Ordenados,
		Selecionado: a.Selecionado, ListaElegiveisHash: a.ListaElegiveisHash, Degrau: a.Degrau, Cadeia: a.Cadeia,
		Excluido: a.Excluido, Rodada: a.Rodada, AssinaturaRodada: a.AssinaturaRodada, Compromisso: a.Compromisso,
	}, true, nil
}

// EventoNoOutbox is an event as the outbox holds it: its envelope and,
// once published, its stream sequence (nil before).
type EventoNoOutbox struct {
	Envelope []byte
	Sequence *int64
}

// OutboxPorEvento reads the outbox row of the event eventID.
func (t Tx) OutboxPorEvento(ctx context.Context, eventID uuid.UUID) (EventoNoOutbox, bool, error) {
	o, err := t.q.BuscarOutboxPorEventId(ctx, eventID)
	if achou, err := Found(err); !achou || err != nil {
		return EventoNoOutbox{}, false, err
	}
	return EventoNoOutbox{Envelope: o.Envelope, Sequence: o.Sequence}, true, nil
}

// SegueGatilho reports whether the draw eventIDSorteio was logged under
// the trigger's rule (CONTRACT §4); false when it has no record in the
// log or the rule no row.
func (t Tx) SegueGatilho(ctx context.Context, eventIDSorteio uuid.UUID) (bool, error) {
	segue, err := t.q.SorteioSegueGatilho(ctx, eventIDSorteio)
	if _, err := Found(err); err != nil {
		return false, err
	}
	return segue, nil
}
