package bus

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/bus/bustest"
	"github.com/formigueiro/d6a/internal/evento"
)

// CONTRACT §3 "Stream order": one durable carries every consumed type, so
// the handler sees messages of different types in stream order, whatever
// the mix. With per-type durables a cycle end and the agenda item published
// after it could be handled in either order.
func TestEntradasEmOrdemDoStream(t *testing.T) {
	t.Parallel()
	url, _ := bustest.Start(t)
	b := novoBus(t, url, nil)
	consumidores(t, b)
	g := &gravador{}
	var esperado []uint64
	for i := range 40 {
		if i%2 == 0 {
			seq, _ := publicarAgenda(t, b)
			esperado = append(esperado, seq)
			continue
		}
		env := bustest.Envelope(evento.CicloConcluido, map[string]any{
			"conselheiro_id": uuid.NewString(), "demanda_id": uuid.NewString(), "motivo_encerramento": "concluido",
		})
		esperado = append(esperado, bustest.Publicar(t, b.JetStream(), evento.CicloConcluido.Subject(b.cfg.Prefix), env))
	}
	consumir(t, b, g)
	esperar(t, "all 40", func() bool { return len(g.lista()) >= 40 })
	if got := g.seqs(); !slices.Equal(got, esperado) {
		t.Fatalf("handler saw %v, want stream order %v", got, esperado)
	}
}

// A bus that a version with per-type durables consumed: d6a-entradas starts
// where the least advanced of them has everything acknowledged, so nothing
// is skipped, and the per-type durables are deleted.
func TestEntradasMigraDosDuraveisPorTipo(t *testing.T) {
	t.Parallel()
	b := busComAgendas(t, 5)
	ctx := ctxTeste(t)
	antigo := func(tipo evento.Tipo, desde uint64) jetstream.Consumer {
		c, err := b.JetStream().CreateConsumer(ctx, "EVENTOS", jetstream.ConsumerConfig{
			Durable: tipo.Durable(), FilterSubject: tipo.Subject(b.cfg.Prefix), AckPolicy: jetstream.AckExplicitPolicy,
			DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: desde,
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	agendaAntigo := antigo(evento.AgendaItemDisponivel, 1)
	antigo(evento.CicloConcluido, 6) // at the head
	// The old agenda durable applied and acknowledged 1 and 2.
	lote, err := agendaAntigo.Fetch(2, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for m := range lote.Messages() {
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
	}
	consumidores(t, b)
	info := infoConsumidor(t, b)
	if info.Paused || info.NumPending != 3 {
		t.Fatalf("d6a-entradas paused %v with %d pending; want it at sequence 3 (3 to deliver)", info.Paused, info.NumPending)
	}
	for _, tipo := range []evento.Tipo{evento.AgendaItemDisponivel, evento.CicloConcluido} {
		if _, err := b.JetStream().Consumer(ctx, "EVENTOS", tipo.Durable()); err == nil {
			t.Errorf("per-type durable %s left behind", tipo.Durable())
		}
	}
	g := &gravador{}
	consumir(t, b, g)
	esperar(t, "3 to 5", func() bool { return len(g.lista()) >= 3 })
	if got := g.seqs(); !slices.Equal(got, []uint64{3, 4, 5}) {
		t.Fatalf("handler saw %v, want 3, 4, 5", got)
	}
}
