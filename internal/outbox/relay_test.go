package outbox_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/bus/bustest"
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

func (b *barramento) PublishAsync(subject, eventID string, _, _ int64, _ []byte) func(context.Context) (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.chamadas++
	if b.falharEm > 0 && b.chamadas >= b.falharEm {
		return func(context.Context) (uint64, error) { return 0, errors.New("nats: no servers available") }
	}
	b.ids = append(b.ids, eventID)
	b.subjects = append(b.subjects, subject)
	seq := uint64(len(b.ids))
	return func(context.Context) (uint64, error) { return seq, nil }
}

// enfileirar queues n rows as a unit of work would, each in its own
// transaction; the scene is set with plain SQL on the pool.
func enfileirar(t *testing.T, st *store.Store, n int) []uuid.UUID {
	t.Helper()
	var ids []uuid.UUID
	for i := 0; i < n; i++ {
		id := uuid.New()
		_, err := st.Pool.Exec(context.Background(), `INSERT INTO d6a.outbox (event_id, tipo, subject, correlacao_id, envelope, criado_em)
VALUES ($1, 'conselheiro.sorteado', 'eventos.conselheiro.sorteado', 'c', $2, $3)`,
			id, []byte(`{"event_id":"`+id.String()+`"}`), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func pendentes(t *testing.T, st *store.Store) int64 {
	t.Helper()
	var n int64
	if err := st.Pool.QueryRow(context.Background(), `SELECT count(*) FROM d6a.outbox WHERE publicado_em IS NULL`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// marca is how the row of an event was marked published: nil before.
type marca struct {
	Sequence    *int64
	PublicadoEm *time.Time
}

func marcaDe(ctx context.Context, st *store.Store, id uuid.UUID) (marca, error) {
	var m marca
	err := st.Pool.QueryRow(ctx, `SELECT sequence, publicado_em FROM d6a.outbox WHERE event_id = $1`, id).Scan(&m.Sequence, &m.PublicadoEm)
	return m, err
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
	row, err := marcaDe(context.Background(), st, ids[4])
	if err != nil || row.Sequence == nil || *row.Sequence != 5 || row.PublicadoEm == nil {
		t.Fatalf("row not marked with its stream sequence: %+v %v", row, err)
	}
	// Nothing is published twice.
	if n, _ := r.Pass(context.Background()); n != 0 || len(bus.ids) != 5 {
		t.Fatalf("second pass published %d (total %d)", n, len(bus.ids))
	}
}

// Enviar publishes on the caller's goroutine, right after its commit, with
// no relay pass or earlier batch's acks in between; Run then waits for the
// acks and marks the rows.
func TestEnviarPublicaNaHora(t *testing.T) {
	t.Parallel()
	st := pgtest.New(t)
	ids := enfileirar(t, st, 3)
	bus := &barramento{}
	r := outbox.New(st, bus, time.Hour, nil)
	msgs := make([]outbox.Mensagem, len(ids))
	for i, id := range ids {
		msgs[i] = outbox.Mensagem{EventID: id, Subject: "eventos.conselheiro.sorteado", Envelope: []byte(`{}`)}
	}
	r.Enviar(msgs) // Run is not running
	bus.mu.Lock()
	publicados := slices.Clone(bus.ids)
	bus.mu.Unlock()
	if len(publicados) != 3 || publicados[0] != ids[0].String() || publicados[2] != ids[2].String() {
		t.Fatalf("Enviar published %v before Run, want the 3 rows in order", publicados)
	}
	if n := pendentes(t, st); n != 3 {
		t.Fatalf("%d rows unmarked before Run, want 3 (marked after their acks)", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	feito := make(chan struct{})
	go func() { defer close(feito); r.Run(ctx) }()
	for prazo := time.Now().Add(10 * time.Second); pendentes(t, st) != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(prazo) {
			t.Fatal("Run did not mark the rows Enviar published")
		}
	}
	cancel()
	<-feito
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

// comandos records every statement and prepare the pool sends, so a test
// can count a pass's round trips.
type comandos struct {
	mu         sync.Mutex
	sqls       []string
	preparados int
}

func (c *comandos) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sqls = append(c.sqls, d.SQL)
	return ctx
}

func (c *comandos) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *comandos) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.preparados++
	return ctx
}

func (c *comandos) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// zerar returns what was recorded since the last call.
func (c *comandos) zerar() (sqls []string, preparados int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sqls, preparados = c.sqls, c.preparados
	c.sqls, c.preparados = nil, 0
	return sqls, preparados
}

// storeRastreado returns a store on base's database whose pool is built
// from the configuration store.Open gave base's pool, plus a tracer; edit
// may change the copy further.
func storeRastreado(t *testing.T, base *store.Store, edit func(*pgxpool.Config)) (*store.Store, *comandos) {
	t.Helper()
	c := &comandos{}
	cfg := base.Pool.Config()
	cfg.ConnConfig.Tracer = c
	if edit != nil {
		edit(cfg)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return &store.Store{Pool: pool}, c
}

func TestPassaTemCincoComandosQualquerQueSejaOLote(t *testing.T) {
	t.Parallel()
	base := pgtest.New(t)
	st, cmds := storeRastreado(t, base, nil)
	r := outbox.New(st, &barramento{}, time.Hour, nil)
	// The first pass on a connection also prepares its statements.
	enfileirar(t, base, 1)
	if n, err := r.Pass(context.Background()); err != nil || n != 1 {
		t.Fatalf("warm-up Pass = %d, %v", n, err)
	}
	cmds.zerar()
	for _, lote := range []int{1, 3, 200} {
		enfileirar(t, base, lote)
		n, err := r.Pass(context.Background())
		if err != nil || n != lote {
			t.Fatalf("Pass of %d rows = %d, %v", lote, n, err)
		}
		sqls, preparados := cmds.zerar()
		// BEGIN with synchronous_commit off, the plans' refit (d6a.ajustar_planos),
		// take the rows, mark them, COMMIT: no SET of its own, no statement
		// per row.
		if len(sqls) != 5 {
			t.Fatalf("a pass of %d rows sent %d statements, want 5 (begin, refit, select, update, commit): %q", lote, len(sqls), sqls)
		}
		if !strings.Contains(sqls[0], "BEGIN") || !strings.Contains(sqls[0], "synchronous_commit = off") ||
			!strings.Contains(sqls[1], "AjustarPlanos") ||
			!strings.Contains(sqls[2], "BuscarOutboxPendentes") || !strings.Contains(sqls[3], "MarcarOutboxPublicados") ||
			!strings.EqualFold(sqls[4], "commit") {
			t.Fatalf("a pass sent %q, want begin with synchronous_commit off, refit, select, update, commit", sqls)
		}
		// One prepare per statement at most, only on a connection the
		// warm-up did not use.
		if preparados > 2 {
			t.Fatalf("a pass of %d rows prepared %d statements, want at most 2", lote, preparados)
		}
	}
	// An empty outbox: begin, sizes, select, commit.
	if n, err := r.Pass(context.Background()); err != nil || n != 0 {
		t.Fatalf("Pass of an empty outbox = %d, %v", n, err)
	}
	if sqls, _ := cmds.zerar(); len(sqls) != 4 {
		t.Fatalf("a pass of no rows sent %d statements, want 4: %q", len(sqls), sqls)
	}
}

// barramentoReal connects a bus to a fresh embedded JetStream server and
// creates its stream.
func barramentoReal(t *testing.T) *bus.Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url, _ := bustest.Start(t)
	b, err := bus.Connect(ctx, bus.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if err := b.EnsureStream(ctx); err != nil {
		t.Fatal(err)
	}
	return b
}

// falhaNoK passes publications to the real bus except the k-th (1-based),
// whose ack never comes.
type falhaNoK struct {
	*bus.Bus
	k, n atomic.Int64
}

func (f *falhaNoK) PublishAsync(subject, eventID string, entradaSeq, rodada int64, data []byte) func(context.Context) (uint64, error) {
	if f.n.Add(1) == f.k.Load() {
		return func(context.Context) (uint64, error) { return 0, errors.New("nats: timeout") }
	}
	return f.Bus.PublishAsync(subject, eventID, entradaSeq, rodada, data)
}

// conferirStream checks that the stream holds exactly one message per
// queued event, under its event id, and that every row is marked with the
// sequence of its own message.
func conferirStream(t *testing.T, st *store.Store, b *bus.Bus, ids []uuid.UUID) []*jetstream.RawStreamMsg {
	t.Helper()
	msgs := bustest.LerMsgs(t, b.JetStream(), b.Config().Stream, ">")
	if len(msgs) != len(ids) {
		t.Fatalf("stream holds %d messages, want %d (one per row)", len(msgs), len(ids))
	}
	porSeq := map[uint64]string{}
	vistos := map[string]bool{}
	for _, m := range msgs {
		id := m.Header.Get(jetstream.MsgIDHeader)
		if vistos[id] {
			t.Fatalf("event %s reached the stream twice", id)
		}
		vistos[id] = true
		porSeq[m.Sequence] = id
	}
	for _, id := range ids {
		row, err := marcaDe(context.Background(), st, id)
		if err != nil {
			t.Fatal(err)
		}
		if row.PublicadoEm == nil || row.Sequence == nil || porSeq[uint64(*row.Sequence)] != id.String() {
			t.Fatalf("row %s marked with sequence %v, whose message is %q", id, row.Sequence, porSeq[uint64(ptrOr(row.Sequence))])
		}
	}
	return msgs
}

func ptrOr(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func TestFalhaNoMeioDoLoteMarcaTodoAckado(t *testing.T) {
	t.Parallel()
	st := pgtest.New(t)
	b := barramentoReal(t)
	ids := enfileirar(t, st, 6)
	pub := &falhaNoK{Bus: b}
	pub.k.Store(3)
	r := outbox.New(st, pub, time.Hour, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	n, err := r.Pass(ctx)
	if err != nil || n != 5 {
		t.Fatalf("Pass with the 3rd publish failing = %d, %v; want the 5 others", n, err)
	}
	// Every acknowledged row is marked, those after the failure too: left
	// unmarked they would be published again, and the stream only drops
	// duplicates within its window.
	for i, id := range ids {
		row, err := marcaDe(ctx, st, id)
		if err != nil {
			t.Fatal(err)
		}
		if marcado := row.PublicadoEm != nil; marcado != (i != 2) {
			t.Fatalf("row %d marked = %v; every row but the failed 3rd must be", i, marcado)
		}
	}
	if msgs := bustest.LerMsgs(t, b.JetStream(), b.Config().Stream, ">"); len(msgs) != 5 {
		t.Fatalf("stream holds %d messages after the failing pass, want 5", len(msgs))
	}

	pub.k.Store(0)
	if n, err := r.Pass(ctx); err != nil || n != 1 {
		t.Fatalf("second Pass = %d, %v; want the failed row alone", n, err)
	}
	// Every event once, each row marked with its own message's sequence;
	// the failed row comes last.
	msgs := conferirStream(t, st, b, ids)
	if got := msgs[len(msgs)-1].Header.Get(jetstream.MsgIDHeader); got != ids[2].String() {
		t.Fatalf("last message is %s, want the failed row %s", got, ids[2])
	}
	if pendentes(t, st) != 0 {
		t.Fatal("rows left unpublished")
	}
}

func TestTodaLinhaChegaAoStreamUmaVezEmOrdem(t *testing.T) {
	t.Parallel()
	st := pgtest.New(t)
	b := barramentoReal(t)
	// More than one batch (256).
	ids := enfileirar(t, st, 300)
	r := outbox.New(st, b, time.Hour, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	msgs := conferirStream(t, st, b, ids)
	for i, m := range msgs {
		if got := m.Header.Get(jetstream.MsgIDHeader); got != ids[i].String() {
			t.Fatalf("message %d is %s, want %s (queue order)", i, got, ids[i])
		}
	}
	if n, err := r.Pass(ctx); err != nil || n != 0 {
		t.Fatalf("Pass after Flush = %d, %v", n, err)
	}
}
