package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/evento"
)

// AtrasoMaximoBase is how far behind the stream's newest message the seed's
// base may be (CONTRACT §4).
const AtrasoMaximoBase = time.Second

// confirmarACada is how often the follower checks, when no delivery told
// it, that it is still at the head of the stream.
const confirmarACada = 250 * time.Millisecond

// ErrBaseAtrasada is returned while the follower cannot vouch for being
// within AtrasoMaximoBase of the stream's head and the bus does not answer.
var ErrBaseAtrasada = errors.New("último evento do barramento não confirmado no último segundo")

// Base follows the bus stream with an ordered consumer and keeps the
// event_id and sequence of its latest message: the draw's base without a
// request to the bus per draw (CONTRACT §4, the spec's obterUltimoEventId).
type Base struct {
	b          *Bus
	mu         sync.Mutex
	id         string
	seq        uint64
	confirmada time.Time // when the follower last knew it was at the head
}

// SeguirBase starts following the stream until ctx ends.
func (b *Bus) SeguirBase(ctx context.Context) *Base {
	f := &Base{b: b}
	go f.seguir(ctx)
	go f.confirmar(ctx)
	return f
}

// LastEventID returns the latest message the service knows of. When the
// follower cannot vouch for the last second, it asks the stream once
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

// adotar records a message at seq; head says the stream had nothing after
// it at that moment.
func (f *Base) adotar(id string, seq uint64, head bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if seq > f.seq && id != "" {
		f.id, f.seq = id, seq
	}
	if head && seq >= f.seq {
		f.confirmada = time.Now()
	}
}

// perguntar asks the stream for its last message (one request, bounded).
func (f *Base) perguntar(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	id, seq, err := f.b.LastEventID(ctx)
	if err != nil {
		return err
	}
	f.adotar(id, seq, true)
	return nil
}

// seguir delivers every new message of the stream; the ordered consumer
// recreates itself after a gap, a reconnection or a leader change.
func (f *Base) seguir(ctx context.Context) {
	for ctx.Err() == nil {
		c, err := f.b.js.OrderedConsumer(ctx, f.b.cfg.Stream, jetstream.OrderedConsumerConfig{
			DeliverPolicy: jetstream.DeliverLastPolicy,
		})
		if err != nil {
			// Before boot creates the stream this is expected; the draw
			// waits for the base anyway.
			nivel := slog.LevelWarn
			if errors.Is(err, jetstream.ErrStreamNotFound) {
				nivel = slog.LevelDebug
			}
			f.b.log.Log(ctx, nivel, "seguidor da base: consumidor ordenado indisponível", "erro", err)
			if !dormir(ctx, time.Second) {
				return
			}
			continue
		}
		cc, err := c.Consume(func(m jetstream.Msg) {
			md, err := m.Metadata()
			if err != nil {
				return
			}
			id, _ := evento.LerEventID(m.Data())
			f.adotar(id, md.Sequence.Stream, md.NumPending == 0)
		}, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			f.b.log.Debug("seguidor da base", "erro", err)
		}))
		if err != nil {
			f.b.log.Warn("seguidor da base: consumo indisponível", "erro", err)
			if !dormir(ctx, time.Second) {
				return
			}
			continue
		}
		select {
		case <-ctx.Done():
			cc.Stop()
			return
		case <-cc.Closed():
		}
	}
}

// confirmar vouches for a quiet stream (nothing delivered because nothing
// was published) and catches up a follower that fell behind.
func (f *Base) confirmar(ctx context.Context) {
	t := time.NewTicker(confirmarACada)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		f.mu.Lock()
		recente := time.Since(f.confirmada) < confirmarACada
		seq := f.seq
		f.mu.Unlock()
		if recente {
			continue
		}
		ictx, cancel := context.WithTimeout(ctx, time.Second)
		s, err := f.b.streamBus(ictx)
		var info *jetstream.StreamInfo
		if err == nil {
			info, err = s.Info(ictx)
		}
		cancel()
		switch {
		case err != nil:
			continue
		case info.State.LastSeq <= seq:
			f.adotar("", seq, true)
		default:
			_ = f.perguntar(ctx)
		}
	}
}

func dormir(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
