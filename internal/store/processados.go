package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The inbox (d6a.eventos_processados, spec 2.6): the inputs applied, and,
// per consumed type, the stream offset reached (d6a.consumer_offset).

// Processado reports whether the event id is in the inbox.
func (t Tx) Processado(ctx context.Context, eventID uuid.UUID) (bool, error) {
	return t.q.EventoJaProcessado(ctx, eventID)
}

// JaProcessados is those of ids whose inbox row exists.
func (t Tx) JaProcessados(ctx context.Context, ids []uuid.UUID) ([]uuid.UUID, error) {
	return t.q.EventosJaProcessados(ctx, ids)
}

// Processamento is an inbox row (spec 2.6): an input applied, at its
// stream sequence.
type Processamento struct {
	EventID uuid.UUID
	Tipo    string
	Seq     int64
	Agora   time.Time
}

// RegistrarEntradas writes a batch's inbox rows and, per type, the offset
// of its last input (spec 2.6), in one statement.
func (t Tx) RegistrarEntradas(ctx context.Context, ps []Processamento) error {
	if len(ps) == 0 {
		return nil
	}
	var p dbsqlc.RegistrarProcessamentosParams
	ultimo := map[string]int{}
	for _, e := range ps {
		p.EventIds = append(p.EventIds, e.EventID)
		p.Tipos = append(p.Tipos, e.Tipo)
		p.Sequences = append(p.Sequences, e.Seq)
		p.Agoras = append(p.Agoras, e.Agora)
		if i, ok := ultimo[e.Tipo]; ok {
			p.OffsetSequences[i], p.OffsetAgoras[i] = e.Seq, e.Agora
			continue
		}
		ultimo[e.Tipo] = len(p.OffsetTipos)
		p.OffsetTipos = append(p.OffsetTipos, e.Tipo)
		p.OffsetSequences = append(p.OffsetSequences, e.Seq)
		p.OffsetAgoras = append(p.OffsetAgoras, e.Agora)
	}
	return t.q.RegistrarProcessamentos(ctx, p)
}

// RegistrarEntrada writes one input's inbox row and its type's offset.
func (t Tx) RegistrarEntrada(ctx context.Context, e Processamento) error {
	return t.q.RegistrarProcessamento(ctx, dbsqlc.RegistrarProcessamentoParams{
		EventID: e.EventID, TipoEvento: e.Tipo, Sequence: e.Seq, Agora: e.Agora,
	})
}

// MarcarProcessado writes the inbox row of an input applied elsewhere (a
// row already there stays).
func (t Tx) MarcarProcessado(ctx context.Context, eventID uuid.UUID, tipo string, seq int64, agora time.Time) error {
	_, err := t.q.RegistrarEventoProcessado(ctx, dbsqlc.RegistrarEventoProcessadoParams{
		EventID: eventID, TipoEvento: tipo, Sequence: seq, Agora: agora,
	})
	return err
}

// SemearOffset writes the offset of the consumed type tipo at seq, at agora,
// unless the type has one (spec 4.5 step 2: never overwriting).
func (t Tx) SemearOffset(ctx context.Context, tipo string, seq int64, agora time.Time) error {
	return t.q.SeedOffset(ctx, dbsqlc.SeedOffsetParams{TipoEvento: tipo, LastSequence: seq, Agora: agora})
}
