package transparencia

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

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
		return falha("base_sequence", "null", "the trigger's stream sequence")
	}
	data, _, em, err := b.MsgPorSequencia(ctx, uint64(*r.BaseSequence))
	if err != nil {
		return fmt.Errorf("gatilho: mensagem %d do barramento: %w", *r.BaseSequence, err)
	}
	var env struct {
		EventID string `json:"event_id"`
	}
	if err := json.Unmarshal(data, &env); err != nil || env.EventID != r.Base {
		return falha("base", r.Base, fmt.Sprintf("%q (event_id of the trigger at sequence %d)", env.EventID, *r.BaseSequence))
	}
	if t := sorteio.FormatTimestamp(em); t != r.Timestamp {
		return falha("timestamp", r.Timestamp, t+fmt.Sprintf(" (the bus time of the trigger at sequence %d)", *r.BaseSequence))
	}
	return nil
}

// gatilhoDesde reads, from the log's summary, the first index whose draws
// follow their trigger.
func (c *Cliente) gatilhoDesde(ctx context.Context) (int64, error) {
	var r struct {
		GatilhoDesde *int64 `json:"gatilho_desde"`
	}
	if err := c.getJSON(ctx, "/resumo", &r); err != nil {
		return 0, err
	}
	if r.GatilhoDesde == nil {
		return 0, falha("resumo.gatilho_desde", "(absent)", "the first index under the trigger's rule")
	}
	return *r.GatilhoDesde, nil
}

// conferirGatilhoDe checks the trigger of a draw record (other kinds have
// none to check): conferiu says it was one.
func (c *Cliente) conferirGatilhoDe(ctx context.Context, registro []byte) (conferiu bool, err error) {
	f, err := LerRegistravel(registro)
	if err != nil {
		return false, err
	}
	r, ok := f.(Registro)
	if !ok {
		return false, nil
	}
	return true, ConferirGatilho(ctx, c.Barramento, r)
}
