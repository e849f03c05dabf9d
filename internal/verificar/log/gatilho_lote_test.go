package log

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/bus/bustest"
)

// The messages a tile's records name, read in bulk (lerEmLote over a real
// JetStream stream), answer exactly as one GetMsg each does: the same
// bytes, subject and stored time, and the same failure for a message the
// stream no longer holds, one past its end and one far from the rest.
func TestLerEmLoteIgualAoGetMsg(t *testing.T) {
	url, _ := bustest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := bus.Connect(ctx, bus.Config{URL: url, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.EnsureStream(ctx); err != nil {
		t.Fatal(err)
	}
	js := bustest.Connect(t, url)
	for i := range 300 {
		bustest.Publicar(t, js, "eventos.agenda.item_disponivel", map[string]any{"event_id": fmt.Sprintf("evt-%d", i)})
	}
	s, err := js.Stream(ctx, "EVENTOS")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMsg(ctx, 40); err != nil {
		t.Fatal(err)
	}
	seqs := []uint64{3, 5, 5, 6, 40, 41, 150, 37, 260, 301, 299, 300}
	lido := lerEmLote(ctx, b, append([]uint64(nil), seqs...))
	bl, ok := lido.(barramentoLido)
	if !ok {
		t.Fatalf("lerEmLote over *bus.Bus gave %T", lido)
	}
	// The runs (3 to 41, 260 to 301; LacunaLote 64) were read, less the
	// deleted message and the one past the end; 150, alone, was not.
	for _, seq := range []uint64{3, 5, 6, 37, 41, 260, 299, 300} {
		if _, ok := bl.lidas[seq]; !ok {
			t.Errorf("sequence %d not read in bulk", seq)
		}
	}
	for _, seq := range []uint64{40, 150, 301} {
		if _, ok := bl.lidas[seq]; ok {
			t.Errorf("sequence %d read in bulk", seq)
		}
	}
	for _, seq := range seqs {
		d1, s1, t1, e1 := lido.MsgPorSequencia(ctx, seq)
		d2, s2, t2, e2 := b.MsgPorSequencia(ctx, seq)
		if !bytes.Equal(d1, d2) || s1 != s2 || !t1.Equal(t2) || (e1 == nil) != (e2 == nil) {
			t.Errorf("sequence %d: bulk %q %q %v %v; GetMsg %q %q %v %v", seq, d1, s1, t1, e1, d2, s2, t2, e2)
		}
	}
	if e := seqs[4]; e != 40 {
		t.Fatal("test's deleted sequence moved")
	}
	if _, _, _, err := lido.MsgPorSequencia(ctx, 40); err == nil {
		t.Error("a deleted message answered")
	}
}
