package bus

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/formigueiro/d6a/internal/bus/bustest"
	"github.com/formigueiro/d6a/internal/evento"
)

// The base knows the stream's latest message without a request per
// draw, vouches for it while the stream is quiet, and refuses to vouch once
// the bus is gone for longer than the base may lag (CONTRACT §4).
func TestBaseSegueOStream(t *testing.T) {
	t.Parallel()
	url, srv := bustest.Start(t)
	b := novoBus(t, url, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := b.IniciarBase(ctx)

	for range 3 {
		publicarAgenda(t, b)
	}
	seq, id := publicarAgenda(t, b)
	esperar(t, "base at the last message", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.seq == seq
	})
	// A quiet stream: still vouched for after the lag bound.
	time.Sleep(AtrasoMaximoBase + 2*confirmarACada)
	got, gotSeq, err := f.LastEventID(ctxTeste(t))
	if err != nil || got != id || gotSeq != seq {
		t.Fatalf("LastEventID on a quiet stream = %q, %d, %v; want %q, %d", got, gotSeq, err, id, seq)
	}

	srv.Shutdown()
	srv.WaitForShutdown()
	time.Sleep(AtrasoMaximoBase + confirmarACada)
	if _, _, err := f.LastEventID(ctxTeste(t)); !errors.Is(err, ErrBaseAtrasada) {
		t.Fatalf("LastEventID with the bus gone for longer than the lag bound: %v, want ErrBaseAtrasada", err)
	}
}

// Without asking the stream, the base knows every message delivered to a
// consumer (before its handler runs: a draw's own input is never newer than
// its base) and every result published, at its ack.
func TestBaseAprendeDeEntregasEPublicacoes(t *testing.T) {
	t.Parallel()
	url, _ := bustest.Start(t)
	b := novoBus(t, url, nil)
	consumidores(t, b)
	f := &Base{b: b} // no polling: only deliveries and acks teach it
	b.base.Store(f)
	conhecida := func() (string, uint64) {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.id, f.seq
	}

	vistas := make(chan [2]uint64, 1)
	stop := consumir(t, b, HandlerFunc(func(_ context.Context, ev evento.Evento, seq uint64) error {
		_, s := conhecida()
		vistas <- [2]uint64{seq, s}
		return nil
	}))
	defer stop()
	seq, id := publicarAgenda(t, b)
	v := <-vistas
	if v[0] != seq || v[1] != seq {
		t.Fatalf("handler of seq %d ran with the base at %d, want the delivered message known first", v[0], v[1])
	}
	if got, _ := conhecida(); got != id {
		t.Fatalf("base id %q after the delivery, want %q", got, id)
	}

	env := agenda()
	pubID := env["event_id"].(string)
	data, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	ack := b.PublishAsync(evento.ConselheiroSorteado.Subject(b.cfg.Prefix), pubID, 0, data)
	pubSeq, err := ack(ctxTeste(t))
	if err != nil {
		t.Fatal(err)
	}
	if got, s := conhecida(); got != pubID || s != pubSeq {
		t.Fatalf("base %q at %d after the publish ack, want %q at %d", got, s, pubID, pubSeq)
	}
	// Not vouched for: only the stream's own answer does that.
	if !f.confirmada.IsZero() {
		t.Fatal("a delivery or an ack vouched for the lag bound")
	}
}

// A head answer vouches for the base when the base is at or past it, and
// moves it when the stream is ahead.
func TestBaseAdotarCabeca(t *testing.T) {
	t.Parallel()
	f := &Base{}
	f.adotar("a", 5, time.Time{})
	t1 := time.Now()
	f.adotar("h", 4, t1) // asked before the base learnt 5: still vouches
	if f.id != "a" || f.seq != 5 || !f.confirmada.Equal(t1) {
		t.Fatalf("after an older head: %q at %d, confirmed %v", f.id, f.seq, f.confirmada)
	}
	f.adotar("x", 3, time.Time{})
	t2 := t1.Add(time.Millisecond)
	f.adotar("h2", 9, t2)
	if f.id != "h2" || f.seq != 9 || !f.confirmada.Equal(t2) {
		t.Fatalf("after a newer head: %q at %d, confirmed %v", f.id, f.seq, f.confirmada)
	}
	f.adotar("h1", 8, t1) // a slow answer from before does not go back
	if f.id != "h2" || !f.confirmada.Equal(t2) {
		t.Fatalf("a late answer moved the base: %q, confirmed %v", f.id, f.confirmada)
	}
}
