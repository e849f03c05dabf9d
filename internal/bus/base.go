package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// AtrasoMaximoBase is how far behind the stream's newest message the seed's
// base may be (CONTRACT §4).
const AtrasoMaximoBase = time.Second

// confirmarACada is how often the base asks the stream for its last
// message.
const confirmarACada = 250 * time.Millisecond

// ErrBaseAtrasada is returned while the base cannot vouch for being
// within AtrasoMaximoBase of the stream's head and the bus does not answer.
var ErrBaseAtrasada = errors.New("último evento do barramento não confirmado no último segundo")

// Base keeps the event_id and sequence of the latest message of the bus
// stream the service knows of: the draw's base without a request to the
// bus per draw (CONTRACT §4, the spec's obterUltimoEventId). It learns
// from every message the consumers receive and every result the service
// publishes (its ack), and asks the stream for its head every
// confirmarACada, which also vouches for the lag bound. An ordered consumer
// following the stream did this before: the server delivered every message
// of the platform's stream to every instance once more (docs/decisions.md,
// "Draw time and the seed's base").
type Base struct {
	b          *Bus
	mu         sync.Mutex
	id         string
	seq        uint64
	confirmada time.Time // when the stream's head was last known to be at or below seq
}

// IniciarBase starts keeping the base until ctx ends.
func (b *Bus) IniciarBase(ctx context.Context) *Base {
	f := &Base{b: b}
	b.base.Store(f)
	go f.confirmar(ctx)
	return f
}

// conhecer tells the base of a message of the stream (a delivery or a
// publish ack).
func (b *Bus) conhecer(id string, seq uint64) {
	if f := b.base.Load(); f != nil {
		f.adotar(id, seq, time.Time{})
	}
}

// LastEventID returns the latest message the service knows of. When the
// base cannot vouch for the last second, it asks the stream once
// (bounded), so the draw waits rather than use a stale base; with the bus
// unreachable it fails and the draw's event is retried.
func (f *Base) LastEventID(ctx context.Context) (string, uint64, error) {
	f.mu.Lock()
	id, seq, ok := f.id, f.seq, time.Since(f.confirmada) <= AtrasoMaximoBase
	f.mu.Unlock()
	if ok && id != "" {
		return id, seq, nil
	}
	if err := f.perguntar(ctx); err != nil {
		return "", 0, fmt.Errorf("%w: %w", ErrBaseAtrasada, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.id, f.seq, nil
}

// adotar records a message at seq. A non-zero cabeca is when the stream's
// head was asked for and seq is its answer: the base, now at or past it,
// was within the lag bound then.
func (f *Base) adotar(id string, seq uint64, cabeca time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if seq > f.seq && id != "" {
		f.id, f.seq = id, seq
	}
	if !cabeca.IsZero() && f.seq >= seq && cabeca.After(f.confirmada) {
		f.confirmada = cabeca
	}
}

// perguntar asks the stream for its last message (one request, bounded).
func (f *Base) perguntar(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	quando := time.Now()
	id, seq, err := f.b.LastEventID(ctx)
	if err != nil {
		return err
	}
	f.adotar(id, seq, quando)
	return nil
}

// confirmar asks the stream for its last message every confirmarACada:
// what other producers published, and the vouching for the lag bound.
func (f *Base) confirmar(ctx context.Context) {
	t := time.NewTicker(confirmarACada)
	defer t.Stop()
	for {
		_ = f.perguntar(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
