package atribuicao

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/formigueiro/d6a/internal/beacon"
	"github.com/formigueiro/d6a/internal/evento"
)

// rodadasNoTempo serves a private chain's rounds once their publish time
// has come, as a beacon relay does, and counts the waits.
type rodadasNoTempo struct {
	p       *beacon.Privado
	mu      sync.Mutex
	esperas []uint64
}

func (f *rodadasNoTempo) Esperar(ctx context.Context, r uint64) (beacon.Rodada, error) {
	f.mu.Lock()
	f.esperas = append(f.esperas, r)
	f.mu.Unlock()
	select {
	case <-ctx.Done():
		return beacon.Rodada{}, ctx.Err()
	case <-time.After(time.Until(f.p.Cadeia().PublicadaEm(r))):
	}
	return f.p.Assinar(r), nil
}

func (f *rodadasNoTempo) Rodadas(_ context.Context, rs []uint64) (map[uint64]beacon.Rodada, error) {
	m := map[uint64]beacon.Rodada{}
	for _, r := range rs {
		if !f.p.Cadeia().PublicadaEm(r).After(time.Now()) {
			m[r] = f.p.Assinar(r)
		}
	}
	return m, nil
}

// The head of a batch waits for its round; every unit owed that same
// round is decided with it, and a unit owed a later one is left for the
// next call. Deciding the head alone made a one-unit transaction at every
// round boundary of a burst.
func TestProntasJuntaARodadaDaCabeca(t *testing.T) {
	p := beacon.NovoPrivado([]byte("prontas"), time.Now().Add(-time.Minute).Unix(), time.Second)
	cadeia := p.Cadeia()
	fonte := &rodadasNoTempo{p: p}
	b := &Beacon{Fonte: fonte, Cadeia: cadeia}
	// The first round published at least 300 ms from now: the head waits.
	futura := cadeia.PrimeiraApos(time.Now().Add(300 * time.Millisecond))
	em := cadeia.PublicadaEm(futura)
	armazenados := []time.Time{
		em.Add(-600 * time.Millisecond), // owes futura
		em.Add(-100 * time.Millisecond), // owes futura
		em.Add(100 * time.Millisecond),  // owes futura+1, not out when futura is
	}
	evs := make([]evento.Evento, len(armazenados))
	for i, a := range armazenados {
		evs[i] = evento.Evento{Envelope: evento.Envelope{Tipo: evento.AgendaItemDisponivel}, Armazenado: a}
	}
	js := make([]job, len(evs))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := b.prontas(ctx, slog.New(slog.DiscardHandler), evs, js)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("prontas gave %d units their rounds, want 2 (the head and the unit of the same round)", n)
	}
	for k := range 2 {
		if js[k].rodada == nil || js[k].rodada.Numero != int64(futura) {
			t.Fatalf("unit %d: round %+v, want %d", k, js[k].rodada, futura)
		}
	}
	if js[2].rodada != nil {
		t.Fatalf("unit 2 got round %d before it was out", js[2].rodada.Numero)
	}
	if len(fonte.esperas) != 1 || fonte.esperas[0] != futura {
		t.Fatalf("waits %v, want one for round %d", fonte.esperas, futura)
	}
}
