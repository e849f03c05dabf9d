package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/evento"
)

// Handler processes one decoded event inside its own transaction (someone
// else implements it). seq is the message's stream sequence.
//
// A nil error acknowledges the message. An error wrapped by Permanente, or
// one that errors.Is evento.ErrInutilizavel, sends it to the dead-letter
// stream at once; any other error is retried with backoff until
// Config.MaxEntregas deliveries, then dead-lettered (CONTRACT §3).
type Handler interface {
	Handle(ctx context.Context, ev evento.Evento, seq uint64) error
}

// LoteHandler is a Handler that also takes every message of a fetch at
// once, in stream order, so the executor can run them in one transaction.
// errs[i] settles itens[i] exactly as Handle's error would.
type LoteHandler interface {
	Handler
	HandleLote(ctx context.Context, itens []Item) (errs []error)
}

// Item is one decoded message of a batch.
type Item struct {
	Evento evento.Evento
	Seq    uint64
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, ev evento.Evento, seq uint64) error

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, ev evento.Evento, seq uint64) error {
	return f(ctx, ev, seq)
}

// ErrPermanente is matched by errors.Is for errors wrapped by Permanente.
var ErrPermanente = errors.New("falha permanente")

type permanente struct{ err error }

func (p permanente) Error() string { return p.err.Error() }
func (p permanente) Unwrap() []error {
	return []error{p.err, ErrPermanente}
}

// Permanente marks a handler error as one that no retry can fix, so the
// message is dead-lettered at once instead of after MaxEntregas deliveries.
func Permanente(err error) error {
	if err == nil {
		return nil
	}
	return permanente{err}
}

// ErrTransitorio is matched by errors.Is for errors wrapped by Transitorio.
var ErrTransitorio = errors.New("falha transitória")

type transitorio struct{ err error }

func (t transitorio) Error() string { return t.err.Error() }
func (t transitorio) Unwrap() []error {
	return []error{t.err, ErrTransitorio}
}

// Transitorio marks a handler error as one that time fixes (the database
// is unreachable): Consumir retries it in place, without counting a
// delivery, until it succeeds or consumption stops.
func Transitorio(err error) error {
	if err == nil {
		return nil
	}
	return transitorio{err}
}

func ehTransitorio(err error) bool { return errors.Is(err, ErrTransitorio) }

// esperaTransitoria is the wait before in-place retry n of a transient
// failure: 250 ms doubling up to 1 s, never longer than the configured
// redelivery delay. A short cap makes the colony catch up soon after the
// database or the bus returns: a NATS stream leader election takes 4-9 s
// (nats-server's raft timeouts), and with the redelivery delays (1 s, 2 s,
// 5 s…) a draw waiting for its base retried at 1, 3, 8 and 13 s, so an
// election ending at 8.5 s held the consumer until 13 s.
func (c Config) esperaTransitoria(n uint64) time.Duration {
	return min(c.espera(n), 250*time.Millisecond<<min(n-1, 2))
}

func ehPermanente(err error) bool {
	return errors.Is(err, ErrPermanente) || errors.Is(err, evento.ErrInutilizavel)
}

// Consumir is the spec's registrarConsumidores: it pulls every consumed
// type through the one durable d6a-entradas and hands every message to h,
// strictly one batch at a time and in stream order across types (CONTRACT
// §3 "Stream order"): the decision of a trigger at sequence s sees the
// effects of every consumed message below s and of none above it.
//
// Unusable messages and messages whose handler failed Config.MaxEntregas
// times are dead-lettered and acknowledged; other failures are negatively
// acknowledged with the delay of Config.Backoff. A negatively acknowledged
// message comes back after later messages have been handled: handlers are
// idempotent (spec 3.13), and holding every later message behind one
// failing message would stall the bus. A transient failure (the database
// down) is retried in place, holding the order.
//
// Consumir returns nil once ctx is cancelled and every goroutine has
// finished the message in hand: fetching stops, the handler call in progress
// runs to completion (for at most Config.Drenagem, after which its own context
// is cancelled) and is acknowledged, and messages fetched but not started are
// handed back to the server.
func (b *Bus) Consumir(ctx context.Context, h Handler) error {
	hctx, cancelar := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelar()
	parar := context.AfterFunc(ctx, func() {
		time.AfterFunc(b.cfg.Drenagem, cancelar)
	})
	defer parar()

	var wg sync.WaitGroup
	wg.Go(func() { b.consumirEntradas(ctx, hctx, h) })
	wg.Go(func() { b.vigiarMaxEntregas(ctx) })
	wg.Wait()
	// Acks are sent without waiting (ackAssincrono): make sure the server
	// has them before the drain is reported done.
	if err := b.nc.FlushTimeout(5 * time.Second); err != nil {
		b.log.Warn("acks não enviados ao fim do consumo; essas mensagens podem ser entregues de novo", "erro", err)
	}
	return nil
}

// consumirEntradas is the loop of the durable. ctx stops fetching; hctx is
// given to the handler and outlives ctx by the drain period.
//
// Fetching and decoding run ahead of the handler (buscador), so the
// executor finds the next batch ready when it commits one instead of
// waiting for a round trip to the server and the decoding of every message
// (issue 11: the executor stood idle 43% of a burst). Messages are still
// handed over one batch at a time, in stream order.
func (b *Bus) consumirEntradas(ctx, hctx context.Context, h Handler) {
	log := b.log.With("consumidor", evento.DurableEntradas)
	prontos := make(chan []recebida)
	var wg sync.WaitGroup
	wg.Go(func() { novoBuscador(b, hctx, log).rodar(ctx, prontos) })
	defer wg.Wait()
	for rs := range prontos {
		if ctx.Err() != nil {
			devolverRecebidas(rs)
			continue
		}
		b.processarLote(ctx, hctx, rs, h)
	}
}

func (b *Bus) marcarProgresso() { b.progresso.Store(time.Now().UnixNano()) }

// SemEntrega is how long the durable has shown this instance no sign of
// life while it was asking for messages: no delivery, and no pull request
// the server itself ended (filled, expired, nothing pending). A healthy
// idle consumer stays under Espera; a request lost with a
// leader, a consumer without a leader or a bus that does not answer make
// it grow. Zero before consumption starts and while the loop holds all
// the batches it may (the handler, not the bus, is then what is busy).
// It is d6a_entradas_sem_entrega_segundos (docs/operacao.md).
func (b *Bus) SemEntrega() time.Duration {
	p := b.progresso.Load()
	if p == 0 || b.cheio.Load() {
		return 0
	}
	return time.Since(time.Unix(0, p))
}

// assuntoLiderConsumidor is the server advisory sent when a replicated
// consumer has elected a leader; its last token is the durable.
// assuntoLiderStream is the same for a replicated stream, whose last token
// is the stream.
const (
	assuntoLiderConsumidor = "$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED"
	assuntoLiderStream     = "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED"
)

// vigiarLider delivers the name of each new leader announced on the
// advisory subject assunto. The advisories mark, in the logs, the start of
// a leader change's timeline (docs/reliability.md), and the durable's
// lets the fetch loop ask again at once; a failed subscription only loses
// that.
func (b *Bus) vigiarLider(ctx context.Context, log *slog.Logger, assunto string) <-chan string {
	out := make(chan string, 4)
	ch := make(chan *nats.Msg, 16)
	sub, err := b.nc.ChanSubscribe(assunto, ch)
	if err != nil {
		log.Warn("não foi possível acompanhar os avisos de líder", "assunto", assunto, "erro", err)
		return out
	}
	go func() {
		defer func() { _ = sub.Unsubscribe() }()
		for {
			select {
			case <-ctx.Done():
				return
			case m := <-ch:
				var adv struct {
					Leader string `json:"leader"`
				}
				_ = json.Unmarshal(m.Data, &adv)
				select {
				case out <- adv.Leader:
				default:
				}
			}
		}
	}()
	return out
}

// devolverRecebidas hands gathered but unstarted messages back for
// immediate redelivery instead of letting them wait for AckWait.
func devolverRecebidas(rs []recebida) {
	for _, r := range rs {
		_ = r.m.Nak()
	}
}

func (b *Bus) processarLote(ctx, hctx context.Context, rs []recebida, h Handler) {
	if lh, ok := h.(LoteHandler); ok && len(rs) > 1 {
		b.processarJuntos(ctx, hctx, rs, lh)
		return
	}
	progresso := time.Now()
	for i, r := range rs {
		if ctx.Err() != nil {
			devolverRecebidas(rs[i:])
			return
		}
		// The messages waiting behind a slow handler have their AckWait
		// running; keep it from expiring, which would deliver them twice.
		if time.Since(progresso) > b.cfg.AckWait/3 {
			for _, p := range rs[i:] {
				_ = p.m.InProgress()
			}
			progresso = time.Now()
		}
		inicio := time.Now()
		b.liquidar(ctx, hctx, r, b.chamarEmProgresso(hctx, h, r.ev, r.seq, r.m), h, inicio, rs[i+1:])
	}
}

// recebida is a decoded message waiting for its handler.
type recebida struct {
	m        jetstream.Msg
	tipo     evento.Tipo
	ev       evento.Evento
	seq      uint64
	entregas uint64
	log      *slog.Logger
}

// processarJuntos hands every message of the batch to the handler in one
// call, then settles each one as processarLote would.
func (b *Bus) processarJuntos(ctx, hctx context.Context, rs []recebida, h LoteHandler) {
	itens := make([]Item, len(rs))
	pendentes := make([]jetstream.Msg, len(rs))
	for i, r := range rs {
		itens[i] = Item{Evento: r.ev, Seq: r.seq}
		pendentes[i] = r.m
	}
	inicio := time.Now()
	errs := b.emProgresso(pendentes, func() []error { return b.chamarLote(hctx, h, itens) })
	for i, r := range rs {
		b.liquidar(ctx, hctx, r, errs[i], h, inicio, rs[i+1:])
	}
}

// decodificar reads a message's metadata and envelope; an unusable message
// is dead-lettered (or, without metadata, handed back) and ok is false.
func (b *Bus) decodificar(ctx context.Context, log *slog.Logger, m jetstream.Msg) (recebida, bool) {
	tipo, consumido := evento.TipoDoSubject(b.cfg.Prefix, m.Subject())
	consumido = consumido && tipo.Consumido()
	if !consumido {
		// Outside the durable's filter (an operator changed it): the
		// subject's own name for the dead letter.
		tipo = evento.Tipo(strings.TrimPrefix(m.Subject(), b.cfg.Prefix+"."))
	}
	log = log.With("tipo", string(tipo))
	md, err := m.Metadata()
	if err != nil {
		log.Error("mensagem sem metadados do JetStream", "subject", m.Subject(), "erro", err)
		_ = m.NakWithDelay(b.cfg.espera(1))
		return recebida{}, false
	}
	seq, entregas := md.Sequence.Stream, md.NumDelivered
	if entregas == 1 && b.cfg.AoReceber != nil {
		// Redeliveries wait for AckWait or a retry's delay by design.
		b.cfg.AoReceber(time.Since(md.Timestamp))
	}
	log = log.With("seq", seq, "entregas", entregas)
	if entregas > 1 {
		// Rare in steady state: a failed handler's retry, or a delivery
		// whose ack never arrived (a kill, a leader change), back after
		// AckWait. The failover timeline reads these.
		log.Info("mensagem reentregue")
	}
	ev, err := evento.Decodificar(tipo, m.Data())
	if err == nil && !consumido {
		err = fmt.Errorf("subject %s não é de um tipo consumido", m.Subject())
	}
	if err != nil {
		id, _ := evento.LerEventID(m.Data())
		log.Error("mensagem inutilizável; para a dead letter", "event_id", id, "motivo", err.Error())
		b.mortaEAck(ctx, log, tipo, m, seq, entregas, err.Error())
		return recebida{}, false
	}
	ev.Armazenado = md.Timestamp
	return recebida{m: m, tipo: tipo, ev: ev, seq: seq, entregas: entregas, log: log.With("event_id", ev.EventID.String())}, true
}

// liquidar settles a handled message: ack, dead letter plus ack, or a
// delayed nak. resto are the messages of the batch settled after it.
//
// parar stops consumption; ctx is the handler's context, which outlives
// parar by the drain period.
func (b *Bus) liquidar(parar, ctx context.Context, r recebida, herr error, h Handler, inicio time.Time, resto []recebida) {
	log, m, tipo := r.log, r.m, r.tipo
	// A transient failure (the database unreachable) is retried here,
	// holding the message, so an outage of any length is not counted
	// against MaxEntregas and never dead-letters a good message (CONTRACT
	// §3). Stopping consumption hands the message back.
	var retidas []jetstream.Msg
	for tentativa := uint64(1); herr != nil && ehTransitorio(herr); tentativa++ {
		if retidas == nil {
			// The rest of the batch waits behind this message: with AckWait
			// sized to a batch, an outage longer than it would otherwise
			// redeliver them, each time a delivery closer to MaxEntregas.
			retidas = []jetstream.Msg{m}
			for _, p := range resto {
				retidas = append(retidas, p.m)
			}
		}
		espera := b.cfg.esperaTransitoria(tentativa)
		if tentativa == 1 || tentativa%10 == 0 {
			log.Warn("falha transitória; nova tentativa sem contar entrega", "erro", herr, "tentativa", tentativa, "espera", espera)
		}
		select {
		case <-parar.Done():
			_ = m.NakWithDelay(espera)
			return
		case <-time.After(espera):
		}
		for _, p := range retidas {
			_ = p.InProgress()
		}
		herr = b.emProgresso(retidas, func() []error { return []error{b.chamar(ctx, h, r.ev, r.seq)} })[0]
	}
	switch {
	case herr == nil:
		b.ackAssincrono(log, m)
		log.Debug("evento tratado", "duracao", time.Since(inicio))
	case ehPermanente(herr):
		log.Error("handler falhou de vez; para a dead letter", "erro", herr)
		b.mortaEAck(ctx, log, tipo, m, r.seq, r.entregas, herr.Error())
	case r.entregas >= uint64(b.cfg.MaxEntregas):
		log.Error("handler falhou na última entrega; para a dead letter", "erro", herr)
		b.mortaEAck(ctx, log, tipo, m, r.seq, r.entregas, fmt.Sprintf("falhou %d entregas: %v", r.entregas, herr))
	default:
		espera := b.cfg.espera(r.entregas)
		log.Warn("handler falhou; nova tentativa", "erro", herr, "espera", espera)
		if err := m.NakWithDelay(espera); err != nil {
			log.Warn("nak falhou; a mensagem volta após o AckWait", "erro", err)
		}
	}
}

// chamarEmProgresso calls the handler and, while it runs, tells the server
// the message is in progress every AckWait/3, so a slow transaction is not
// redelivered (and, on the last delivery, not given up on) behind its back.
func (b *Bus) chamarEmProgresso(ctx context.Context, h Handler, ev evento.Evento, seq uint64, m jetstream.Msg) error {
	return b.emProgresso([]jetstream.Msg{m}, func() []error { return []error{b.chamar(ctx, h, ev, seq)} })[0]
}

// emProgresso runs call while telling the server, every AckWait/3, that
// msgs are in progress.
func (b *Bus) emProgresso(msgs []jetstream.Msg, call func() []error) []error {
	feito := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(b.cfg.AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-feito:
				return
			case <-t.C:
				for _, m := range msgs {
					_ = m.InProgress()
				}
			}
		}
	})
	err := call()
	close(feito)
	// No progress signal may race the ack that follows.
	wg.Wait()
	return err
}

// chamar calls the handler, turning a panic into a permanent error so one
// poisonous message cannot stop its type.
func (b *Bus) chamar(ctx context.Context, h Handler, ev evento.Evento, seq uint64) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = Permanente(fmt.Errorf("panic no handler: %v", r))
		}
	}()
	return h.Handle(ctx, ev, seq)
}

// chamarLote is chamar for a batch: a panic fails every message of it
// permanently.
func (b *Bus) chamarLote(ctx context.Context, h LoteHandler, itens []Item) (errs []error) {
	defer func() {
		if r := recover(); r != nil {
			errs = make([]error, len(itens))
			for i := range errs {
				errs[i] = Permanente(fmt.Errorf("panic no handler: %v", r))
			}
		}
	}()
	errs = h.HandleLote(ctx, itens)
	if len(errs) != len(itens) {
		panic(fmt.Sprintf("HandleLote returned %d results for %d messages", len(errs), len(itens)))
	}
	return errs
}

// mortaEAck dead-letters m and acknowledges it. When the dead letter cannot
// be stored (NATS down), the message is not acknowledged: it comes back, or,
// past MaxDeliver, is caught by vigiarMaxEntregas.
func (b *Bus) mortaEAck(ctx context.Context, log *slog.Logger, tipo evento.Tipo, m jetstream.Msg, seq, entregas uint64, motivo string) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := b.DeadLetter(dctx, tipo, m.Subject(), seq, m.Data(), motivo); err != nil {
		log.Error("dead letter falhou; mensagem não confirmada", "erro", err)
		_ = m.NakWithDelay(b.cfg.espera(entregas))
		return
	}
	b.ack(ctx, log, m)
}

// ackAssincrono acknowledges a handled message without waiting for the
// server's confirmation: the handler's transaction already committed its
// effects and its inbox row, so a lost ack only redelivers a message the
// inbox turns into a no-op, and the next message need not wait for the
// stream's fsync of the ack. Close drains the connection, flushing acks
// still in flight.
func (b *Bus) ackAssincrono(log *slog.Logger, m jetstream.Msg) {
	if err := m.Ack(); err != nil {
		log.Warn("ack não enviado; a mensagem pode ser entregue de novo", "erro", err)
		return
	}
	if m.Reply() == "" {
		return // read from the stream (lida): nothing to confirm again
	}
	agora := time.Now()
	b.acksMu.Lock()
	b.acks = append(podarAcks(b.acks, agora), ackEnviado{m.Reply(), agora})
	b.acksMu.Unlock()
}

// janelaReconfirmacao is how far back acknowledgements are sent again to a
// new consumer leader. The ones lost in a leader change are those the old
// leader had not yet committed to its group when it stepped down (it drops
// its pending proposals) and those sent before the new one subscribed: a
// few milliseconds to tens of them, the advisory arriving about 30 ms after
// the change (docs/reliability.md). Two seconds leaves room for a loaded
// machine.
const janelaReconfirmacao = 2 * time.Second

// podarAcks drops the acknowledgements older than the window.
func podarAcks(acks []ackEnviado, agora time.Time) []ackEnviado {
	i := 0
	for i < len(acks) && agora.Sub(acks[i].em) > janelaReconfirmacao {
		i++
	}
	if i == 0 {
		return acks
	}
	return append(acks[:0], acks[i:]...)
}

// reconfirmarAcks sends the recent unconfirmed acknowledgements again, to
// the consumer's new leader. Without it each one lost in the change kept
// its message pending until AckWait, which redelivered it to be skipped by
// the inbox: make test-cluster's step-downs held the colony's catch-up for
// the old AckWait of 30 s (issue 38). The server ignores an ack for a
// message no longer pending, so sending one twice is harmless. Both the
// advisory and the open request's 409 call it; the second within a second
// is skipped.
func (b *Bus) reconfirmarAcks(log *slog.Logger) {
	agora := time.Now()
	b.acksMu.Lock()
	if agora.Sub(b.reconfirmado) < time.Second {
		b.acksMu.Unlock()
		return
	}
	b.reconfirmado = agora
	b.acks = podarAcks(b.acks, agora)
	replies := make([]string, len(b.acks))
	for i, a := range b.acks {
		replies[i] = a.reply
	}
	b.acksMu.Unlock()
	n := 0
	for _, r := range replies {
		if b.nc.Publish(r, []byte("+ACK")) == nil {
			n++
		}
	}
	log.Info("acks recentes reenviados ao novo líder do consumidor", "acks", n)
}

// ack acknowledges m and waits for the server's confirmation, even during
// the drain: a dead letter's ack is what keeps it from being copied twice.
func (b *Bus) ack(ctx context.Context, log *slog.Logger, m jetstream.Msg) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := m.DoubleAck(actx); err != nil {
		// The handler is idempotent (spec 3.13): a redelivery is harmless.
		log.Warn("ack não confirmado; a mensagem pode ser entregue de novo", "erro", err)
	}
}

// assuntoMaxEntregas is the server advisory sent when a message exceeds
// MaxDeliver without being acknowledged.
const assuntoMaxEntregas = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES"

// vigiarMaxEntregas dead-letters messages the server gave up on. Consumir
// acknowledges every message on its last delivery, but a crash, a lost ack
// or a failed dead letter on that delivery would let the server drop the
// message from the consumer silently; its advisory is the last chance to
// keep CONTRACT §3's "nothing is silently dropped". Advisories are not
// persisted, so one sent while no instance is connected is only in the
// server's log.
func (b *Bus) vigiarMaxEntregas(ctx context.Context) {
	ch := make(chan *nats.Msg, 256)
	sub, err := b.nc.ChanSubscribe(assuntoMaxEntregas+"."+b.cfg.Stream+".*", ch)
	if err != nil {
		b.log.Error("não foi possível acompanhar os avisos de max-deliveries", "erro", err)
		return
	}
	defer func() { _ = sub.Unsubscribe() }()
	for {
		select {
		case <-ctx.Done():
			return
		case am := <-ch:
			var adv struct {
				Consumer   string `json:"consumer"`
				StreamSeq  uint64 `json:"stream_seq"`
				Deliveries uint64 `json:"deliveries"`
			}
			if err := json.Unmarshal(am.Data, &adv); err != nil {
				continue
			}
			if adv.Consumer != evento.DurableEntradas {
				continue
			}
			b.mortaPorAviso(ctx, adv.StreamSeq, adv.Deliveries)
		}
	}
}

func (b *Bus) mortaPorAviso(ctx context.Context, seq, entregas uint64) {
	log := b.log.With("seq", seq, "entregas", entregas)
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	data, subject, _, err := b.MsgPorSequencia(dctx, seq)
	if err != nil {
		log.Error("mensagem excedeu max deliveries e não pode ser lida para o stream de dead letters", "erro", err)
		return
	}
	tipo, ok := evento.TipoDoSubject(b.cfg.Prefix, subject)
	if !ok {
		tipo = evento.Tipo(strings.TrimPrefix(subject, b.cfg.Prefix+"."))
	}
	log = log.With("tipo", string(tipo))
	motivo := fmt.Sprintf("excedeu %d entregas sem confirmação (pode ter sido processada)", entregas)
	if err := b.DeadLetter(dctx, tipo, subject, seq, data, motivo); err != nil {
		log.Error("mensagem excedeu max deliveries e não foi para a dead letter", "erro", err)
		return
	}
	log.Error("mensagem excedeu max deliveries; enviada à dead letter")
}
