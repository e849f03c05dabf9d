package bus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/evento"
)

// Mensagem is one stored message of a stream, as the consistency check
// reads it.
type Mensagem struct {
	Seq     uint64
	Subject string
	Header  nats.Header
	Data    []byte
	Em      time.Time
}

// Ultima returns the last sequence of stream (0 when empty); the first
// stored one too, for a window that begins before it.
func (b *Bus) Ultima(ctx context.Context, stream string) (primeira, ultima uint64, err error) {
	s, err := b.js.Stream(ctx, stream)
	if err != nil {
		return 0, 0, fmt.Errorf("stream %s: %w", stream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("stream %s: %w", stream, err)
	}
	return info.State.FirstSeq, info.State.LastSeq, nil
}

// Ler hands fn every message of stream from sequence desde to the last one
// stored when it starts (nothing when the stream does not exist), in order, through an ordered consumer (a read that
// leaves no state on the server).
func (b *Bus) Ler(ctx context.Context, stream string, desde uint64, fn func(Mensagem) error) error {
	_, ultima, err := b.Ultima(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil // nothing dead-lettered yet, say
	}
	if err != nil {
		return err
	}
	return b.lerAte(ctx, stream, desde, ultima, fn)
}

// lerAte is Ler up to sequence ultima, which the stream holds or held.
func (b *Bus) lerAte(ctx context.Context, stream string, desde, ultima uint64, fn func(Mensagem) error) error {
	if ultima < max(desde, 1) {
		return nil
	}
	// The server drops the ephemeral consumer 10 s after its last fetch,
	// not nats.go's 5 minutes: the verifier makes one per tile.
	cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: max(desde, 1),
		InactiveThreshold: 10 * time.Second}
	cons, err := b.js.OrderedConsumer(ctx, stream, cfg)
	if err != nil {
		return fmt.Errorf("reading %s: %w", stream, err)
	}
	for {
		espera := jetstream.FetchMaxWait(2 * time.Second)
		if fim, ok := ctx.Deadline(); ok && time.Until(fim) < 2*time.Second {
			// A caller that bounds the read (lacuna: the fetch loop waits
			// for it) bounds its fetch too.
			espera = jetstream.FetchContext(ctx)
		}
		lote, err := cons.Fetch(int(min(512, ultima-max(desde, 1)+1)), espera)
		if err != nil {
			return fmt.Errorf("reading %s: %w", stream, err)
		}
		n := 0
		for m := range lote.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				return err
			}
			if err := fn(Mensagem{Seq: md.Sequence.Stream, Subject: m.Subject(), Header: m.Headers(), Data: m.Data(), Em: md.Timestamp}); err != nil {
				return err
			}
			if md.Sequence.Stream >= ultima {
				return nil
			}
		}
		if err := lote.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, jetstream.ErrNoMessages) {
			return fmt.Errorf("reading %s: %w", stream, err)
		}
		if n == 0 {
			return fmt.Errorf("reading %s: stalled before sequence %d", stream, ultima)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// Confirmados returns, per consumed type, the stream sequence up to which
// the durable has every message acknowledged (the ack floor: a message at
// or below it will never be delivered again unless replayed), and the last
// sequence it delivered (messages between the two are acknowledged, or in
// flight). One durable serves every type, so every type has its numbers;
// the map is empty before it exists.
func (b *Bus) Confirmados(ctx context.Context) (piso, entregue map[evento.Tipo]uint64, err error) {
	piso = make(map[evento.Tipo]uint64, len(evento.Consumidos))
	entregue = make(map[evento.Tipo]uint64, len(evento.Consumidos))
	c, err := b.js.Consumer(ctx, b.cfg.Stream, evento.DurableEntradas)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return piso, entregue, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("consumer %s: %w", evento.DurableEntradas, err)
	}
	info := c.CachedInfo()
	for _, tipo := range evento.Consumidos {
		piso[tipo], entregue[tipo] = info.AckFloor.Stream, info.Delivered.Stream
	}
	return piso, entregue, nil
}

// ConsumidoAte is the ack floor of the durable d6a-entradas: every message
// of the stream up to it was acknowledged, after its unit of work
// committed (verify --replay: a consumed message is never "ahead"). It
// reads the consumer's info and changes nothing; 0 before it exists.
func (b *Bus) ConsumidoAte(ctx context.Context) (uint64, error) {
	c, err := b.js.Consumer(ctx, b.cfg.Stream, evento.DurableEntradas)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("consumer %s: %w", evento.DurableEntradas, err)
	}
	return c.CachedInfo().AckFloor.Stream, nil
}

// Entradas hands fn every consumed message of the bus stream (a type of
// evento.Consumidos) from sequence desde to the last one stored when it
// starts, in order, with its type: what `verify --replay` checks the log's
// input records against (none dropped, CONTRACT §7).
func (b *Bus) Entradas(ctx context.Context, desde uint64, fn func(seq uint64, tipo string, data []byte) error) error {
	return b.Ler(ctx, b.cfg.Stream, desde, func(m Mensagem) error {
		if t, ok := evento.TipoDoSubject(b.cfg.Prefix, m.Subject); ok && t.Consumido() {
			return fn(m.Seq, string(t), m.Data)
		}
		return nil
	})
}

// MortasDesde returns the stream sequences of the bus messages from desde on
// that were dead-lettered, with the reason (D6a-Seq-Original and D6a-Erro of
// the dead-letter stream, CONTRACT §3): a consumed message without a record
// is accounted for when it is here (verify --replay, none dropped).
func (b *Bus) MortasDesde(ctx context.Context, desde uint64) (map[uint64]string, error) {
	out := map[uint64]string{}
	err := b.Ler(ctx, DLQStream, 1, func(m Mensagem) error {
		if m.Header == nil {
			return nil
		}
		seq, err := strconv.ParseUint(m.Header.Get(HeaderSeqOriginal), 10, 64)
		if err == nil && seq >= desde {
			out[seq] = m.Header.Get(HeaderErro)
		}
		return nil
	})
	return out, err
}

// MsgsEntre hands fn the messages of the bus stream from sequence de to ate
// (those stored), in order, through one ordered consumer: the verifier's
// bus check reads a tile's triggers in one pass (issue 39) where one
// GetMsg per draw would pay a round trip each. Read-only, as
// MsgPorSequencia.
func (b *Bus) MsgsEntre(ctx context.Context, de, ate uint64, fn func(seq uint64, data []byte, subject string, em time.Time) error) error {
	ultima := b.ultimaLida.Load()
	if ate > ultima {
		var err error
		if _, ultima, err = b.Ultima(ctx, b.cfg.Stream); err != nil {
			return err
		}
		b.ultimaLida.Store(ultima)
	}
	return b.lerAte(ctx, b.cfg.Stream, de, min(ate, ultima), func(m Mensagem) error {
		if m.Seq > ate {
			return nil // ate itself was deleted
		}
		return fn(m.Seq, m.Data, m.Subject, m.Em)
	})
}
