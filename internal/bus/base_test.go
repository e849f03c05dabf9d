package bus

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/formigueiro/d6a/internal/bus/bustest"
)

// The follower knows the stream's latest message without a request per
// draw, vouches for it while the stream is quiet, and refuses to vouch once
// the bus is gone for longer than the base may lag (CONTRACT §4).
func TestBaseSegueOStream(t *testing.T) {
	t.Parallel()
	url, srv := bustest.Start(t)
	b := novoBus(t, url, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := b.SeguirBase(ctx)

	for range 3 {
		publicarAgenda(t, b)
	}
	seq, id := publicarAgenda(t, b)
	esperar(t, "follower at the last message", func() bool {
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
