// Package outbox relays the events that units of work queued in
// d6a.outbox to the bus, in order, with Nats-Msg-Id = event_id, so an event
// decided in a committed transaction always reaches the bus exactly once
// under its own id (spec 3.13 and 4.10 "state persisted but event lost" no
// longer happens). It takes the place of the spec's publicarComRetry: a
// failed publish stays in the outbox and is retried until it goes out.
//
// The executor hands each committed batch's rows to Enviar, which publishes
// them at once; the periodic pass over the table is the sweeper for what a
// crash or an outage left behind.
//
// Envelope (envelope.go) encodes what goes into the outbox: the seven-field
// envelope and the published events' payloads, checked against schemas/.
package outbox

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/store"
)

// Publisher sends one message without waiting for the bus and returns a
// function that waits for its ack and returns its stream sequence; the bus
// provides it. Messages sent one after the other reach the stream in that
// order.
type Publisher interface {
	// entradaSeq > 0 goes out in the header D6a-Entrada-Seq.
	PublishAsync(subject, eventID string, entradaSeq, rodada int64, data []byte) func(context.Context) (uint64, error)
}

// Banco is the outbox table as the relay needs it (*store.Store is one).
type Banco interface {
	// PublicarPendentes locks up to limite unpublished rows, oldest first,
	// hands them to publicar and marks published the rows it returns with
	// their stream sequences, in one transaction.
	PublicarPendentes(ctx context.Context, limite int32, agora func() time.Time,
		publicar func(context.Context, []store.LinhaOutbox) (ids, seqs []int64, err error)) (int, error)
	// MarcarPublicados marks the rows of these results published.
	MarcarPublicados(ctx context.Context, eventIDs []uuid.UUID, seqs []int64, agora time.Time) error
}

// Relay moves outbox rows to the bus.
type Relay struct {
	st           Banco
	pub          Publisher
	poll         time.Duration
	lote         int32
	wake         chan struct{}
	diretas      chan direta
	log          *slog.Logger
	now          func() time.Time
	OnPublicados func(n int) // metrics hook, optional
	// AntesDaVarredura runs before a pass publishes the rows it found; an
	// error leaves them for a later pass. The worker signs the
	// transparency log's checkpoint there, so what a crash or a repair
	// left behind also goes out only once signed (CONTRACT §7).
	AntesDaVarredura func(context.Context) error
}

// New builds a relay that polls every poll interval and whenever Wake is
// called.
func New(st Banco, pub Publisher, poll time.Duration, now func() time.Time) *Relay {
	if poll <= 0 {
		poll = time.Second
	}
	if now == nil {
		now = time.Now
	}
	return &Relay{st: st, pub: pub, poll: poll, lote: 256, wake: make(chan struct{}, 1), diretas: make(chan direta, 1024), log: slog.Default(), now: now}
}

// Mensagem is a committed outbox row.
type Mensagem struct {
	EventID  uuid.UUID
	Subject  string
	Envelope []byte
	// EntradaSeq: the input whose unit of work queued it (0: none).
	EntradaSeq int64
	// Rodada: a draw's beacon round, header D6a-Beacon-Rodada (0: none).
	Rodada int64
}

// direta is a batch Enviar published, waiting for its acks.
type direta struct {
	msgs []Mensagem
	acks []func(context.Context) (uint64, error)
}

// Enviar publishes committed rows right away, in this order, on the
// caller's goroutine (the executor's, just after its commit), and leaves
// waiting for their acks and marking them sent to Run: a batch's results
// need not wait for the previous batch's acks and mark. It never waits for
// the bus (a full publish window fails the publish). Rows it cannot take
// (queue full) or fails to publish stay in the outbox for the sweep; one
// published and swept again goes out under the same Nats-Msg-Id, which the
// stream drops.
func (r *Relay) Enviar(msgs []Mensagem) {
	if len(r.diretas) == cap(r.diretas) {
		r.Wake()
		return
	}
	d := direta{msgs: msgs, acks: r.publicar(msgs)}
	select {
	case r.diretas <- d:
	default:
		r.Wake()
	}
}

// Wake asks for a pass soon; it never blocks.
func (r *Relay) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run publishes until ctx ends. Failures (bus or database down) are retried
// with backoff up to 1 s, so what an outage left behind goes out soon after
// it; nothing is skipped.
func (r *Relay) Run(ctx context.Context) {
	backoff := 50 * time.Millisecond
	for {
		n, err := r.Pass(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			r.log.Warn("outbox: publicação falhou, nova tentativa", "erro", err, "espera", backoff.String())
			if !sleep(ctx, backoff) {
				return
			}
			backoff = min(backoff*2, time.Second)
			continue
		case n >= int(r.lote):
			backoff = 50 * time.Millisecond
			continue // a full batch: more are waiting
		}
		backoff = 50 * time.Millisecond
		espera := time.NewTimer(r.poll)
	direto:
		for {
			select {
			case <-ctx.Done():
				espera.Stop()
				return
			case d := <-r.diretas:
				if err := r.confirmar(ctx, d); err != nil && ctx.Err() == nil {
					// Unmarked rows go out on the sweep, under the same ids.
					r.log.Warn("outbox: publicação direta falhou; a varredura publica o restante", "erro", err)
					break direto
				}
			case <-r.wake:
				break direto
			case <-espera.C:
				break direto
			}
		}
		espera.Stop()
	}
}

// confirmar waits for the acks of the rows Enviar published (and of any
// other batch already waiting) and marks the acknowledged ones with one
// statement.
func (r *Relay) confirmar(ctx context.Context, d direta) error {
mais:
	for len(d.msgs) < 4*int(r.lote) {
		select {
		case o := <-r.diretas:
			d.msgs = append(d.msgs, o.msgs...)
			d.acks = append(d.acks, o.acks...)
		default:
			break mais
		}
	}
	ok, seqs, primeiro := esperarAcks(ctx, d.acks)
	ids := make([]uuid.UUID, len(ok))
	for k, i := range ok {
		ids[k] = d.msgs[i].EventID
	}
	if len(ids) > 0 {
		// Its commit skips the WAL flush: a mark lost in a database crash
		// only republishes the row under the same Nats-Msg-Id, which the
		// stream drops as a duplicate.
		if err := r.st.MarcarPublicados(ctx, ids, seqs, r.now().UTC()); err != nil {
			return err
		}
		if r.OnPublicados != nil {
			r.OnPublicados(len(ids))
		}
	}
	return primeiro
}

// Pass publishes one batch, oldest first, and returns how many were
// published. Rows are locked (SKIP LOCKED) so a second instance's relay
// takes others; a row is marked only after the bus acknowledged it, and a
// crash in between republishes it under the same Nats-Msg-Id, which the
// stream deduplicates. The whole batch is sent before any ack is awaited and
// marked by one statement, so a pass costs five statements (with the
// plans' refit, d6a.ajustar_planos) however many rows it carries.
func (r *Relay) Pass(ctx context.Context) (int, error) {
	n, err := r.st.PublicarPendentes(ctx, r.lote, r.now, func(ctx context.Context, rows []store.LinhaOutbox) (ids, seqs []int64, err error) {
		if r.AntesDaVarredura != nil {
			if err := r.AntesDaVarredura(ctx); err != nil {
				return nil, nil, err
			}
		}
		// Every acknowledged row is marked, even past a failure: left
		// unmarked it would go out again on a later pass, and JetStream only
		// drops a duplicate Nats-Msg-Id within its duplicate window. A failed
		// row goes out on a later pass, after rows acked behind it: order on
		// the stream is the queue's except around a failed publish.
		msgs := make([]Mensagem, len(rows))
		for i, row := range rows {
			msgs[i] = Mensagem{EventID: row.EventID, Subject: row.Subject, Envelope: row.Envelope}
			if row.EntradaSequence != nil {
				msgs[i].EntradaSeq = *row.EntradaSequence
			}
			if row.BeaconRodada != nil {
				msgs[i].Rodada = *row.BeaconRodada
			}
		}
		ok, seqs, primeiro := esperarAcks(ctx, r.publicar(msgs))
		ids = make([]int64, len(ok))
		for k, i := range ok {
			ids[k] = rows[i].ID
		}
		return ids, seqs, primeiro
	})
	if err != nil {
		return 0, err
	}
	if n > 0 && r.OnPublicados != nil {
		r.OnPublicados(n)
	}
	return n, nil
}

// publicar sends msgs without waiting; each returned function waits for
// its message's ack.
func (r *Relay) publicar(msgs []Mensagem) []func(context.Context) (uint64, error) {
	acks := make([]func(context.Context) (uint64, error), len(msgs))
	for i, m := range msgs {
		acks[i] = r.pub.PublishAsync(m.Subject, m.EventID.String(), m.EntradaSeq, m.Rodada, m.Envelope)
	}
	return acks
}

// esperarAcks waits for every ack: ok are the positions acknowledged, seqs
// their stream sequences, primeiro the first failure.
func esperarAcks(ctx context.Context, acks []func(context.Context) (uint64, error)) (ok []int, seqs []int64, primeiro error) {
	for i, ack := range acks {
		seq, err := ack(ctx)
		if err != nil {
			primeiro = cmp.Or(primeiro, err)
			continue
		}
		ok = append(ok, i)
		seqs = append(seqs, int64(seq))
	}
	return ok, seqs, primeiro
}

// Flush publishes until the outbox is empty or ctx ends (shutdown).
func (r *Relay) Flush(ctx context.Context) error {
	for {
		n, err := r.Pass(ctx)
		if err != nil {
			if !sleep(ctx, 100*time.Millisecond) {
				return err
			}
			continue
		}
		if n == 0 {
			return nil
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
