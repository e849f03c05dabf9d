package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/evento"
)

// EnsureStream creates the bus stream and the dead-letter stream when they
// are missing. An existing stream is never altered (CONTRACT §3): it may
// belong to the cluster's operators.
func (b *Bus) EnsureStream(ctx context.Context) error {
	s, err := b.garantirStream(ctx, jetstream.StreamConfig{
		Name:        b.cfg.Stream,
		Description: "barramento de eventos",
		Subjects:    []string{b.cfg.Prefix + ".>"},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Duplicates:  2 * time.Minute,
	})
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.stream = s
	b.mu.Unlock()
	_, err = b.garantirStream(ctx, jetstream.StreamConfig{
		Name:        DLQStream,
		Description: "d6a: mensagens inutilizáveis ou que falharam D6A_MAX_ENTREGAS vezes",
		Subjects:    []string{evento.PrefixoDLQ + ".>"},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		// The dead-letter message id is derived from the original's stream
		// sequence, so a re-dead-letter after a crash is dropped here.
		Duplicates: 2 * time.Minute,
	})
	return err
}

func (b *Bus) garantirStream(ctx context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	s, err := b.js.Stream(ctx, cfg.Name)
	if err == nil {
		return s, nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("looking up stream %s: %w", cfg.Name, err)
	}
	s, err = b.js.CreateStream(ctx, cfg)
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		// Another instance created it meanwhile; use theirs as is.
		s, err = b.js.Stream(ctx, cfg.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("creating stream %s: %w", cfg.Name, err)
	}
	b.log.Info("stream criado", "stream", cfg.Name, "subjects", cfg.Subjects)
	return s, nil
}

// streamBus returns a handle on the bus stream, looking it up once.
func (b *Bus) streamBus(ctx context.Context) (jetstream.Stream, error) {
	b.mu.Lock()
	s := b.stream
	b.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err := b.js.Stream(ctx, b.cfg.Stream)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", b.cfg.Stream, err)
	}
	b.mu.Lock()
	b.stream = s
	b.mu.Unlock()
	return s, nil
}

const (
	// metaCabeca records, on a consumer being created, the stream sequence
	// it must start at; see EnsureConsumers.
	metaCabeca = "d6a_cabeca"
)

// pausaPosicionamento is the pause a new consumer is created with until it
// has been positioned at the head. The far, fixed date tells this pause
// apart from one set by an operator.
var pausaPosicionamento = time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)

// configConsumidor returns the configuration of the durable: every
// consumed subject, in stream order (CONTRACT §3).
//
// No server-side BackOff is set: the server replaces AckWait by BackOff[0]
// and measures a NakWithDelay from BackOff[n] instead of AckWait, so a
// BackOff of 1s, 2s, … would redeliver a message still being handled after
// one second, and a progression starting at AckWait would stretch every Nak
// delay. Retries are paced by Config.Backoff through NakWithDelay instead.
func (b *Bus) configConsumidor() jetstream.ConsumerConfig {
	assuntos := make([]string, len(evento.Consumidos))
	for i, t := range evento.Consumidos {
		assuntos[i] = t.Subject(b.cfg.Prefix)
	}
	return jetstream.ConsumerConfig{
		Durable:        evento.DurableEntradas,
		Description:    "d6a: todos os tipos consumidos, na ordem do stream",
		FilterSubjects: assuntos,
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        b.cfg.AckWait,
		MaxDeliver:     b.cfg.MaxEntregas,
		DeliverPolicy:  jetstream.DeliverAllPolicy,
	}
}

// EnsureConsumers makes sure the durable d6a-entradas exists. A missing one
// is created at the head of the stream, so nothing already in the stream is
// delivered (spec 4.5: cursors are seeded at the highest sequence); an
// existing one resumes where it was and is not altered. Where the per-type
// durables of earlier versions exist, it starts instead where the least
// advanced of them has everything acknowledged, so no input is skipped
// (what some of them already applied the inbox skips), and they are
// deleted once it is in place.
//
// It is created with deliver policy all, because one created with policy new
// or last can never be reset and one created by start sequence cannot go
// below it (CONTRACT §3), and then moved to the head with the server's
// consumer reset. Between the two steps it is paused and carries the head
// sequence in its metadata: if the process dies in between, the next call
// finds it paused and finishes the job instead of resuming it at sequence 1
// and replaying the whole bus.
func (b *Bus) EnsureConsumers(ctx context.Context) error {
	if err := b.garantirConsumidor(ctx); err != nil {
		return err
	}
	return b.removerAntigos(ctx)
}

// antigos returns, of the per-type durables of earlier versions that
// still exist, the first sequence not acknowledged by all of them.
func (b *Bus) antigos(ctx context.Context) (desde uint64, existem bool, err error) {
	for _, tipo := range evento.Consumidos {
		c, err := b.js.Consumer(ctx, b.cfg.Stream, tipo.Durable())
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			continue
		}
		if err != nil {
			return 0, false, fmt.Errorf("looking up consumer %s: %w", tipo.Durable(), err)
		}
		piso := c.CachedInfo().AckFloor.Stream + 1
		if !existem || piso < desde {
			desde = piso
		}
		existem = true
	}
	return desde, existem, nil
}

// removerAntigos deletes the per-type durables of earlier versions: once
// d6a-entradas is in place they would only hold messages.
func (b *Bus) removerAntigos(ctx context.Context) error {
	for _, tipo := range evento.Consumidos {
		err := b.js.DeleteConsumer(ctx, b.cfg.Stream, tipo.Durable())
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("deleting the per-type consumer %s: %w", tipo.Durable(), err)
		}
		b.log.Warn("consumidor por tipo de uma versão anterior apagado; d6a-entradas o substitui", "consumidor", tipo.Durable())
	}
	return nil
}

func (b *Bus) garantirConsumidor(ctx context.Context) error {
	nome := evento.DurableEntradas
	log := b.log.With("consumidor", nome)
	c, err := b.js.Consumer(ctx, b.cfg.Stream, nome)
	if err == nil {
		info := c.CachedInfo()
		if cabeca, ok := posicionamentoInterrompido(info); ok {
			log.Warn("criação do consumidor interrompida; posicionando-o", "seq", cabeca)
			return b.posicionar(ctx, nome, cabeca)
		}
		if info.Config.MaxDeliver != b.cfg.MaxEntregas {
			log.Warn("consumidor existente tem outro MaxDeliver; mantido",
				"max_deliver", info.Config.MaxDeliver, "D6A_MAX_ENTREGAS", b.cfg.MaxEntregas)
		}
		return b.ajustarAckWait(ctx, log, info.Config)
	}
	if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("looking up consumer %s: %w", nome, err)
	}
	s, err := b.streamBus(ctx)
	if err != nil {
		return err
	}
	si, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("stream %s info: %w", b.cfg.Stream, err)
	}
	cabeca := si.State.LastSeq + 1
	desde, migrar, err := b.antigos(ctx)
	if err != nil {
		return err
	}
	if migrar {
		cabeca = min(cabeca, desde)
	}
	cfg := b.configConsumidor()
	cfg.Metadata = map[string]string{metaCabeca: strconv.FormatUint(cabeca, 10)}
	pausa := pausaPosicionamento
	cfg.PauseUntil = &pausa
	if _, err := b.js.CreateConsumer(ctx, b.cfg.Stream, cfg); err != nil {
		if errors.Is(err, jetstream.ErrConsumerExists) {
			// Another instance won the race; it positions its own.
			return nil
		}
		return fmt.Errorf("creating consumer %s: %w", nome, err)
	}
	if err := b.posicionar(ctx, nome, cabeca); err != nil {
		return err
	}
	if migrar {
		log.Warn("consumidor criado onde os consumidores por tipo de uma versão anterior tinham tudo confirmado", "seq", cabeca)
		return nil
	}
	log.Info("consumidor criado no início do stream", "seq", cabeca)
	return nil
}

// ackWaitAntigo is the AckWait earlier versions created the durable with.
const ackWaitAntigo = 30 * time.Second

// ajustarAckWait brings a durable created by an earlier version, with its
// AckWait of 30 s, to the current one: AckWait is d6a's own setting, tied
// to how often it marks held messages in progress, and at 30 s a delivery
// lost in a consumer leader change held the colony's catch-up for 15 s
// (issue 38). Any other value was set by an operator and is left as is.
func (b *Bus) ajustarAckWait(ctx context.Context, log *slog.Logger, cfg jetstream.ConsumerConfig) error {
	if cfg.AckWait == b.cfg.AckWait {
		return nil
	}
	if cfg.AckWait != ackWaitAntigo {
		log.Warn("consumidor existente tem outro AckWait; mantido", "ack_wait", cfg.AckWait, "d6a", b.cfg.AckWait)
		return nil
	}
	cfg.AckWait = b.cfg.AckWait
	cfg.Metadata = semMetadataDoServidor(cfg.Metadata)
	if _, err := b.js.UpdateConsumer(ctx, b.cfg.Stream, cfg); err != nil {
		return fmt.Errorf("updating the AckWait of consumer %s: %w", cfg.Durable, err)
	}
	log.Info("AckWait do consumidor de uma versão anterior atualizado", "de", ackWaitAntigo, "para", b.cfg.AckWait)
	return nil
}

// posicionamentoInterrompido reports whether info is a consumer that
// EnsureConsumers created but did not finish positioning, and its head.
func posicionamentoInterrompido(info *jetstream.ConsumerInfo) (uint64, bool) {
	if info == nil || !info.Paused || info.Config.PauseUntil == nil ||
		!info.Config.PauseUntil.Equal(pausaPosicionamento) {
		return 0, false
	}
	cabeca, err := strconv.ParseUint(info.Config.Metadata[metaCabeca], 10, 64)
	if err != nil || cabeca == 0 {
		return 0, false
	}
	return cabeca, true
}

// posicionar resets the paused consumer to cabeca and resumes it. Both steps
// are idempotent, so a retry after a crash is safe.
func (b *Bus) posicionar(ctx context.Context, nome string, cabeca uint64) error {
	if _, err := b.js.ResetConsumerToSequence(ctx, b.cfg.Stream, nome, cabeca); err != nil {
		if !semReset(err) {
			return fmt.Errorf("positioning consumer %s at %d: %w", nome, cabeca, err)
		}
		// A server older than 2.14: recreate by start sequence instead.
		info, ierr := b.js.Consumer(ctx, b.cfg.Stream, nome)
		if ierr != nil {
			return fmt.Errorf("positioning consumer %s: %w", nome, ierr)
		}
		cfg := info.CachedInfo().Config
		cfg.PauseUntil = nil
		return b.recriar(ctx, cfg, cabeca)
	}
	if _, err := b.js.ResumeConsumer(ctx, b.cfg.Stream, nome); err != nil {
		return fmt.Errorf("resuming consumer %s: %w", nome, err)
	}
	return nil
}

// semReset reports whether a reset failed because the server cannot do it:
// before nats-server 2.14 nobody answers the reset subject, and a consumer
// created by start sequence refuses to go below it.
func semReset(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrConsumerInvalidReset)
}

// recriar deletes the durable of cfg and creates it again with the same name
// and configuration, delivering from stream sequence seq. It is safe on the
// bus stream because limits retention keeps messages whatever consumers do.
func (b *Bus) recriar(ctx context.Context, cfg jetstream.ConsumerConfig, seq uint64) error {
	cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
	cfg.OptStartSeq = seq
	cfg.OptStartTime = nil
	cfg.Metadata = semMetadataDoServidor(cfg.Metadata)
	nome := cfg.Durable
	if nome == "" {
		nome = cfg.Name
	}
	if err := b.js.DeleteConsumer(ctx, b.cfg.Stream, nome); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("deleting consumer %s to recreate it: %w", nome, err)
	}
	if _, err := b.js.CreateConsumer(ctx, b.cfg.Stream, cfg); err != nil {
		return fmt.Errorf("consumer %s was deleted but not recreated from sequence %d (run the replay again): %w", nome, seq, err)
	}
	b.log.Warn("consumidor recriado pela sequência inicial", "consumidor", nome, "seq", seq)
	return nil
}

// semMetadataDoServidor drops the "_nats." keys the server adds to consumer
// metadata; they are not the client's to set.
func semMetadataDoServidor(m map[string]string) map[string]string {
	out := maps.Clone(m)
	for k := range out {
		if strings.HasPrefix(k, "_nats.") {
			delete(out, k)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// ConsumerPos is a durable consumer's position, for printing before and
// after a replay.
type ConsumerPos struct {
	// StreamSeq is the stream sequence of the last message delivered.
	StreamSeq uint64
	// ConsumerSeq is the consumer's delivery sequence.
	ConsumerSeq uint64
	// NumPending counts the messages not yet delivered.
	NumPending uint64
}

// String formats the position for the replay command's output.
func (p ConsumerPos) String() string {
	return fmt.Sprintf("stream_seq=%d consumer_seq=%d pendentes=%d", p.StreamSeq, p.ConsumerSeq, p.NumPending)
}

func posicao(info *jetstream.ConsumerInfo) ConsumerPos {
	if info == nil {
		return ConsumerPos{}
	}
	return ConsumerPos{StreamSeq: info.Delivered.Stream, ConsumerSeq: info.Delivered.Consumer, NumPending: info.NumPending}
}

// Replay rewinds the durable d6a-entradas so that delivery restarts at
// stream sequence fromSeq (CONTRACT §1, d6a replay; the spec's
// replayDeSequence), with the server's native
// reset; against a server without it, the durable is recreated with the same
// name and configuration by start sequence. A missing durable is created at
// fromSeq. A running Consumir picks the new position up at its next fetch.
func (b *Bus) Replay(ctx context.Context, fromSeq uint64) (before, after ConsumerPos, err error) {
	if fromSeq == 0 {
		return before, after, errors.New("replay: sequences start at 1")
	}
	nome := evento.DurableEntradas
	c, err := b.js.Consumer(ctx, b.cfg.Stream, nome)
	var depois *jetstream.ConsumerInfo
	switch {
	case errors.Is(err, jetstream.ErrConsumerNotFound):
		cfg := b.configConsumidor()
		pausa := pausaPosicionamento
		cfg.PauseUntil = &pausa
		cfg.Metadata = map[string]string{metaCabeca: strconv.FormatUint(fromSeq, 10)}
		if _, err := b.js.CreateConsumer(ctx, b.cfg.Stream, cfg); err != nil {
			return before, after, fmt.Errorf("replay: creating consumer %s: %w", nome, err)
		}
		if err := b.posicionar(ctx, nome, fromSeq); err != nil {
			return before, after, fmt.Errorf("replay: %w", err)
		}
	case err != nil:
		return before, after, fmt.Errorf("replay: consumer %s: %w", nome, err)
	default:
		info := c.CachedInfo()
		before = posicao(info)
		resp, err := b.js.ResetConsumerToSequence(ctx, b.cfg.Stream, nome, fromSeq)
		switch {
		case err == nil:
			// The reset's own answer: a running Consumir may fetch right
			// after it, and a second look would show that instead.
			depois = resp.ConsumerInfo
			if _, ok := posicionamentoInterrompido(info); ok {
				// Left paused by an interrupted EnsureConsumers, which would
				// otherwise redo its own positioning over this replay.
				if _, err := b.js.ResumeConsumer(ctx, b.cfg.Stream, nome); err != nil {
					return before, after, fmt.Errorf("replay: resuming consumer %s: %w", nome, err)
				}
			}
		case semReset(err):
			b.log.Warn("reset nativo do consumidor indisponível; recriando o durável", "consumidor", nome, "erro", err)
			cfg := info.Config
			cfg.PauseUntil = nil
			if err := b.recriar(ctx, cfg, fromSeq); err != nil {
				return before, after, fmt.Errorf("replay: %w", err)
			}
		default:
			return before, after, fmt.Errorf("replay: resetting consumer %s to %d: %w", nome, fromSeq, err)
		}
	}
	if depois == nil {
		if c, err = b.js.Consumer(ctx, b.cfg.Stream, nome); err != nil {
			return before, after, fmt.Errorf("replay: consumer %s after reset: %w", nome, err)
		}
		depois = c.CachedInfo()
	}
	after = posicao(depois)
	b.log.Info("consumidor rebobinado", "consumidor", nome, "from_seq", fromSeq, "antes", before.String(), "depois", after.String())
	return before, after, nil
}

// Publish publishes data on subject with Nats-Msg-Id eventID and returns its
// stream sequence. A duplicate inside the stream's window returns the
// sequence of the original.
func (b *Bus) Publish(ctx context.Context, subject, eventID string, data []byte) (uint64, error) {
	ack, err := b.js.Publish(ctx, subject, data, jetstream.WithMsgID(eventID), jetstream.WithExpectStream(b.cfg.Stream))
	if err != nil {
		return 0, fmt.Errorf("publishing %s on %s: %w", eventID, subject, err)
	}
	return ack.Sequence, nil
}

// ackAsyncTimeout bounds the wait for the ack of a PublishAsync: without it
// a lost ack would hold its pending slot forever. A publish sent while the
// stream has no leader (an election after a node died) gets no answer at
// all, and its rows go out on the outbox sweep only once this expires, so
// it is short: an ack taking longer than this only makes the sweep publish
// the row again, which the stream drops as a duplicate. At 5 s, a NATS
// kill in make test-cluster paused results for 10.4 s.
const ackAsyncTimeout = 2 * time.Second

// HeaderEntradaSeq names, on a published result, the stream sequence of the
// consumed event whose unit of work produced it: after an asynchronous
// failover the repair applies that input where its commit was
// (docs/decisions.md).
const HeaderEntradaSeq = "D6a-Entrada-Seq"

// HeaderBeaconRodada names, on a conselheiro.sorteado, the beacon round its
// seed mixes in (CONTRACT §4a).
const HeaderBeaconRodada = "D6a-Beacon-Rodada"

// PublishAsync sends data on subject with Nats-Msg-Id eventID without
// waiting for the stream's ack, so a batch costs about one round trip
// instead of one per message; messages sent one after the other reach the
// stream in that order. The returned function waits for the ack and returns
// the stream sequence (the original's for a duplicate inside the stream's
// window), or the error; it may be called once.
func (b *Bus) PublishAsync(subject, eventID string, entradaSeq, rodada int64, data []byte) func(context.Context) (uint64, error) {
	m := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	if entradaSeq > 0 {
		m.Header.Set(HeaderEntradaSeq, strconv.FormatInt(entradaSeq, 10))
	}
	if rodada > 0 {
		m.Header.Set(HeaderBeaconRodada, strconv.FormatInt(rodada, 10))
	}
	f, err := b.js.PublishMsgAsync(m, jetstream.WithMsgID(eventID), jetstream.WithExpectStream(b.cfg.Stream))
	if err != nil {
		err = fmt.Errorf("publishing %s on %s: %w", eventID, subject, err)
		return func(context.Context) (uint64, error) { return 0, err }
	}
	return func(ctx context.Context) (uint64, error) {
		select {
		case ack := <-f.Ok():
			return ack.Sequence, nil
		case err := <-f.Err():
			return 0, fmt.Errorf("publishing %s on %s: %w", eventID, subject, err)
		case <-ctx.Done():
			return 0, fmt.Errorf("publishing %s on %s: %w", eventID, subject, ctx.Err())
		}
	}
}

// LastEventID returns the event_id of the last message in the bus stream and
// its sequence: the draw seed's base (CONTRACT §4; the spec's
// eventBus.obterUltimoEventId, and its sequence is obterMaiorSequence). One request when the last
// message is a well-formed envelope; otherwise it walks back (at most
// basesParaTras messages) to the last one that is, so a producer publishing
// garbage cannot force the UUID fallback. It returns ErrVazio when the
// stream is empty or holds no usable event_id in that range.
func (b *Bus) LastEventID(ctx context.Context) (string, uint64, error) {
	s, err := b.streamBus(ctx)
	if err != nil {
		return "", 0, err
	}
	m, err := s.GetLastMsgForSubject(ctx, ">")
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return "", 0, ErrVazio
	}
	if err != nil {
		return "", 0, fmt.Errorf("last message of %s: %w", b.cfg.Stream, err)
	}
	for passos := 0; ; passos++ {
		if id, ok := evento.LerEventID(m.Data); ok {
			return id, m.Sequence, nil
		}
		if passos >= basesParaTras || m.Sequence <= 1 {
			return "", m.Sequence, ErrVazio
		}
		anterior := m.Sequence - 1
		if m, err = s.GetMsg(ctx, anterior); errors.Is(err, jetstream.ErrMsgNotFound) {
			return "", anterior, ErrVazio
		} else if err != nil {
			return "", 0, fmt.Errorf("message %d of %s: %w", anterior, b.cfg.Stream, err)
		}
	}
}

// basesParaTras bounds the walk back of LastEventID.
const basesParaTras = 64

// MsgPorSequencia returns the raw bus message stored at seq, with its subject
// and storage time.
func (b *Bus) MsgPorSequencia(ctx context.Context, seq uint64) ([]byte, string, time.Time, error) {
	s, err := b.streamBus(ctx)
	if err != nil {
		return nil, "", time.Time{}, err
	}
	m, err := s.GetMsg(ctx, seq)
	if err != nil {
		return nil, "", time.Time{}, fmt.Errorf("message %d of %s: %w", seq, b.cfg.Stream, err)
	}
	return m.Data, m.Subject, m.Time, nil
}

// Pending returns the consumed messages not yet acknowledged: never
// delivered plus delivered and awaiting ack (the consumer lag metric).
func (b *Bus) Pending(ctx context.Context) (uint64, error) {
	c, err := b.js.Consumer(ctx, b.cfg.Stream, evento.DurableEntradas)
	if err != nil {
		return 0, fmt.Errorf("consumer %s: %w", evento.DurableEntradas, err)
	}
	info := c.CachedInfo()
	return info.NumPending + uint64(max(info.NumAckPending, 0)), nil
}

// Ready returns nil when the connection is up, the bus stream answers and
// the durable d6a-entradas exists (/readyz, CONTRACT §3, §6).
func (b *Bus) Ready(ctx context.Context) error {
	if st := b.nc.Status(); st != nats.CONNECTED {
		return fmt.Errorf("NATS connection is %s", st)
	}
	if _, err := b.js.Stream(ctx, b.cfg.Stream); err != nil {
		return fmt.Errorf("stream %s: %w", b.cfg.Stream, err)
	}
	if _, err := b.js.Consumer(ctx, b.cfg.Stream, evento.DurableEntradas); err != nil {
		return fmt.Errorf("consumer %s: %w", evento.DurableEntradas, err)
	}
	return nil
}
