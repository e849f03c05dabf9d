package outbox_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/outbox"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// barramento records publications and fails on demand; the database under
// the relay is real.
type barramento struct {
	mu       sync.Mutex
	falharEm int // fail the n-th publish (1-based); 0 never
	chamadas int
	ids      []string
	subjects []string
}

func (b *barramento) Publish(_ context.Context, subject, eventID string, _ []byte) (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.chamadas++
	if b.falharEm > 0 && b.chamadas >= b.falharEm {
		return 0, errors.New("nats: no servers available")
	}
	b.ids = append(b.ids, eventID)
	b.subjects = append(b.subjects, subject)
	return uint64(len(b.ids)), nil
}

func enfileirar(t *testing.T, st *store.Store, n int) []uuid.UUID {
	t.Helper()
	var ids []uuid.UUID
	for i := 0; i < n; i++ {
		id := uuid.New()
		err := st.InTx(context.Background(), func(tx store.Tx) error {
			corr := "c"
			return tx.InserirOutbox(context.Background(), store.InserirOutboxParams{
				EventID: id, Tipo: "conselheiro.sorteado", Subject: "eventos.conselheiro.sorteado",
				CorrelacaoID: &corr, Envelope: []byte(`{"event_id":"` + id.String() + `"}`), Agora: time.Now(),
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func pendentes(t *testing.T, st *store.Store) int64 {
	t.Helper()
	n, err := st.Read().ContarOutboxPendentes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPublicaEmOrdemComMsgIDEMarca(t *testing.T) {
	t.Parallel()
	st := pgtest.New(t)
	ids := enfileirar(t, st, 5)
	bus := &barramento{}
	r := outbox.New(st, bus, time.Hour, nil)
	n, err := r.Pass(context.Background())
	if err != nil || n != 5 {
		t.Fatalf("Pass = %d, %v", n, err)
	}
	for i, id := range ids {
		if bus.ids[i] != id.String() {
			t.Fatalf("publication %d has msg id %s, want %s (queue order)", i, bus.ids[i], id)
		}
	}
	if pendentes(t, st) != 0 {
		t.Fatal("rows left unpublished")
	}
	row, err := st.Read().BuscarOutboxPorEventId(context.Background(), ids[4])
	if err != nil || row.Sequence == nil || *row.Sequence != 5 || row.PublicadoEm == nil {
		t.Fatalf("row not marked with its stream sequence: %+v %v", row, err)
	}
	// Nothing is published twice.
	if n, _ := r.Pass(context.Background()); n != 0 || len(bus.ids) != 5 {
		t.Fatalf("second pass published %d (total %d)", n, len(bus.ids))
	}
}

func TestFalhaNoMeioGuardaOPublicadoERetentaORestante(t *testing.T) {
	t.Parallel()
	st := pgtest.New(t)
	ids := enfileirar(t, st, 4)
	bus := &barramento{falharEm: 3}
	r := outbox.New(st, bus, time.Hour, nil)
	n, err := r.Pass(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("Pass with the bus failing at the 3rd = %d, %v; want 2 published and kept", n, err)
	}
	if pendentes(t, st) != 2 {
		t.Fatalf("pending = %d, want 2", pendentes(t, st))
	}
	// Bus still down: error, nothing lost.
	if _, err := r.Pass(context.Background()); err == nil {
		t.Fatal("Pass with the bus down returned nil")
	}
	bus.mu.Lock()
	bus.falharEm = 0
	bus.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(bus.ids) != 4 || bus.ids[2] != ids[2].String() || bus.ids[3] != ids[3].String() {
		t.Fatalf("published %v, want all four once in order", bus.ids)
	}
}

func TestRunRetentaAteOBarramentoVoltar(t *testing.T) {
	t.Parallel()
	st := pgtest.New(t)
	enfileirar(t, st, 3)
	bus := &barramento{falharEm: 1}
	r := outbox.New(st, bus, 20*time.Millisecond, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Run(ctx)
	// While the bus fails, the rows stay queued.
	deadline := time.Now().Add(10 * time.Second)
	for {
		bus.mu.Lock()
		c := bus.chamadas
		bus.mu.Unlock()
		if c >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("relay did not retry")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if pendentes(t, st) != 3 {
		t.Fatal("rows lost while the bus was down")
	}
	bus.mu.Lock()
	bus.falharEm = 0
	bus.mu.Unlock()
	r.Wake()
	for pendentes(t, st) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("relay did not catch up after the bus came back")
		}
		time.Sleep(10 * time.Millisecond)
	}
	bus.mu.Lock()
	defer bus.mu.Unlock()
	if len(bus.ids) != 3 {
		t.Fatalf("published %d, want 3", len(bus.ids))
	}
}
