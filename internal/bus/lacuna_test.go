package bus

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/bus/bustest"
	"github.com/formigueiro/d6a/internal/evento"
)

// CONTRACT §3 "Stream order" when a delivery goes missing: the server hands
// message 4 to a pull request this instance never reads (here a thief's on
// the same durable, as another instance or a request nats.go closed at its
// own timeout would take it). Message 5 then arrives with a gap in the
// consumer sequence, and message 4 must be applied before it, read from the
// stream, not AckWait later.
func TestEntregaPerdidaLidaDoStream(t *testing.T) {
	t.Parallel()
	url, _ := bustest.Start(t)
	var lidas atomic.Int64
	b := novoBus(t, url, func(c *Config) {
		c.Lote = 1 // gathers two ahead, then stops asking
		c.AckWait = time.Minute
		c.AoLerLacuna = func(n int) { lidas.Add(int64(n)) }
	})
	consumidores(t, b)
	soltar := make(chan struct{})
	var seqs []uint64
	segura := &bloqueador{soltar: soltar, g: &gravador{}}
	seqs = append(seqs, publicarSeq(t, b))
	consumir(t, b, segura)
	esperar(t, "the first message in the handler", func() bool { return segura.comecou.Load() })
	seqs = append(seqs, publicarSeq(t, b), publicarSeq(t, b))
	esperar(t, "messages 2 and 3 gathered ahead", func() bool { return infoConsumidor(t, b).NumAckPending == 3 })

	// The thief takes message 4's delivery and never acknowledges it.
	seqs = append(seqs, roubarProxima(t, b))

	seqs = append(seqs, publicarSeq(t, b))
	close(soltar)
	esperar(t, "five messages handled", func() bool { return len(segura.g.lista()) >= 5 })
	if got := segura.g.seqs()[:5]; !slices.Equal(got, seqs) {
		t.Fatalf("handler saw %v, want stream order %v", got, seqs)
	}
	if n := lidas.Load(); n != 1 {
		t.Fatalf("AoLerLacuna counted %d messages read from the stream, want 1", n)
	}
}

// bloqueador records each call and holds the first until soltar closes.
type bloqueador struct {
	soltar  chan struct{}
	comecou atomic.Bool
	g       *gravador
}

func (h *bloqueador) Handle(ctx context.Context, ev evento.Evento, seq uint64) error {
	if !h.comecou.Swap(true) {
		<-h.soltar
	}
	return h.g.Handle(ctx, ev, seq)
}

func publicarSeq(t *testing.T, b *Bus) uint64 {
	seq, _ := publicarAgenda(t, b)
	return seq
}

// The same after a restart: a process that is gone (here a thief on the
// durable, as a killed instance) holds a delivery unacknowledged, and a new
// consumer's first delivery is the message after it. The new consumer
// stands at the durable's acknowledged floor, so the message held is read
// from the stream and applied first, not AckWait later: on a durable that
// had acknowledged message 1 (the thief holds 2), and on a fresh one (the
// thief holds the very first message).
func TestEntregaPerdidaAntesDoInicio(t *testing.T) {
	t.Parallel()
	for _, caso := range []struct {
		nome       string
		consumidas int
	}{{"floor at message 1", 1}, {"fresh durable", 0}} {
		t.Run(caso.nome, func(t *testing.T) {
			t.Parallel()
			entregaPerdidaAntesDoInicio(t, caso.consumidas)
		})
	}
}

func entregaPerdidaAntesDoInicio(t *testing.T, consumidas int) {
	url, _ := bustest.Start(t)
	var lidas atomic.Int64
	b := novoBus(t, url, func(c *Config) {
		c.AckWait = time.Minute
		c.AoLerLacuna = func(n int) { lidas.Add(int64(n)) }
	})
	consumidores(t, b)
	g := &gravador{}
	var seqs []uint64
	if consumidas > 0 {
		seqs = append(seqs, publicarSeq(t, b))
		parar := consumir(t, b, g)
		esperarAck(t, b, seqs[0])
		parar()
	}

	seqs = append(seqs, roubarProxima(t, b))
	seqs = append(seqs, publicarSeq(t, b))

	consumir(t, b, g)
	esperar(t, "every message handled", func() bool { return len(g.lista()) >= len(seqs) })
	if got := g.seqs()[:len(seqs)]; !slices.Equal(got, seqs) {
		t.Fatalf("handler saw %v, want stream order %v", got, seqs)
	}
	if n := lidas.Load(); n != 1 {
		t.Fatalf("AoLerLacuna counted %d messages read from the stream, want 1", n)
	}
}

// roubarProxima publishes a message and takes its delivery on the durable
// as a thief (another instance, a killed process) that never acknowledges
// it; it returns the message's stream sequence.
func roubarProxima(t *testing.T, b *Bus) uint64 {
	t.Helper()
	c, err := b.JetStream().Consumer(ctxTeste(t), b.cfg.Stream, evento.DurableEntradas)
	if err != nil {
		t.Fatal(err)
	}
	seq := publicarSeq(t, b)
	roubo, err := c.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var roubada uint64
	for m := range roubo.Messages() {
		md, _ := m.Metadata()
		roubada = md.Sequence.Stream
	}
	if roubada != seq {
		t.Fatalf("the thief got stream sequence %d, want %d", roubada, seq)
	}
	return seq
}
