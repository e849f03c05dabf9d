package bus

import (
	"context"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/evento"
)

// vistas is where this instance's deliveries of the durable stand: the
// consumer sequence of the last one and the highest stream sequence
// delivered here; before the first, the durable's acknowledged floor
// (conhecida false: neither known).
type vistas struct {
	entrega, stream uint64
	conhecida       bool
}

// lacuna keeps stream order (CONTRACT §3) when deliveries went missing
// before the one described by md: the consumer sequence jumped, so the
// server handed messages to a pull request this instance no longer reads
// (one nats.go closed at its own timeout on a starved machine, or a leader
// change), or to another instance sharing the durable. First deliveries go
// in stream order, so the missing ones lie between the highest stream
// sequence seen here (at start, the durable's acknowledged floor) and md's; they are read from the stream (read-only)
// and returned, in order, to be applied before md's message. Their own
// deliveries come back after AckWait and find their inbox rows: a no-op.
// A message the read cannot decode is left to its own delivery, which
// dead-letters it. Without the read, such a message took effect up to
// AckWait after later ones (docs/decisions.md, "A lost delivery is read
// from the stream").
func (b *Bus) lacuna(ctx context.Context, log *slog.Logger, v *vistas, md *jetstream.MsgMetadata) []recebida {
	entrega, seq := md.Sequence.Consumer, md.Sequence.Stream
	defer func() { v.entrega, v.stream, v.conhecida = entrega, max(v.stream, seq), true }()
	if !v.conhecida || md.NumDelivered > 1 || entrega <= v.entrega+1 || seq <= v.stream+1 {
		return nil
	}
	var rs []recebida
	inicio := time.Now()
	// The fetch loop waits for this read. Without a bound, a read sent to a
	// stream leader that has just died waits nats.go's 5 s API timeout
	// (the followers only notice the death at their election timeout):
	// after a stream leader's SIGKILL that held the next delivery up to
	// 3.5 s past the new leader's election (issue 50). A read takes
	// 20-350 ms on a loaded 2-core machine.
	ctx, cancel := context.WithTimeout(ctx, prazoLacuna)
	defer cancel()
	err := b.MsgsEntre(ctx, v.stream+1, seq-1, func(s uint64, data []byte, subject string, em time.Time) error {
		tipo, ok := evento.TipoDoSubject(b.cfg.Prefix, subject)
		if !ok || !tipo.Consumido() {
			return nil // not the durable's (d6a's own results share the stream)
		}
		ev, err := evento.Decodificar(tipo, data)
		if err != nil {
			return nil
		}
		ev.Armazenado = em
		rs = append(rs, recebida{m: lida{subject: subject, data: data, seq: s, em: em}, tipo: tipo, ev: ev, seq: s, entregas: 1,
			log: log.With("tipo", string(tipo), "seq", s, "entregas", 1, "event_id", ev.EventID.String(), "lida_do_stream", true)})
		return nil
	})
	if err != nil {
		log.Warn("faltam entregas antes desta; a leitura do stream falhou, então valem quando reentregues",
			"de", v.stream+1, "ate", seq-1, "erro", err, "duracao", time.Since(inicio).Round(time.Millisecond))
		return nil
	}
	log.Info("entregas que faltavam antes desta foram lidas do stream, para manter a ordem",
		"entregas_faltando", entrega-v.entrega-1, "de", v.stream+1, "ate", seq-1, "mensagens", len(rs), "duracao", time.Since(inicio).Round(time.Millisecond))
	if b.cfg.AoLerLacuna != nil {
		b.cfg.AoLerLacuna(len(rs))
	}
	return rs
}

// prazoLacuna bounds lacuna's read; past it the missing deliveries take
// effect when they come back, after AckWait.
const prazoLacuna = time.Second

// lida is a message read from the stream, not delivered: nothing to
// acknowledge (its delivery, wherever it went, is settled when it comes
// back).
type lida struct {
	subject string
	data    []byte
	seq     uint64
	em      time.Time
}

func (l lida) Metadata() (*jetstream.MsgMetadata, error) {
	return &jetstream.MsgMetadata{Sequence: jetstream.SequencePair{Stream: l.seq}, NumDelivered: 1, Timestamp: l.em}, nil
}
func (l lida) Data() []byte                     { return l.data }
func (l lida) Headers() nats.Header             { return nil }
func (l lida) Subject() string                  { return l.subject }
func (l lida) Reply() string                    { return "" }
func (l lida) Ack() error                       { return nil }
func (l lida) DoubleAck(context.Context) error  { return nil }
func (l lida) Nak() error                       { return nil }
func (l lida) NakWithDelay(time.Duration) error { return nil }
func (l lida) InProgress() error                { return nil }
func (l lida) Term() error                      { return nil }
func (l lida) TermWithReason(string) error      { return nil }
