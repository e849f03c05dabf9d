package bus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/bus/bustest"
	"github.com/formigueiro/d6a/internal/evento"
)

const prazo = 10 * time.Second

func logTeste() *slog.Logger {
	if os.Getenv("D6A_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func ctxTeste(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), prazo)
	t.Cleanup(cancel)
	return ctx
}

// novoBus connects to url with fast test settings and ensures the streams.
func novoBus(t *testing.T, url string, mod func(*Config)) *Bus {
	t.Helper()
	cfg := Config{
		URL:         url,
		MaxEntregas: 5,
		Backoff:     []time.Duration{20 * time.Millisecond},
		Espera:      100 * time.Millisecond,
		Drenagem:    5 * time.Second,
		Logger:      logTeste(),
	}
	if mod != nil {
		mod(&cfg)
	}
	b, err := Connect(ctxTeste(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if err := b.EnsureStream(ctxTeste(t)); err != nil {
		t.Fatal(err)
	}
	return b
}

// visto is one handler call.
type visto struct {
	seq     uint64
	eventID string
}

// gravador is a Handler that records its calls; falhar, when set, decides the
// result of each call from how often the message was seen before.
type gravador struct {
	mu     sync.Mutex
	vistos []visto
	falhar func(ev evento.Evento, vezes int) error
}

func (g *gravador) Handle(_ context.Context, ev evento.Evento, seq uint64) error {
	g.mu.Lock()
	vezes := 0
	for _, v := range g.vistos {
		if v.seq == seq {
			vezes++
		}
	}
	g.vistos = append(g.vistos, visto{seq, ev.EventID.String()})
	f := g.falhar
	g.mu.Unlock()
	if f != nil {
		return f(ev, vezes)
	}
	return nil
}

func (g *gravador) lista() []visto {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.vistos)
}

func (g *gravador) seqs() []uint64 {
	var s []uint64
	for _, v := range g.lista() {
		s = append(s, v.seq)
	}
	return s
}

// consumir runs b.Consumir until the returned stop is called (or cleanup).
func consumir(t *testing.T, b *Bus, h Handler) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	fim := make(chan error, 1)
	go func() { fim <- b.Consumir(ctx, h) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-fim:
				if err != nil {
					t.Errorf("Consumir: %v", err)
				}
			case <-time.After(prazo):
				t.Error("Consumir não retornou após o cancelamento")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// esperar polls cond until it holds, failing the test after prazo.
func esperar(t *testing.T, o string, cond func() bool) {
	t.Helper()
	limite := time.Now().Add(prazo)
	for !cond() {
		if time.Now().After(limite) {
			t.Fatalf("timed out waiting for %s", o)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func agenda() map[string]any {
	return bustest.Envelope(evento.AgendaItemDisponivel, map[string]any{
		"demanda_id": uuid.NewString(), "unidade_civica_id": uuid.NewString(),
		"categoria_id": "SAU", "nivel_precedencia": 1, "score_final": 10,
	})
}

func publicarAgenda(t *testing.T, b *Bus) (uint64, string) {
	t.Helper()
	env := agenda()
	seq := bustest.Publicar(t, b.JetStream(), evento.AgendaItemDisponivel.Subject(b.cfg.Prefix), env)
	return seq, env["event_id"].(string)
}

func infoConsumidor(t *testing.T, b *Bus) *jetstream.ConsumerInfo {
	t.Helper()
	c, err := b.JetStream().Consumer(ctxTeste(t), b.cfg.Stream, evento.DurableEntradas)
	if err != nil {
		t.Fatal(err)
	}
	return c.CachedInfo()
}

// busComAgendas starts a server and a bus whose stream already holds n
// agenda items, published before any consumer exists.
func busComAgendas(t *testing.T, n int) *Bus {
	t.Helper()
	url, _ := bustest.Start(t)
	b := novoBus(t, url, nil)
	for range n {
		publicarAgenda(t, b)
	}
	return b
}

// consumidores creates (or resumes) the durable consumers.
func consumidores(t *testing.T, b *Bus) {
	t.Helper()
	if err := b.EnsureConsumers(ctxTeste(t)); err != nil {
		t.Fatal(err)
	}
}

// esperarAck waits until the agenda consumer has acknowledged seq and has
// nothing in flight.
func esperarAck(t *testing.T, b *Bus, seq uint64) {
	t.Helper()
	esperar(t, "the ack", func() bool {
		info := infoConsumidor(t, b)
		return info.AckFloor.Stream == seq && info.NumAckPending == 0
	})
}

// esperarDLQ waits until the dead-letter stream holds exactly n messages
// and returns them.
func esperarDLQ(t *testing.T, b *Bus, o string, n int) []*jetstream.RawStreamMsg {
	t.Helper()
	var msgs []*jetstream.RawStreamMsg
	esperar(t, o, func() bool {
		msgs = bustest.LerMsgs(t, b.JetStream(), DLQStream, ">")
		return len(msgs) == n
	})
	return msgs
}

// interromperPosicionamento leaves the durable as a process that died
// between creating it and positioning it at stream sequence cabeca.
func interromperPosicionamento(t *testing.T, b *Bus, cabeca uint64) {
	t.Helper()
	cfg := b.configConsumidor()
	pausa := pausaPosicionamento
	cfg.PauseUntil = &pausa
	cfg.Metadata = map[string]string{metaCabeca: strconv.FormatUint(cabeca, 10)}
	if _, err := b.JetStream().CreateConsumer(ctxTeste(t), "EVENTOS", cfg); err != nil {
		t.Fatal(err)
	}
}

func TestEnsureStreamCriaComConfiguracao(t *testing.T) {
	t.Parallel()
	url, _ := bustest.Start(t)
	b := novoBus(t, url, nil)
	if err := b.EnsureStream(ctxTeste(t)); err != nil { // idempotent
		t.Fatal(err)
	}
	s, err := b.JetStream().Stream(ctxTeste(t), "EVENTOS")
	if err != nil {
		t.Fatal(err)
	}
	c := s.CachedInfo().Config
	if !slices.Equal(c.Subjects, []string{"eventos.>"}) || c.Storage != jetstream.FileStorage ||
		c.Retention != jetstream.LimitsPolicy || c.Duplicates != 2*time.Minute {
		t.Fatalf("EVENTOS config = %+v", c)
	}
	d, err := b.JetStream().Stream(ctxTeste(t), DLQStream)
	if err != nil {
		t.Fatal(err)
	}
	dc := d.CachedInfo().Config
	if !slices.Equal(dc.Subjects, []string{"d6a.dlq.>"}) || dc.Storage != jetstream.FileStorage || dc.Retention != jetstream.LimitsPolicy {
		t.Fatalf("D6A_DLQ config = %+v", dc)
	}
}

func TestEnsureStreamNaoAlteraExistente(t *testing.T) {
	t.Parallel()
	url, _ := bustest.Start(t)
	js := bustest.Connect(t, url)
	original := jetstream.StreamConfig{
		Name:       "EVENTOS",
		Subjects:   []string{"eventos.>", "outros.>"},
		Storage:    jetstream.MemoryStorage,
		MaxMsgs:    1000,
		Duplicates: 10 * time.Second,
	}
	if _, err := js.CreateStream(ctxTeste(t), original); err != nil {
		t.Fatal(err)
	}
	b := novoBus(t, url, nil)
	s, err := b.JetStream().Stream(ctxTeste(t), "EVENTOS")
	if err != nil {
		t.Fatal(err)
	}
	c := s.CachedInfo().Config
	if !slices.Equal(c.Subjects, original.Subjects) || c.Storage != jetstream.MemoryStorage ||
		c.MaxMsgs != 1000 || c.Duplicates != 10*time.Second {
		t.Fatalf("existing stream was altered: %+v", c)
	}
}

func TestConnectEmbutido(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := Connect(ctxTeste(t), Config{EmbeddedAddr: "127.0.0.1:-1", DataDir: dir, Logger: logTeste()})
	if err != nil {
		t.Fatal(err)
	}
	srv := b.Server()
	if srv == nil || !srv.JetStreamEnabled() || !srv.JetStreamConfig().SyncAlways {
		t.Fatalf("embedded server without JetStream SyncAlways: %+v", srv.JetStreamConfig())
	}
	if got := srv.JetStreamConfig().StoreDir; !strings.HasPrefix(got, dir+string(os.PathSeparator)+"nats") {
		t.Fatalf("store dir %q not under %s/nats", got, dir)
	}
	if err := b.EnsureStream(ctxTeste(t)); err != nil {
		t.Fatal(err)
	}
	consumidores(t, b)
	if err := b.Ready(ctxTeste(t)); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if srv.Running() {
		t.Fatal("Close left the embedded server running")
	}
}

func TestConsumidoresCriadosNaCabeca(t *testing.T) {
	t.Parallel()
	url, _ := bustest.Start(t)
	b := novoBus(t, url, nil)
	if err := b.Ready(ctxTeste(t)); err == nil {
		t.Fatal("Ready before the consumers exist")
	}
	for range 3 {
		publicarAgenda(t, b)
	}
	consumidores(t, b)
	consumidores(t, b) // existing ones resume
	if err := b.Ready(ctxTeste(t)); err != nil {
		t.Fatal(err)
	}
	info := infoConsumidor(t, b)
	c := info.Config
	var assuntos []string
	for _, tipo := range evento.Consumidos {
		assuntos = append(assuntos, tipo.Subject("eventos"))
	}
	if c.Durable != evento.DurableEntradas || !slices.Equal(c.FilterSubjects, assuntos) ||
		c.AckPolicy != jetstream.AckExplicitPolicy || c.MaxDeliver != 5 || c.AckWait != AckWaitPadrao ||
		c.DeliverPolicy != jetstream.DeliverAllPolicy || info.Paused {
		t.Fatalf("config = %+v (paused %v)", c, info.Paused)
	}
	if info.NumPending != 0 {
		t.Fatalf("%d pending; want the head", info.NumPending)
	}
	if p, err := b.Pending(ctxTeste(t)); err != nil || p != 0 {
		t.Fatalf("Pending = %v, %v", p, err)
	}

	g := &gravador{}
	consumir(t, b, g)
	seq, id := publicarAgenda(t, b)
	esperar(t, "the 4th message", func() bool { return len(g.lista()) >= 1 })
	// The three earlier messages would have come first: stream order.
	if got := g.lista(); len(got) != 1 || got[0].seq != seq || got[0].eventID != id || seq != 4 {
		t.Fatalf("handler saw %v, want only seq %d", got, seq)
	}
	esperar(t, "nothing pending", func() bool {
		p, err := b.Pending(ctxTeste(t))
		return err == nil && p == 0
	})

	// Replay from 1: all four again, in order.
	before, after, err := b.Replay(ctxTeste(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("replay: antes %s, depois %s", before, after)
	// The running Consumir keeps a pull request open for up to Lote
	// messages, which the server may serve between the reset and the
	// snapshot it answers with (nats-server's resetStartingSeq releases the
	// consumer's lock before o.info()): the answer can show the position
	// already back at 4, and once it showed delivered 4 with 4 pending
	// (1 run in 30). So the answer is checked only where it shows the
	// rewind; that all four come again, in order, is checked below.
	if before.StreamSeq != 4 || before.NumPending != 0 {
		t.Fatalf("position before replay: %s", before)
	}
	if after.StreamSeq < before.StreamSeq && after.StreamSeq+after.NumPending != 4 {
		t.Fatalf("replay positions: before %s, after %s", before, after)
	}
	esperar(t, "the replay", func() bool { return len(g.lista()) >= 5 })
	if got := g.seqs(); !slices.Equal(got, []uint64{4, 1, 2, 3, 4}) {
		t.Fatalf("after replay handler saw %v", got)
	}
	if ultimoEventID(t, b) != id {
		t.Fatal("LastEventID is not the 4th message's")
	}
}

func ultimoEventID(t *testing.T, b *Bus) string {
	t.Helper()
	id, _, err := b.LastEventID(ctxTeste(t))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestReplayRecriaQuandoResetRecusado(t *testing.T) {
	t.Parallel()
	b := busComAgendas(t, 4)
	consumidores(t, b)
	// The fallback path: recreate by start sequence 3.
	if err := b.recriar(ctxTeste(t), infoConsumidor(t, b).Config, 3); err != nil {
		t.Fatal(err)
	}
	info := infoConsumidor(t, b)
	if info.Config.DeliverPolicy != jetstream.DeliverByStartSequencePolicy || info.Config.OptStartSeq != 3 ||
		len(info.Config.FilterSubjects) != len(evento.Consumidos) || info.Config.MaxDeliver != 5 || info.NumPending != 2 {
		t.Fatalf("recreated consumer = %+v, pending %d", info.Config, info.NumPending)
	}
	// Such a consumer refuses a native reset below its start: Replay falls
	// back to recreating it again.
	if _, err := b.JetStream().ResetConsumerToSequence(ctxTeste(t), "EVENTOS", evento.DurableEntradas, 1); !errors.Is(err, jetstream.ErrConsumerInvalidReset) {
		t.Fatalf("reset below start sequence: %v", err)
	}
	if _, after, err := b.Replay(ctxTeste(t), 1); err != nil || after.NumPending != 4 {
		t.Fatalf("Replay = %s, %v", after, err)
	}
	g := &gravador{}
	consumir(t, b, g)
	esperar(t, "all four", func() bool { return len(g.lista()) >= 4 })
	if got := g.seqs(); !slices.Equal(got, []uint64{1, 2, 3, 4}) {
		t.Fatalf("handler saw %v", got)
	}
}

func TestReplayErros(t *testing.T) {
	t.Parallel()
	url, _ := bustest.Start(t)
	b := novoBus(t, url, nil)
	publicarAgenda(t, b)
	if _, _, err := b.Replay(ctxTeste(t), 0); err == nil {
		t.Fatal("replay from 0")
	}
	// A missing durable is created at the wanted sequence.
	before, after, err := b.Replay(ctxTeste(t), 1)
	if err != nil || before != (ConsumerPos{}) {
		t.Fatalf("Replay = %s, %s, %v", before, after, err)
	}
	if info := infoConsumidor(t, b); info.Paused || info.Config.DeliverPolicy != jetstream.DeliverAllPolicy {
		t.Fatalf("created consumer: %+v", info)
	}
}

func TestPosicionamentoInterrompidoRetomado(t *testing.T) {
	t.Parallel()
	b := busComAgendas(t, 3)
	// A process that died between creating the consumer and positioning it.
	interromperPosicionamento(t, b, 3)
	consumidores(t, b)
	info := infoConsumidor(t, b)
	if info.Paused || info.NumPending != 1 {
		t.Fatalf("consumer paused %v, pending %d; want resumed at seq 3", info.Paused, info.NumPending)
	}
	g := &gravador{}
	consumir(t, b, g)
	esperar(t, "seq 3", func() bool { return len(g.lista()) >= 1 })
	if got := g.seqs(); !slices.Equal(got, []uint64{3}) {
		t.Fatalf("handler saw %v", got)
	}
}

func TestLastEventIDEMsgPorSequencia(t *testing.T) {
	t.Parallel()
	url, _ := bustest.Start(t)
	b := novoBus(t, url, nil)
	if _, _, err := b.LastEventID(ctxTeste(t)); !errors.Is(err, ErrVazio) {
		t.Fatalf("empty stream: %v", err)
	}
	publicarAgenda(t, b)
	seq, id := publicarAgenda(t, b)
	got, gotSeq, err := b.LastEventID(ctxTeste(t))
	if err != nil || got != id || gotSeq != seq {
		t.Fatalf("LastEventID = %q, %d, %v; want %q, %d", got, gotSeq, err, id, seq)
	}
	data, subject, quando, err := b.MsgPorSequencia(ctxTeste(t), seq)
	if err != nil || subject != "eventos.agenda.item_disponivel" || !bytes.Contains(data, []byte(id)) ||
		time.Since(quando) > time.Minute {
		t.Fatalf("MsgPorSequencia = %s, %s, %v, %v", data, subject, quando, err)
	}
	if _, _, _, err := b.MsgPorSequencia(ctxTeste(t), 99); err == nil {
		t.Fatal("MsgPorSequencia of a missing sequence")
	}
	// Garbage published last does not force the fallback: the base walks
	// back to the last well-formed envelope.
	bustest.Publicar(t, b.JetStream(), "eventos.outro", []byte("não é json"))
	bustest.Publicar(t, b.JetStream(), "eventos.outro", []byte(`{"event_id": 7}`))
	if got, s, err := b.LastEventID(ctxTeste(t)); err != nil || got != id || s != seq {
		t.Fatalf("last messages without event_id: %q, %d, %v; want %q, %d", got, s, err, id, seq)
	}
}

func TestFalhaTransitoriaNaoContaEntregas(t *testing.T) {
	t.Parallel()
	url, _ := bustest.Start(t)
	b := novoBus(t, url, func(c *Config) {
		c.MaxEntregas = 2
		c.Backoff = []time.Duration{10 * time.Millisecond}
	})
	consumidores(t, b)
	g := &gravador{falhar: func(ev evento.Evento, vezes int) error {
		if vezes < 6 { // well past MaxEntregas
			return Transitorio(errors.New("banco fora do ar"))
		}
		return nil
	}}
	consumir(t, b, g)
	seq, _ := publicarAgenda(t, b)
	esperarAck(t, b, seq)
	if got := g.seqs(); len(got) != 7 {
		t.Fatalf("handler called %d times, want 7 (6 transient failures, then success)", len(got))
	}
	if info := infoConsumidor(t, b); info.NumRedelivered != 0 {
		t.Fatalf("transient failures counted as redeliveries: %d", info.NumRedelivered)
	}
	if msgs := bustest.LerMsgs(t, b.JetStream(), DLQStream, ">"); len(msgs) != 0 {
		t.Fatalf("a transient failure was dead-lettered: %d messages in the DLQ", len(msgs))
	}
}

func TestPublishDeduplicaPorEventID(t *testing.T) {
	t.Parallel()
	url, _ := bustest.Start(t)
	b := novoBus(t, url, nil)
	id := uuid.NewString()
	data, _ := json.Marshal(bustest.Envelope(evento.ConselheiroSorteado, map[string]any{}))
	s1, err := b.Publish(ctxTeste(t), "eventos.conselheiro.sorteado", id, data)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := b.Publish(ctxTeste(t), "eventos.conselheiro.sorteado", id, data)
	if err != nil || s2 != s1 {
		t.Fatalf("second publish = %d, %v; want %d", s2, err, s1)
	}
	msgs := bustest.LerMsgs(t, b.JetStream(), "EVENTOS", ">")
	if len(msgs) != 1 || msgs[0].Header.Get("Nats-Msg-Id") != id {
		t.Fatalf("stream holds %d messages", len(msgs))
	}
	if _, err := b.Publish(ctxTeste(t), "fora.do.stream", uuid.NewString(), data); err == nil {
		t.Fatal("publish outside the bus stream succeeded")
	}
}

func TestInutilizavelVaiParaDLQ(t *testing.T) {
	t.Parallel()
	url, _ := bustest.Start(t)
	b := novoBus(t, url, nil)
	consumidores(t, b)
	g := &gravador{}
	consumir(t, b, g)
	ruim := agenda()
	ruim["payload"].(map[string]any)["demanda_id"] = "não-uuid"
	corpo, _ := json.Marshal(ruim)
	corpo = append(corpo, "  \n"...) // the copy must keep every byte
	subject := evento.AgendaItemDisponivel.Subject("eventos")
	seq := bustest.Publicar(t, b.JetStream(), subject, corpo)
	seqOk, _ := publicarAgenda(t, b)

	esperar(t, "the valid message", func() bool { return len(g.lista()) >= 1 })
	msgs := bustest.LerMsgs(t, b.JetStream(), DLQStream, "d6a.dlq.>")
	if len(msgs) != 1 {
		t.Fatalf("DLQ holds %d messages", len(msgs))
	}
	m := msgs[0]
	if m.Subject != "d6a.dlq.agenda.item_disponivel" || !bytes.Equal(m.Data, corpo) ||
		!strings.Contains(m.Header.Get(HeaderErro), "payload.demanda_id não é UUID") ||
		m.Header.Get(HeaderSubjectOriginal) != subject || m.Header.Get(HeaderSeqOriginal) != strconv.FormatUint(seq, 10) {
		t.Fatalf("dead letter %s %q %v", m.Subject, m.Data, m.Header)
	}
	if got := g.seqs(); !slices.Equal(got, []uint64{seqOk}) {
		t.Fatalf("handler saw %v", got)
	}
	esperar(t, "both acknowledged", func() bool {
		info := infoConsumidor(t, b)
		return info.AckFloor.Stream == seqOk && info.NumAckPending == 0 && info.NumRedelivered == 0
	})
}

func TestFalhaSempreVaiParaDLQAposMaxEntregas(t *testing.T) {
	t.Parallel()
	url, _ := bustest.Start(t)
	b := novoBus(t, url, func(c *Config) { c.MaxEntregas = 2 })
	consumidores(t, b)
	g := &gravador{falhar: func(evento.Evento, int) error { return errors.New("banco fora do ar") }}
	consumir(t, b, g)
	seq, _ := publicarAgenda(t, b)
	msgs := esperarDLQ(t, b, "the dead letter", 1)
	if e := msgs[0].Header.Get(HeaderErro); e != "falhou 2 entregas: banco fora do ar" {
		t.Fatalf("D6a-Erro = %q", e)
	}
	esperarAck(t, b, seq)
	if got := g.seqs(); !slices.Equal(got, []uint64{seq, seq}) {
		t.Fatalf("handler saw %v, want two deliveries", got)
	}
}

func TestFalhaUmaVezDepoisSucesso(t *testing.T) {
	t.Parallel()
	url, _ := bustest.Start(t)
	b := novoBus(t, url, nil)
	consumidores(t, b)
	var sucessos sync.Map
	g := &gravador{falhar: func(ev evento.Evento, vezes int) error {
		if vezes == 0 {
			return errors.New("transitório")
		}
		n, _ := sucessos.LoadOrStore(ev.EventID, new(int))
		*n.(*int)++
		return nil
	}}
	consumir(t, b, g)
	seq, id := publicarAgenda(t, b)
	esperarAck(t, b, seq)
	if got := g.seqs(); !slices.Equal(got, []uint64{seq, seq}) {
		t.Fatalf("handler saw %v", got)
	}
	n, _ := sucessos.Load(uuid.MustParse(id))
	if n == nil || *n.(*int) != 1 {
		t.Fatal("not processed exactly once")
	}
	if msgs := bustest.LerMsgs(t, b.JetStream(), DLQStream, ">"); len(msgs) != 0 {
		t.Fatalf("DLQ holds %d messages", len(msgs))
	}
}

func TestErroPermanenteVaiDiretoParaDLQ(t *testing.T) {
	t.Parallel()
	url, _ := bustest.Start(t)
	b := novoBus(t, url, nil)
	consumidores(t, b)
	g := &gravador{falhar: func(ev evento.Evento, _ int) error {
		if ev.Tipo == evento.DuplicidadeAgregada {
			panic("boom")
		}
		return Permanente(fmt.Errorf("violação: %w", errors.New("linha\ncom quebra")))
	}}
	consumir(t, b, g)
	seq, _ := publicarAgenda(t, b)
	bustest.Publicar(t, b.JetStream(), evento.DuplicidadeAgregada.Subject("eventos"),
		bustest.Envelope(evento.DuplicidadeAgregada, map[string]any{"agregado_id": uuid.NewString(), "representante_demanda_id": uuid.NewString()}))
	msgs := esperarDLQ(t, b, "two dead letters", 2)
	erros := map[string]string{}
	for _, m := range msgs {
		erros[m.Subject] = m.Header.Get(HeaderErro)
	}
	if erros["d6a.dlq.agenda.item_disponivel"] != "violação: linha com quebra" ||
		!strings.Contains(erros["d6a.dlq.duplicidade.agregada"], "panic no handler: boom") {
		t.Fatalf("dead letters: %v", erros)
	}
	if got := g.seqs(); len(got) != 2 || !slices.Contains(got, seq) {
		t.Fatalf("handler saw %v; want one delivery each", got)
	}
}

func TestDurableExistenteRetoma(t *testing.T) {
	t.Parallel()
	url, _ := bustest.Start(t)
	b := novoBus(t, url, nil)
	consumidores(t, b)
	g := &gravador{}
	stop := consumir(t, b, g)
	publicarAgenda(t, b)
	publicarAgenda(t, b)
	esperar(t, "two messages", func() bool { return len(g.lista()) >= 2 })
	stop()
	_ = b.Close()

	s3, _ := publicarAgendaCom(t, url)
	s4, _ := publicarAgendaCom(t, url)
	b2 := novoBus(t, url, nil)
	consumidores(t, b2)
	g2 := &gravador{}
	consumir(t, b2, g2)
	esperar(t, "the two new messages", func() bool { return len(g2.lista()) >= 2 })
	if got := g2.seqs(); !slices.Equal(got, []uint64{s3, s4}) {
		t.Fatalf("resumed consumer saw %v, want [%d %d]", got, s3, s4)
	}
}

func publicarAgendaCom(t *testing.T, url string) (uint64, string) {
	env := agenda()
	return bustest.Publicar(t, bustest.Connect(t, url), "eventos.agenda.item_disponivel", env), env["event_id"].(string)
}

func TestDrenagemTerminaMensagemEmMaos(t *testing.T) {
	t.Parallel()
	url, _ := bustest.Start(t)
	b := novoBus(t, url, nil)
	consumidores(t, b)
	dentro, solta := make(chan struct{}), make(chan struct{})
	var ctxCancelado bool
	g := &gravador{falhar: func(evento.Evento, int) error {
		close(dentro)
		<-solta
		return nil
	}}
	h := HandlerFunc(func(ctx context.Context, ev evento.Evento, seq uint64) error {
		err := g.Handle(ctx, ev, seq)
		ctxCancelado = ctx.Err() != nil
		return err
	})
	stop := consumir(t, b, h)
	seq, _ := publicarAgenda(t, b)
	publicarAgenda(t, b)
	<-dentro
	parado := make(chan struct{})
	go func() { stop(); close(parado) }()
	select {
	case <-parado:
		t.Fatal("Consumir returned with a handler call in progress")
	case <-time.After(200 * time.Millisecond):
	}
	close(solta)
	<-parado
	if ctxCancelado {
		t.Fatal("handler context cancelled during the drain")
	}
	if got := g.seqs(); !slices.Equal(got, []uint64{seq}) {
		t.Fatalf("handler saw %v", got)
	}
	// The ack was flushed before Consumir returned; the server applies it
	// to the consumer's state asynchronously.
	esperar(t, "the ack of the message in hand", func() bool {
		return infoConsumidor(t, b).AckFloor.Stream == seq
	})
}

func TestAvisoMaxEntregasVaiParaDLQ(t *testing.T) {
	t.Parallel()
	url, _ := bustest.Start(t)
	b := novoBus(t, url, func(c *Config) { c.MaxEntregas = 1; c.AckWait = time.Second })
	consumidores(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.vigiarMaxEntregas(ctx)
	// Let the advisory subscription reach the server.
	if err := b.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	seq, _ := publicarAgenda(t, b)
	c, err := b.JetStream().Consumer(ctxTeste(t), "EVENTOS", evento.DurableEntradas)
	if err != nil {
		t.Fatal(err)
	}
	// A delivery that is never acknowledged, as after a crash.
	lote, err := c.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for range lote.Messages() {
	}
	var msgs []*jetstream.RawStreamMsg
	esperar(t, "the dead letter", func() bool {
		// Pulls give the server the chance to notice the expiry.
		if l, err := c.FetchNoWait(1); err == nil {
			for range l.Messages() {
			}
		}
		msgs = bustest.LerMsgs(t, b.JetStream(), DLQStream, ">")
		return len(msgs) == 1
	})
	if !strings.Contains(msgs[0].Header.Get(HeaderErro), "excedeu 1 entregas") ||
		msgs[0].Header.Get(HeaderSeqOriginal) != strconv.FormatUint(seq, 10) {
		t.Fatalf("dead letter headers %v", msgs[0].Header)
	}
}

func TestDeadLetterSubjectECabecalhos(t *testing.T) {
	t.Parallel()
	url, _ := bustest.Start(t)
	b := novoBus(t, url, nil)
	longo := strings.Repeat("é", 1000) + "\r\nfim"
	if err := b.DeadLetter(ctxTeste(t), "", "eventos.foo.bar", 7, []byte{0, 1, 2}, longo); err != nil {
		t.Fatal(err)
	}
	// Same original sequence: deduplicated.
	if err := b.DeadLetter(ctxTeste(t), "", "eventos.foo.bar", 7, []byte{0, 1, 2}, "outra vez"); err != nil {
		t.Fatal(err)
	}
	msgs := bustest.LerMsgs(t, b.JetStream(), DLQStream, ">")
	if len(msgs) != 1 {
		t.Fatalf("DLQ holds %d messages", len(msgs))
	}
	m := msgs[0]
	e := m.Header.Get(HeaderErro)
	if m.Subject != "d6a.dlq.bar" || !bytes.Equal(m.Data, []byte{0, 1, 2}) || len(e) > 1024 ||
		strings.ContainsAny(e, "\r\n") || !strings.HasPrefix(e, "éé") ||
		m.Header.Get("Nats-Msg-Id") != "dlq-EVENTOS-7" {
		t.Fatalf("dead letter %s %v", m.Subject, m.Header)
	}
}

func TestSobreviveReinicioDoServidor(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, err := StartEmbedded("127.0.0.1:0", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !srv.JetStreamConfig().SyncAlways {
		t.Fatal("embedded server does not sync always")
	}
	addr := srv.Addr().String()
	url := srv.ClientURL()
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
	b := novoBus(t, url, nil)
	consumidores(t, b)
	g := &gravador{}
	consumir(t, b, g)
	s1, _ := publicarAgenda(t, b)
	esperar(t, "the first message", func() bool { return len(g.lista()) == 1 })

	srv.Shutdown()
	srv.WaitForShutdown()
	if srv, err = StartEmbedded(addr, dir); err != nil {
		t.Fatal(err)
	}
	esperar(t, "the reconnection", func() bool { return b.Ready(ctxTeste(t)) == nil })
	s2, _ := publicarAgenda(t, b)
	esperar(t, "the second message", func() bool { return len(g.lista()) >= 2 })
	if got := g.seqs(); !slices.Equal(got, []uint64{s1, s2}) || s2 != s1+1 {
		t.Fatalf("handler saw %v", got)
	}
}

func TestReplaySobrePosicionamentoInterrompido(t *testing.T) {
	t.Parallel()
	b := busComAgendas(t, 3)
	interromperPosicionamento(t, b, 4)
	if _, _, err := b.Replay(ctxTeste(t), 1); err != nil {
		t.Fatal(err)
	}
	// The replay wins over the interrupted positioning at 4.
	consumidores(t, b)
	if info := infoConsumidor(t, b); info.Paused || info.NumPending != 3 {
		t.Fatalf("paused %v, pending %d; want the replay from 1", info.Paused, info.NumPending)
	}
}

func TestConfigPadroes(t *testing.T) {
	c := Config{}.WithDefaults()
	if c.EmbeddedAddr != "127.0.0.1:4222" || c.DataDir != "./.data" || c.Stream != "EVENTOS" ||
		c.Prefix != "eventos" || c.MaxEntregas != 5 || c.AckWait != 5*time.Second || c.Pulsacao != 0 || c.Logger == nil {
		t.Fatalf("defaults = %+v", c)
	}
	for n, want := range map[uint64]time.Duration{0: time.Second, 1: time.Second, 2: 2 * time.Second, 4: 10 * time.Second, 9: 30 * time.Second} {
		if got := c.espera(n); got != want {
			t.Errorf("espera(%d) = %s, want %s", n, got, want)
		}
	}
	for n := range 20 {
		if d := esperaReconexao(n); d <= 0 || d > 5*time.Second {
			t.Errorf("esperaReconexao(%d) = %s", n, d)
		}
	}
	if got := semSenha("nats://user:secret@host:4222"); strings.Contains(got, "secret") || strings.Contains(got, "user") {
		t.Errorf("semSenha = %q", got)
	}
}

// In-place retries of a transient failure wait 250 ms doubling up to 1 s
// (a NATS leader election ends at any moment between 4 and 9 s), never
// longer than the configured redelivery delay.
func TestEsperaTransitoria(t *testing.T) {
	t.Parallel()
	c := Config{}.WithDefaults()
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, time.Second, time.Second}
	for i, w := range want {
		if got := c.esperaTransitoria(uint64(i + 1)); got != w {
			t.Errorf("retry %d: %v, want %v", i+1, got, w)
		}
	}
	c.Backoff = []time.Duration{20 * time.Millisecond}
	if got := c.esperaTransitoria(3); got != 20*time.Millisecond {
		t.Errorf("with a 20 ms redelivery delay: %v", got)
	}
}

// SemEntrega (d6a_entradas_sem_entrega_segundos) tells a stall from an idle
// consumer: idle, the server keeps ending the pull requests itself, so the
// gauge keeps starting over; with the server gone it only grows; once the
// server is back it starts over again (issue 38). Each condition is waited
// for, not timed.
func TestSemEntregaDistingueParadaDeOcioso(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, err := StartEmbedded("127.0.0.1:0", dir)
	if err != nil {
		t.Fatal(err)
	}
	addr, url := srv.Addr().String(), srv.ClientURL()
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
	b := novoBus(t, url, nil)
	consumidores(t, b)
	if b.SemEntrega() != 0 {
		t.Fatalf("SemEntrega = %s before consumption", b.SemEntrega())
	}
	consumir(t, b, &gravador{})
	esperar(t, "consumption to start", func() bool { return b.progresso.Load() != 0 })
	p := b.progresso.Load()
	esperar(t, "an idle request ended by the server", func() bool { return b.progresso.Load() > p })

	espera := b.Config().Espera
	srv.Shutdown()
	srv.WaitForShutdown()
	esperar(t, "the gauge to pass ten fetch waits with the server gone", func() bool { return b.SemEntrega() > 10*espera })
	if srv, err = StartEmbedded(addr, dir); err != nil {
		t.Fatal(err)
	}
	p = b.progresso.Load()
	esperar(t, "the gauge to start over once the server is back", func() bool { return b.progresso.Load() > p })
}

// A durable an earlier version created with AckWait 30 s is brought to the
// current AckWait at start; one an operator set otherwise is left alone.
func TestAckWaitAntigoAtualizado(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		antes, depois time.Duration
	}{{30 * time.Second, AckWaitPadrao}, {12 * time.Second, 12 * time.Second}} {
		url, _ := bustest.Start(t)
		b := novoBus(t, url, nil)
		cfg := b.configConsumidor()
		cfg.AckWait = c.antes
		if _, err := b.js.CreateConsumer(ctxTeste(t), b.cfg.Stream, cfg); err != nil {
			t.Fatal(err)
		}
		consumidores(t, b)
		if got := infoConsumidor(t, b).Config.AckWait; got != c.depois {
			t.Errorf("AckWait %s at start: now %s, want %s", c.antes, got, c.depois)
		}
	}
}

// The acknowledgements kept for a new consumer leader are those of the
// last janelaReconfirmacao, oldest first.
func TestPodarAcks(t *testing.T) {
	agora := time.Now()
	acks := []ackEnviado{
		{"velho", agora.Add(-janelaReconfirmacao - time.Millisecond)},
		{"recente", agora.Add(-janelaReconfirmacao / 2)},
		{"agora", agora},
	}
	got := podarAcks(acks, agora)
	if len(got) != 2 || got[0].reply != "recente" || got[1].reply != "agora" {
		t.Fatalf("podarAcks = %v", got)
	}
	if got := podarAcks(nil, agora); len(got) != 0 {
		t.Fatalf("podarAcks(nil) = %v", got)
	}
}
