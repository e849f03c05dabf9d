package bus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/bus/bustest"
)

// pedidoFalso is a pull request that has ended with err after bringing
// msgs.
type pedidoFalso struct {
	ch  chan jetstream.Msg
	err error
}

func terminado(err error, msgs ...jetstream.Msg) pedidoFalso {
	ch := make(chan jetstream.Msg, len(msgs))
	for _, m := range msgs {
		ch <- m
	}
	close(ch)
	return pedidoFalso{ch, err}
}

func (p pedidoFalso) Messages() <-chan jetstream.Msg { return p.ch }
func (p pedidoFalso) Error() error                   { return p.err }

// buscadorDeTeste is a buscador over a fresh server whose durable exists,
// gathering batches of lote; mod, when set, changes the rest of the
// configuration.
func buscadorDeTeste(t *testing.T, lote int, mod func(*Config)) *buscador {
	t.Helper()
	url, _ := bustest.Start(t)
	b := novoBus(t, url, func(c *Config) {
		c.Lote = lote
		if mod != nil {
			mod(c)
		}
	})
	consumidores(t, b)
	return novoBuscador(b, context.Background(), logTeste())
}

// drenar gathers every delivery of the open request, then takes its end.
func drenar(f *buscador) {
	for m := range f.chegadas {
		f.recebeu(m)
	}
	f.terminou()
}

func seqsDe(rs []recebida) []uint64 {
	var s []uint64
	for _, r := range rs {
		s = append(s, r.seq)
	}
	return s
}

func TestEsperaAposFalha(t *testing.T) {
	outra := errors.New("nats: no responders available for request")
	for _, c := range []struct {
		n    int
		err  error
		want time.Duration
	}{
		{1, jetstream.ErrConsumerLeadershipChanged, 0},
		{1, jetstream.ErrNoHeartbeat, 0},
		{1, fmt.Errorf("fetch: %w", jetstream.ErrConsumerLeadershipChanged), 0},
		{1, outra, 250 * time.Millisecond},
		{2, jetstream.ErrConsumerLeadershipChanged, 500 * time.Millisecond},
		{2, outra, 500 * time.Millisecond},
		{3, outra, time.Second},
		{10, outra, time.Second},
	} {
		if got := esperaAposFalha(c.n, c.err, time.Hour); got != c.want {
			t.Errorf("esperaAposFalha(%d, %v) = %v, want %v", c.n, c.err, got, c.want)
		}
	}
	// Just after a new leader's advisory, before it takes requests.
	for _, n := range []int{1, 2, 10} {
		if got := esperaAposFalha(n, outra, janelaEleicao/2); got != esperaAposEleicao {
			t.Errorf("failure %d just after an election: wait %v, want %v", n, got, esperaAposEleicao)
		}
	}
	if got := esperaAposFalha(1, jetstream.ErrConsumerLeadershipChanged, 0); got != 0 {
		t.Errorf("a 409 just after an election: wait %v, want none", got)
	}
}

// A whole batch goes at once; less than one goes too, unless a FetchNoWait
// is still bringing the rest of what the stream holds.
func TestBuscadorOferta(t *testing.T) {
	f := novoBuscador(&Bus{cfg: Config{Lote: 3}}, context.Background(), logTeste())
	aberto := pedidoFalso{ch: make(chan jetstream.Msg)}
	rs := func(seqs ...uint64) []recebida {
		var out []recebida
		for _, s := range seqs {
			out = append(out, recebida{seq: s})
		}
		return out
	}
	for _, c := range []struct {
		nome      string
		pendentes []recebida
		pedido    jetstream.MessageBatch
		semEspera bool
		want      []uint64
	}{
		{"nothing gathered", nil, nil, false, nil},
		{"less than a batch, no request open", rs(1, 2), nil, false, []uint64{1, 2}},
		{"less than a batch, waiting request open", rs(1, 2), aberto, false, []uint64{1, 2}},
		{"less than a batch, FetchNoWait open", rs(1, 2), aberto, true, nil},
		{"a whole batch, FetchNoWait open", rs(1, 2, 3, 4), aberto, true, []uint64{1, 2, 3}},
		{"more than a batch", rs(1, 2, 3, 4, 5), nil, false, []uint64{1, 2, 3}},
	} {
		f.pendentes, f.pedido, f.semEspera = c.pendentes, c.pedido, c.semEspera
		if got := seqsDe(f.oferta()); !slices.Equal(got, c.want) {
			t.Errorf("%s: offered %v, want %v", c.nome, got, c.want)
		}
	}
	f.pendentes, f.pedido = rs(1, 2, 3, 4, 5), nil
	f.entregues(3)
	if got := seqsDe(f.pendentes); !slices.Equal(got, []uint64{4, 5}) {
		t.Errorf("after handing over 3: %v left, want [4 5]", got)
	}
}

// It asks while there is room for a request's worth, and holding two
// batches is being full, not stalled.
func TestBuscadorPedeAteACapacidade(t *testing.T) {
	f := novoBuscador(&Bus{cfg: Config{Lote: 2}}, context.Background(), logTeste())
	if !f.podePedir() || f.cheio() {
		t.Fatal("empty: should ask and not be full")
	}
	f.pendentes = make([]recebida, 3)
	if !f.podePedir() || f.cheio() {
		t.Fatal("3 of 4 gathered: should ask and not be full")
	}
	f.pendentes = make([]recebida, 4)
	if f.podePedir() || !f.cheio() {
		t.Fatal("4 of 4 gathered: should not ask, and be full")
	}
	f.pendentes = nil
	f.retomar = make(chan time.Time)
	if f.podePedir() || f.cheio() {
		t.Fatal("waiting after a failure: should not ask, nor be full")
	}
	f.retomar, f.pedido = nil, pedidoFalso{ch: make(chan jetstream.Msg)}
	if f.podePedir() || f.cheio() {
		t.Fatal("request open: should not ask again, nor be full")
	}
}

// A request that filled up means a backlog: the next asks for what the
// stream holds (FetchNoWait) instead of waiting, and gathers it in stream
// order.
func TestBuscadorPedeSemEsperaDepoisDeEncher(t *testing.T) {
	f := buscadorDeTeste(t, 2, nil)
	var seqs []uint64
	for range 5 {
		s, _ := publicarAgenda(t, f.b)
		seqs = append(seqs, s)
	}
	ctx := ctxTeste(t)
	if !f.pedir(ctx) {
		t.Fatal("first request failed")
	}
	if f.semEspera || f.faltam != 2 {
		t.Fatalf("first request: semEspera=%v faltam=%d, want a waiting request for 2", f.semEspera, f.faltam)
	}
	drenar(f)
	if f.faltam != 0 || f.pedido != nil {
		t.Fatalf("after the first request: faltam=%d open=%v, want it filled and closed", f.faltam, f.pedido != nil)
	}
	if !f.pedir(ctx) {
		t.Fatal("second request failed")
	}
	if !f.semEspera || f.faltam != 2 {
		t.Fatalf("second request: semEspera=%v faltam=%d, want a FetchNoWait for 2 (room left of 4)", f.semEspera, f.faltam)
	}
	drenar(f)
	if got := seqsDe(f.pendentes); !slices.Equal(got, seqs[:4]) {
		t.Fatalf("gathered %v, want %v", got, seqs[:4])
	}
	if f.podePedir() || !f.cheio() {
		t.Fatal("two batches gathered: should be full")
	}
	f.entregues(len(f.oferta()))
	if !f.pedir(ctx) {
		t.Fatal("third request failed")
	}
	drenar(f)
	if got := seqsDe(f.pendentes); !slices.Equal(got, seqs[2:]) {
		t.Fatalf("after handing a batch over: %v, want %v", got, seqs[2:])
	}
	if !f.interrompido.IsZero() || f.falhas != 0 {
		t.Fatalf("no failure happened, yet interrompido=%v falhas=%d", f.interrompido, f.falhas)
	}
}

// A leader change retries at once, a second failure in a row backs off, a
// new leader's advisory drops that wait, a request the server ended itself
// clears the count, and the next delivery ends the pause it recorded.
func TestBuscadorFalhasERetomada(t *testing.T) {
	f := buscadorDeTeste(t, 4, nil)
	ctx := ctxTeste(t)
	if !f.consumidor(ctx) {
		t.Fatal("durable not found")
	}

	f.pedido = terminado(fmt.Errorf("fetch: %w", jetstream.ErrConsumerLeadershipChanged))
	f.terminou()
	if f.retomar != nil || !f.podePedir() {
		t.Fatal("after a leader change: should ask again at once")
	}
	if f.interrompido.IsZero() || f.motivo == "" {
		t.Fatal("the pause was not recorded")
	}
	inicio := f.interrompido

	f.pedido = terminado(nats.ErrNoResponders)
	f.terminou()
	if f.retomar == nil || f.podePedir() {
		t.Fatal("a second failure in a row: should wait before asking")
	}
	if f.falhas != 2 || f.interrompido != inicio {
		t.Fatalf("falhas=%d, pause from %v (want 2, still from %v)", f.falhas, f.interrompido, inicio)
	}
	// The durable's new leader: the next ask goes now.
	f.liderEleito("n2")
	if f.retomar != nil || !f.podePedir() || f.falhas != 0 {
		t.Fatal("after a new leader's advisory: should ask again at once")
	}
	f.pedido = terminado(nats.ErrNoResponders)
	f.terminou()
	select {
	case <-f.retomar:
		f.retomar = nil
	case <-time.After(prazo):
		t.Fatal("the wait after a failure never ended")
	}

	f.pedido = terminado(jetstream.ErrConsumerNotFound)
	f.terminou()
	if f.c != nil {
		t.Fatal("a durable not found is still used")
	}
	f.retomar = nil
	if !f.consumidor(ctx) {
		t.Fatal("durable not found again")
	}

	f.pedido = terminado(nats.ErrTimeout)
	f.terminou()
	if f.falhas != 0 || f.retomar != nil {
		t.Fatalf("an expired request is no failure: falhas=%d waiting=%v", f.falhas, f.retomar != nil)
	}
	if f.interrompido.IsZero() {
		t.Fatal("an empty request ended the pause: only a delivery does")
	}

	seq, _ := publicarAgenda(t, f.b)
	if !f.pedir(ctx) {
		t.Fatal("request failed")
	}
	drenar(f)
	if got := seqsDe(f.pendentes); !slices.Equal(got, []uint64{seq}) {
		t.Fatalf("gathered %v, want [%d]", got, seq)
	}
	if !f.interrompido.IsZero() || f.motivo != "" {
		t.Fatal("a delivery did not end the pause")
	}
}

// Stopping hands what was gathered back to the server for immediate
// redelivery: the next to ask gets it, not after AckWait (longer than the
// test's deadline).
func TestBuscadorDevolveAoParar(t *testing.T) {
	f := buscadorDeTeste(t, 4, func(c *Config) { c.AckWait = 3 * prazo })
	var seqs []uint64
	for range 3 {
		s, _ := publicarAgenda(t, f.b)
		seqs = append(seqs, s)
	}
	ctx := ctxTeste(t)
	if !f.pedir(ctx) {
		t.Fatal("request failed")
	}
	esperar(t, "three deliveries", func() bool {
		f.reunir()
		return len(f.pendentes) == 3
	})
	f.devolver()

	g := novoBuscador(f.b, context.Background(), logTeste())
	if !g.pedir(ctx) {
		t.Fatal("request failed")
	}
	esperar(t, "the three delivered again", func() bool {
		g.reunir()
		return len(g.pendentes) == 3
	})
	if got := seqsDe(g.pendentes); !slices.Equal(got, seqs) {
		t.Fatalf("delivered again %v, want %v", got, seqs)
	}
	for _, r := range g.pendentes {
		if r.entregas != 2 {
			t.Fatalf("seq %d: delivery %d, want 2", r.seq, r.entregas)
		}
	}
}

// A new stream leader marks a pause, for the failover timeline, that the
// next delivery ends; it does not stop the loop from asking.
func TestBuscadorEleicaoDoStreamMarcaAParada(t *testing.T) {
	f := buscadorDeTeste(t, 4, nil)
	f.liderStreamEleito("n1")
	if f.interrompido.IsZero() || !strings.Contains(f.motivo, "líder do stream eleito") {
		t.Fatalf("pause not recorded: %v %q", f.interrompido, f.motivo)
	}
	if !f.podePedir() {
		t.Fatal("a stream election kept the loop from asking")
	}
	seq, _ := publicarAgenda(t, f.b)
	if !f.pedir(ctxTeste(t)) {
		t.Fatal("request failed")
	}
	drenar(f)
	if got := seqsDe(f.pendentes); !slices.Equal(got, []uint64{seq}) || !f.interrompido.IsZero() {
		t.Fatalf("gathered %v (want [%d]); pause still open: %v", got, seq, !f.interrompido.IsZero())
	}
}
