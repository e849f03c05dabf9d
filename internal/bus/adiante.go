package bus

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/evento"
)

// adiante is how many batches a buscador gathers ahead of the handler.
const adiante = 2

// buscador keeps a pull request open on the server and gathers what it
// delivers, decoded, into the batches waiting for the handler, up to
// adiante × Config.Lote; the handler takes up to Config.Lote of it when it
// is free. So an event that arrives while a transaction runs goes into the
// next one. Fetching a whole batch ahead and holding it until the handler
// took it (before) left the events that arrived meanwhile for the
// transaction after the next: at half load a result waited for two or
// three transactions, not one or two (issue 11). The messages gathered are
// kept in progress on the server.
//
// It gathers a second batch while the handler runs the first (adiante): a
// burst's fetch of one batch took 100-600 ms on a bus that fsyncs every
// message, longer than the transaction it fed, and the executor stood idle
// for 48% of a burst waiting for it (measured in issue 24).
//
// One goroutine owns it (rodar); nothing in it is shared.
type buscador struct {
	b *Bus
	// hctx is the handler's context, for decoding and dead letters: it
	// outlives the loop's by the drain period.
	hctx context.Context
	log  *slog.Logger

	// c is the durable; nil until it is looked up, and after the server
	// said it does not exist.
	c jetstream.Consumer
	// pedido is the open pull request, chegadas its deliveries; nil when
	// none is open.
	pedido   jetstream.MessageBatch
	chegadas <-chan jetstream.Msg
	// semEspera: pedido is a FetchNoWait, whose answer (what the stream
	// holds now) is gathered whole before a batch is handed over, so a
	// burst goes in batches of Lote, not in the pieces that happen to have
	// arrived; otherwise it waits for messages and each is handed over as
	// it comes.
	semEspera bool
	// faltam is how many messages the open (or last) request could still
	// bring. A request that ended with none left filled up: the stream has
	// a backlog, and the next one asks for what is there instead of
	// waiting for messages.
	faltam int
	// pendentes are the gathered messages, in stream order, not yet handed
	// to the handler.
	pendentes []recebida
	vistas    vistas // for lacuna
	// falhas counts the failed requests in a row; retomar, when set, is
	// the wait before the next one.
	falhas  int
	retomar <-chan time.Time
	// eleito is when the durable's last new leader was announced.
	eleito time.Time
	// interrompido is when the durable stopped delivering here for a
	// reason (a failed or silent request, a leader change), until the next
	// delivery, and motivo the first such reason: the pause and the next
	// delivery of docs/reliability.md's failover timeline.
	interrompido time.Time
	motivo       string
}

func novoBuscador(b *Bus, hctx context.Context, log *slog.Logger) *buscador {
	return &buscador{b: b, hctx: hctx, log: log, faltam: 1}
}

// rodar runs the loop until ctx ends, then hands back what it holds and
// closes prontos.
func (f *buscador) rodar(ctx context.Context, prontos chan<- []recebida) {
	defer close(prontos)
	progresso := time.NewTicker(f.b.cfg.AckWait / 3)
	defer progresso.Stop()
	f.b.marcarProgresso()
	lideres := f.b.vigiarLider(ctx, f.log, assuntoLiderConsumidor+"."+f.b.cfg.Stream+"."+evento.DurableEntradas)
	lideresStream := f.b.vigiarLider(ctx, f.log, assuntoLiderStream+"."+f.b.cfg.Stream)
	defer f.devolver()
	for ctx.Err() == nil {
		// Not asking because the batches ahead are full is not a stall:
		// the handler is what is busy.
		f.b.cheio.Store(f.cheio())
		if f.podePedir() && !f.pedir(ctx) {
			continue
		}
		f.reunir()
		var saida chan<- []recebida
		oferta := f.oferta()
		if oferta != nil {
			saida = prontos
		}
		select {
		case <-ctx.Done():
			return
		case <-f.retomar:
			f.retomar = nil
		case lider := <-lideres:
			f.liderEleito(lider)
		case lider := <-lideresStream:
			f.liderStreamEleito(lider)
		case m, ok := <-f.chegadas:
			if ok {
				f.recebeu(m)
			} else {
				f.terminou()
			}
		case saida <- oferta:
			f.entregues(len(oferta))
		case <-progresso.C:
			f.manterEmProgresso()
		}
	}
}

// capacidade is how many messages it gathers ahead of the handler.
func (f *buscador) capacidade() int { return adiante * f.b.cfg.Lote }

// cheio: no request is open because the batches ahead are full.
func (f *buscador) cheio() bool {
	return f.pedido == nil && len(f.pendentes) >= f.capacidade()
}

// podePedir: no request is open, none is being waited for after a
// failure, and there is room for what one would bring.
func (f *buscador) podePedir() bool {
	return f.pedido == nil && f.retomar == nil && len(f.pendentes) < f.capacidade()
}

// pedir opens a pull request, looking the durable up first when needed.
// false when it failed (recorded by falhou).
func (f *buscador) pedir(ctx context.Context) bool {
	if !f.consumidor(ctx) {
		return false
	}
	var err error
	f.semEspera, f.faltam = f.faltam == 0, min(f.b.cfg.Lote, f.capacidade()-len(f.pendentes))
	if f.semEspera {
		f.pedido, err = f.c.FetchNoWait(f.faltam)
	} else {
		opts := []jetstream.FetchOpt{jetstream.FetchMaxWait(f.b.cfg.Espera)}
		if f.b.cfg.Pulsacao > 0 {
			// Tells a request the server forgot from one that found
			// nothing, at the price of Config.Pulsacao's warning.
			opts = append(opts, jetstream.FetchHeartbeat(f.b.cfg.Pulsacao))
		}
		f.pedido, err = f.c.Fetch(f.faltam, opts...)
	}
	if err != nil {
		f.log.Warn("fetch falhou", "erro", err)
		f.pedido = nil
		f.falhou(err)
		return false
	}
	f.chegadas = f.pedido.Messages()
	return true
}

// consumidor looks the durable up when it is not known; false when that
// failed (recorded by falhou).
func (f *buscador) consumidor(ctx context.Context) bool {
	if f.c != nil {
		return true
	}
	c, err := f.b.js.Consumer(ctx, f.b.cfg.Stream, evento.DurableEntradas)
	if err != nil {
		if ctx.Err() == nil {
			f.log.Error("consumidor indisponível", "erro", err)
		}
		f.falhou(err)
		return false
	}
	f.c = c
	if ci := c.CachedInfo(); !f.vistas.conhecida && ci != nil {
		// Before this instance's first delivery it stands at the durable's
		// acknowledged floor: messages past the floor that a first delivery
		// skips went to a process that is gone (a kill) or to another
		// instance, and are read first (lacuna) instead of coming back after
		// AckWait behind later ones. After a reset the floor is just below
		// the new start, and the first delivery follows it.
		f.vistas.entrega, f.vistas.stream, f.vistas.conhecida = ci.AckFloor.Consumer, ci.AckFloor.Stream, true
	}
	return true
}

// reunir takes what has already arrived into the batch before it is
// offered, but no more: while a burst streams in, waiting for a pause
// would leave the handler idle.
func (f *buscador) reunir() {
	for range len(f.chegadas) {
		f.recebeu(<-f.chegadas)
	}
}

// oferta is the batch to hand over now, or nil. A whole batch goes at once
// even while a request is open: the next one is being gathered behind it.
// Less than a batch goes unless a FetchNoWait is still bringing the rest of
// what the stream holds.
func (f *buscador) oferta() []recebida {
	o := f.pendentes[:min(len(f.pendentes), f.b.cfg.Lote)]
	if len(o) == f.b.cfg.Lote || (len(o) > 0 && !(f.pedido != nil && f.semEspera)) {
		return o
	}
	return nil
}

// entregues drops the n messages the handler took.
func (f *buscador) entregues(n int) {
	f.pendentes = append([]recebida(nil), f.pendentes[n:]...)
}

// recebeu gathers one delivery of the open request, with the deliveries
// missing before it (lacuna).
func (f *buscador) recebeu(m jetstream.Msg) {
	f.b.marcarProgresso()
	if !f.interrompido.IsZero() {
		f.log.Info("entregas retomadas", "parado", time.Since(f.interrompido).Round(time.Millisecond), "motivo", f.motivo)
		f.interrompido, f.motivo = time.Time{}, ""
	}
	f.faltam--
	if md, err := m.Metadata(); err == nil {
		f.pendentes = append(f.pendentes, f.b.lacuna(f.hctx, f.log, &f.vistas, md)...)
	}
	if r, ok := f.b.decodificar(f.hctx, f.log, m); ok {
		f.pendentes = append(f.pendentes, r)
	}
}

// terminou takes the end of the open request: filled, expired or failed.
func (f *buscador) terminou() {
	err := f.pedido.Error()
	f.pedido, f.chegadas = nil, nil
	if err == nil || errors.Is(err, jetstream.ErrNoMessages) || errors.Is(err, nats.ErrTimeout) {
		// The server ended the request itself: filled, expired or nothing
		// pending. The durable answers.
		f.b.marcarProgresso()
		f.falhas = 0
		return
	}
	f.log.Warn("fetch falhou", "erro", err)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		f.c = nil
	}
	if errors.Is(err, jetstream.ErrConsumerLeadershipChanged) {
		f.b.reconfirmarAcks(f.log)
	}
	f.falhou(err)
}

// falhou records a failed request and sets the wait before the next.
func (f *buscador) falhou(err error) {
	f.interromper(err.Error())
	f.falhas++
	f.retomar = nil
	if d := esperaAposFalha(f.falhas, err, time.Since(f.eleito)); d > 0 {
		f.retomar = time.After(d)
	}
}

// esperaAposFalha is the wait before asking again after the n-th failed
// request in a row (0: at once), desdeEleicao after the durable's last new
// leader was announced. A leader change or a silent request: the consumer
// has (or is about to have) another leader, and waiting only adds to the
// pause (missing heartbeats, when asked for, already took Espera); only a
// second failure in a row backs off. Otherwise 250 ms, doubling up to 1 s:
// a leader election takes 4-9 s, and a longer wait only adds to the pause
// in results after it (the earlier 1 s, 2 s, 3 s… made one NATS kill cost
// 10.4 s in make test-cluster). Whatever was gathered is still handed over
// meanwhile.
//
// Just after an election it asks every esperaAposEleicao: the new leader
// announces itself before it takes pull requests, so the first ask after
// the advisory can still find nobody ("no responders").
func esperaAposFalha(n int, err error, desdeEleicao time.Duration) time.Duration {
	if n == 1 && (errors.Is(err, jetstream.ErrConsumerLeadershipChanged) || errors.Is(err, jetstream.ErrNoHeartbeat)) {
		return 0
	}
	if desdeEleicao < janelaEleicao {
		return esperaAposEleicao
	}
	return 250 * time.Millisecond << min(n-1, 2)
}

const (
	// esperaAposEleicao and janelaEleicao bound the quick asks after a new
	// leader's advisory: at most 40 requests, a failure each.
	esperaAposEleicao = 50 * time.Millisecond
	janelaEleicao     = 2 * time.Second
)

// interromper marks the start of a pause in deliveries, for the timeline;
// the first reason is kept.
func (f *buscador) interromper(porque string) {
	if f.interrompido.IsZero() {
		f.interrompido, f.motivo = time.Now(), porque
	}
}

// liderEleito takes the durable's new leader. The open request may have
// died with the old leader; the new one answers it with a 409, or it
// expires. Recorded for the timeline either way. Without a request open,
// the wait after the failures of the leaderless time is dropped: the next
// ask goes now, not up to a backoff's 1 s later (issue 50: after a stream
// leader's SIGKILL whose server also led the durable, the first delivery
// waited for that timer).
func (f *buscador) liderEleito(lider string) {
	f.log.Info("líder do consumidor eleito", "lider", lider, "pedido_aberto", f.pedido != nil)
	f.interromper("líder do consumidor eleito: " + lider)
	f.b.reconfirmarAcks(f.log)
	f.eleito, f.falhas, f.retomar = time.Now(), 0, nil
}

// liderStreamEleito takes the stream's new leader. Nothing new reached the
// durable while the stream had none, and with a durable that kept its own
// leader no request failed meanwhile: the next delivery, logged as
// "entregas retomadas", is the end of the stream's loss in the timeline
// (docs/reliability.md).
func (f *buscador) liderStreamEleito(lider string) {
	f.log.Info("líder do stream eleito", "lider", lider, "pedido_aberto", f.pedido != nil)
	f.interromper("líder do stream eleito: " + lider)
}

// manterEmProgresso keeps the gathered messages' AckWait from expiring
// while they wait for the handler.
func (f *buscador) manterEmProgresso() {
	for _, r := range f.pendentes {
		_ = r.m.InProgress()
	}
}

// devolver hands back, on stopping, what was gathered for immediate
// redelivery, and so what the open request still brings, but only once
// that request has ended (at most Espera): a message handed back while it
// is open comes straight back to it, and handing it back again each time
// spends its deliveries until the server gives up on it (MaxEntregas),
// with nobody left to dead-letter it. Past Drenagem it stops waiting: what
// the request brings later comes back after AckWait.
func (f *buscador) devolver() {
	var tardias []jetstream.Msg
	if f.chegadas != nil {
		limite := time.NewTimer(f.b.cfg.Drenagem)
		defer limite.Stop()
	esperar:
		for {
			select {
			case m, ok := <-f.chegadas:
				if !ok {
					break esperar
				}
				tardias = append(tardias, m)
			case <-limite.C:
				break esperar
			}
		}
	}
	devolverRecebidas(f.pendentes)
	for _, m := range tardias {
		_ = m.Nak()
	}
}
