package main

// In-process benchmarks of the draw path, for profiles of d6a's own code:
// the very handler d6a serve runs for agenda.item_disponível
// (atribuicao.Servico.Handle) on a durable PostgreSQL with the synthetic
// country and K counsellors (D6A_BENCH_K, default 100000), and the real
// JetStream bus as the seed's base. A pgx tracer times every statement
// from the client (round trip included), so a draw's wall time is broken
// down by statement.
//
//	D6A_BENCH_CPUPROFILE=/tmp/cpu go test -run '^$' -bench HandleAgenda -benchtime 2000x ./cmd/d6a-bench
//	go tool pprof -top /tmp/cpu-BenchmarkHandleAgenda-durable.out
//	D6A_BENCH_CPUPROFILE=/tmp/cpu go test -run '^$' -bench CargaHierarquia -benchtime 5x ./cmd/d6a-bench
//
// D6A_BENCH_CPUPROFILE profiles the timed loop only: -cpuprofile would
// include the setup (about a minute at K=100,000).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/entradas"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/hierarquia"
	"github.com/formigueiro/d6a/internal/pglocal"
	"github.com/formigueiro/d6a/internal/procstat"
	"github.com/formigueiro/d6a/internal/store"
)

var bancada struct {
	once             sync.Once
	err              error
	dir              string
	pg               *pglocal.Cluster
	pais             *pais
	k                int
	bus              *bus.Bus
	tracer, relaxado *rastreador
	svc              *atribuicao.Servico // durable commits, as d6a serve runs
	svcAssin         *atribuicao.Servico // synchronous_commit=off: the draw without its WAL flush wait
	carregar         hierarquia.Loader
	seq              atomic.Uint64
}

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.NewJSONHandler(io.Discard, nil))) // d6a logs every draw
	code := m.Run()
	if bancada.svc != nil {
		bancada.svc.Close()
		bancada.svcAssin.Close()
	}
	if bancada.bus != nil {
		_ = bancada.bus.Close()
	}
	if bancada.pg != nil {
		_ = bancada.pg.Stop()
	}
	if bancada.dir != "" {
		_ = os.RemoveAll(bancada.dir)
	}
	os.Exit(code)
}

func preparar(b *testing.B) {
	b.Helper()
	bancada.once.Do(func() { bancada.err = montar() })
	if bancada.err != nil {
		b.Fatal(bancada.err)
	}
}

func montar() (err error) {
	ctx := context.Background()
	bancada.k = 100_000
	if v := os.Getenv("D6A_BENCH_K"); v != "" {
		if bancada.k, err = strconv.Atoi(v); err != nil || bancada.k < 1 {
			return fmt.Errorf("D6A_BENCH_K=%q", v)
		}
	}
	if bancada.dir, err = os.MkdirTemp("", "d6a-bench-go-"); err != nil {
		return err
	}
	_ = os.Chmod(bancada.dir, 0o755)
	if bancada.pg, err = pglocal.Start(ctx, pglocal.Options{Dir: filepath.Join(bancada.dir, "pg"), Durable: true, Settings: configuracaoPG}); err != nil {
		return err
	}
	if err := bancada.pg.CreateDatabase(ctx, "d6a", ""); err != nil {
		return err
	}
	url := bancada.pg.URL("d6a")
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	bancada.pais = gerarPais(1)
	if err := criarHierarquia(ctx, conn, bancada.pais, func(int) {}); err != nil {
		return err
	}
	st, err := store.Open(ctx, url)
	if err != nil {
		return err
	}
	err = store.Migrate(ctx, st.Pool)
	st.Close()
	if err != nil {
		return err
	}
	if err := carregarConselheiros(ctx, conn, bancada.pais, "sparse", bancada.k, 1, true, func(int) {}); err != nil {
		return err
	}
	if err := executarSQL(ctx, conn, `CREATE EXTENSION IF NOT EXISTS pg_prewarm`, `SELECT pg_prewarm(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		 WHERE n.nspname IN ('d6a', 'core') AND c.relkind IN ('r', 'i')`, `CHECKPOINT`); err != nil {
		return err
	}

	// The real bus, embedded, durable (SyncAlways), with one message so the
	// draw's base is a real message.
	if bancada.bus, err = bus.Connect(ctx, bus.Config{EmbeddedAddr: "127.0.0.1:0", DataDir: filepath.Join(bancada.dir, "nats")}); err != nil {
		return err
	}
	if err := bancada.bus.EnsureStream(ctx); err != nil {
		return err
	}
	d := gerarDemandas(rand.New(rand.NewPCG(7, 7)), bancada.pais, 1)[0]
	if _, err := bancada.bus.Publish(ctx, assuntoAgenda, d.eventID, d.dados); err != nil {
		return err
	}
	// d6a serve draws under the consumed trigger, with no request to the
	// bus: read the base once, so no round trip serve never makes is timed.
	id, seq, err := bancada.bus.LastEventID(ctx)
	if err != nil {
		return err
	}
	bancada.tracer, bancada.relaxado = &rastreador{}, &rastreador{}
	stDur, err := abrirStoreRastreado(ctx, url, bancada.tracer, nil)
	if err != nil {
		return err
	}
	stAssin, err := abrirStoreRastreado(ctx, url, bancada.relaxado, map[string]string{"synchronous_commit": "off"})
	if err != nil {
		return err
	}
	bancada.carregar = stDur.CarregarHierarquia
	hier := hierarquia.New(bancada.carregar, 6*time.Hour, nil)
	if _, err := hier.Tamanho(ctx); err != nil {
		return err
	}
	novo := func(st *store.Store) *atribuicao.Servico {
		return atribuicao.New(atribuicao.Options{
			Store: st, Hierarquia: hier, Entradas: entradas.New(hier), Barramento: baseFixa{id, seq}, SubjectPrefix: "eventos",
			NRecusasSuspensao: 3, TSuspensao: 90 * 24 * time.Hour,
		})
	}
	bancada.svc, bancada.svcAssin = novo(stDur), novo(stAssin)
	return nil
}

// abrirStoreRastreado opens a store as d6a serve does (store.Config), with
// every statement traced and params on top.
func abrirStoreRastreado(ctx context.Context, url string, t *rastreador, params map[string]string) (*store.Store, error) {
	cfg, err := store.Config(url)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.Tracer = t
	for k, v := range params {
		cfg.ConnConfig.RuntimeParams[k] = v
	}
	return store.OpenConfig(ctx, cfg)
}

// BenchmarkHandleAgenda is one agenda.item_disponível through
// Servico.Handle, as d6a serve runs it minus the bus consumer (fetch, ack)
// and the outbox relay.
func BenchmarkHandleAgenda(b *testing.B) {
	preparar(b)
	b.Run("durable", func(b *testing.B) { benchHandle(b, bancada.svc, bancada.tracer) })
	b.Run("synchronous_commit=off", func(b *testing.B) { benchHandle(b, bancada.svcAssin, bancada.relaxado) })
}

func benchHandle(b *testing.B, svc *atribuicao.Servico, t *rastreador) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(bancada.seq.Add(1), 42)) // fresh demands and event ids every run
	evs := make([]evento.Evento, b.N)
	for i, d := range gerarDemandas(rng, bancada.pais, b.N) {
		var err error
		if evs[i], err = evento.Decodificar(evento.AgendaItemDisponivel, d.dados); err != nil {
			b.Fatal(err)
		}
	}
	t.zerar()
	parar := perfilar(b, 100)
	medidos := processosMedidos{pgDir: bancada.pg.Dir}
	antes := amostrar(medidos)
	b.ResetTimer()
	inicio := time.Now()
	for i := 0; i < b.N; i++ {
		if err := svc.Handle(ctx, evs[i], bancada.seq.Add(1)); err != nil {
			b.Fatal(err)
		}
	}
	dur := time.Since(inicio)
	b.StopTimer()
	relatarDraws(b, medidos, antes, dur)
	parar()
	if b.N >= 100 {
		fmt.Fprintf(os.Stderr, "\n%s (K=%d, %d draws, %.3f ms per draw wall):\n%s", b.Name(), bancada.k, b.N, ms(dur)/float64(b.N), t.tabela(b.N, dur))
	}
}

// BenchmarkHandleLote is a burst's transaction: agenda.item_disponível
// events handed over 256 at a time (the bus's batch, d6a serve's MaxLote)
// through Servico.HandleLote, each batch one transaction of the executor.
// It times the executor's whole cycle (opening reads, decisions, writes
// and COMMIT) without the bus or the relay; draws/s is the burst's
// ceiling on this database.
//
//	D6A_BENCH_CPUPROFILE=/tmp/cpu go test -run '^$' -bench HandleLote -benchtime 5120x ./cmd/d6a-bench
func BenchmarkHandleLote(b *testing.B) {
	preparar(b)
	const lote = 256
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(bancada.seq.Add(1), 43))
	evs := make([]evento.Evento, b.N)
	seqs := make([]uint64, b.N)
	for i, d := range gerarDemandas(rng, bancada.pais, b.N) {
		var err error
		if evs[i], err = evento.Decodificar(evento.AgendaItemDisponivel, d.dados); err != nil {
			b.Fatal(err)
		}
		seqs[i] = bancada.seq.Add(1)
	}
	parar := perfilar(b, 1000)
	medidos := processosMedidos{pgDir: bancada.pg.Dir}
	antes := amostrar(medidos)
	b.ResetTimer()
	inicio := time.Now()
	for i := 0; i < b.N; i += lote {
		j := min(i+lote, b.N)
		for _, err := range bancada.svc.HandleLote(ctx, evs[i:j], seqs[i:j]) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	dur := time.Since(inicio)
	b.StopTimer()
	relatarDraws(b, medidos, antes, dur)
	parar()
}

// BenchmarkHandleLoteMisto is BenchmarkHandleLote with a steady state's
// mix: in each batch of 256 units, an agenda item and the cycle end of an
// assignment drawn in an earlier batch follow one another. A cycle end's
// handler reads the database as it is, so the executor writes the batch's
// decisions before it: this times what that costs beside the run of
// agenda items alone (draws/s and units/s; compare with HandleLote in the
// same run). b.N counts units.
//
//	go test -run '^$' -bench 'HandleLote' -benchtime 5120x ./cmd/d6a-bench
func BenchmarkHandleLoteMisto(b *testing.B) {
	preparar(b)
	const lote = 256
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, bancada.pg.URL("d6a"))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	rng := rand.New(rand.NewPCG(bancada.seq.Add(1), 44))
	ds := gerarDemandas(rng, bancada.pais, b.N)
	type ativa struct{ conselheiro, demanda uuid.UUID }
	var ativas []ativa
	ciclo := func(a ativa) evento.Evento {
		dados, _ := json.Marshal(map[string]any{
			"event_id": uuidDe(rng).String(), "tipo": string(evento.CicloConcluido), "origem": "D-7", "versao_schema": "1.0.0",
			"correlacao_id": nil, "timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
			"payload": map[string]any{"conselheiro_id": a.conselheiro, "demanda_id": a.demanda, "motivo_encerramento": "demanda_concluida"},
		})
		ev, err := evento.Decodificar(evento.CicloConcluido, dados)
		if err != nil {
			b.Fatal(err)
		}
		return ev
	}
	bancada.tracer.zerar()
	medidos := processosMedidos{pgDir: bancada.pg.Dir}
	antes := amostrar(medidos)
	b.ResetTimer()
	inicio := time.Now()
	unidades, ciclos, i := 0, 0, 0
	for unidades < b.N {
		var evs []evento.Evento
		var demandas []uuid.UUID
		for len(evs) < lote && unidades+len(evs) < b.N && i < len(ds) {
			ev, err := evento.Decodificar(evento.AgendaItemDisponivel, ds[i].dados)
			if err != nil {
				b.Fatal(err)
			}
			evs, demandas = append(evs, ev), append(demandas, ds[i].id)
			i++
			if len(ativas) > 0 && len(evs) < lote && unidades+len(evs) < b.N {
				evs = append(evs, ciclo(ativas[0]))
				ativas = ativas[1:]
				ciclos++
			}
		}
		if len(evs) == 0 {
			break
		}
		seqs := make([]uint64, len(evs))
		for k := range seqs {
			seqs[k] = bancada.seq.Add(1)
		}
		for _, err := range bancada.svc.HandleLote(ctx, evs, seqs) {
			if err != nil {
				b.Fatal(err)
			}
		}
		unidades += len(evs)
		// The assignments this batch drew end in the next one (not timed).
		b.StopTimer()
		rows, err := conn.Query(ctx, `SELECT conselheiro_id, demanda_id FROM d6a.atribuicoes WHERE status = 'ativa' AND demanda_id = ANY($1)`, demandas)
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
			var a ativa
			if err := rows.Scan(&a.conselheiro, &a.demanda); err != nil {
				b.Fatal(err)
			}
			ativas = append(ativas, a)
		}
		if rows.Close(); rows.Err() != nil {
			b.Fatal(rows.Err())
		}
		b.StartTimer()
	}
	dur := time.Since(inicio)
	b.StopTimer()
	relatarDraws(b, medidos, antes, dur) // per unit: b.N counts units here
	b.ReportMetric(float64(i)/dur.Seconds(), "agenda/s")
	b.ReportMetric(float64(ciclos)/float64(max(unidades, 1)), "cycle-ends/unit")
	if b.N >= 100 {
		fmt.Fprintf(os.Stderr, "\n%s (K=%d, %d units, %.3f ms per unit wall):\n%s", b.Name(), bancada.k, b.N, ms(dur)/float64(b.N), bancada.tracer.tabela(b.N, dur))
	}
}

// relatarDraws reports a timed loop of b.N draws that took dur: draws/s,
// and the CPU per draw of PostgreSQL and of this process (d6a's code and
// the embedded NATS server) since antes.
func relatarDraws(b *testing.B, medidos processosMedidos, antes amostraCPU, dur time.Duration) {
	depois := amostrar(medidos)
	porDraw := func(ticks uint64) float64 { return float64(ticks) * 1000 / procstat.HZ / float64(b.N) }
	b.ReportMetric(float64(b.N)/dur.Seconds(), "draws/s")
	b.ReportMetric(porDraw(depois.pg-antes.pg), "pg-cpu-ms/draw")
	b.ReportMetric(porDraw(depois.eu-antes.eu), "proc-cpu-ms/draw")
	b.ReportMetric(calcularUso(antes, depois, b.N).Outros, "other-cores")
}

// perfilar writes a CPU profile of the timed loop to
// $D6A_BENCH_CPUPROFILE-<benchmark>.out when that variable is set and
// b.N ≥ minimo (the final run).
func perfilar(b *testing.B, minimo int) (parar func()) {
	base := os.Getenv("D6A_BENCH_CPUPROFILE")
	if base == "" || b.N < minimo {
		return func() {}
	}
	f, err := os.Create(base + "-" + strings.NewReplacer("/", "-", "=", "-").Replace(b.Name()) + ".out")
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		fmt.Fprintf(os.Stderr, "CPU profile: %s\n", f.Name())
	}
}

// BenchmarkCargaHierarquia is the cache load of d6a serve's first draw:
// read all of core.uc_polygons through the store, build the tree.
func BenchmarkCargaHierarquia(b *testing.B) {
	preparar(b)
	ctx := context.Background()
	b.ReportAllocs()
	var antes, depois runtime.MemStats
	defer perfilar(b, 2)()
	for i := 0; i < b.N; i++ {
		runtime.GC()
		runtime.ReadMemStats(&antes)
		h := hierarquia.New(bancada.carregar, time.Hour, nil)
		if n, err := h.Tamanho(ctx); err != nil || n != bancada.pais.Tamanho() {
			b.Fatal(n, err)
		}
		runtime.GC()
		runtime.ReadMemStats(&depois)
		b.ReportMetric(float64(depois.HeapAlloc-antes.HeapAlloc)/(1<<20), "MB-retained")
		runtime.KeepAlive(h)
	}
}

// rastreador is a pgx tracer summing the client-side wall time of each
// statement by its sqlc name; a batch (one round trip) is one line, named
// by its statements.
type rastreador struct {
	mu     sync.Mutex
	porSQL map[string]*medida
}

type medida struct {
	n     int
	total time.Duration
}

type inicioSQL struct {
	nome string
	t    time.Time
}

func (r *rastreador) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, inicioSQL{}, inicioSQL{store.NomeDaQuery(d.SQL), time.Now()})
}

func (r *rastreador) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	r.somar(ctx)
}

func (r *rastreador) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	var nomes []string
	for _, q := range d.Batch.QueuedQueries {
		nomes = append(nomes, store.NomeDaQuery(q.SQL))
	}
	return context.WithValue(ctx, inicioSQL{}, inicioSQL{"batch " + strings.Join(nomes, "+"), time.Now()})
}

func (r *rastreador) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (r *rastreador) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchEndData) {
	r.somar(ctx)
}

func (r *rastreador) somar(ctx context.Context) {
	i, ok := ctx.Value(inicioSQL{}).(inicioSQL)
	if !ok {
		return
	}
	d := time.Since(i.t)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.porSQL == nil {
		r.porSQL = map[string]*medida{}
	}
	if r.porSQL[i.nome] == nil {
		r.porSQL[i.nome] = &medida{}
	}
	r.porSQL[i.nome].n++
	r.porSQL[i.nome].total += d
}

func (r *rastreador) zerar() {
	r.mu.Lock()
	r.porSQL = nil
	r.mu.Unlock()
}

func (r *rastreador) tabela(draws int, wall time.Duration) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	nomes := make([]string, 0, len(r.porSQL))
	var soma time.Duration
	for n, m := range r.porSQL {
		nomes = append(nomes, n)
		soma += m.total
	}
	sort.Slice(nomes, func(i, j int) bool { return r.porSQL[nomes[i]].total > r.porSQL[nomes[j]].total })
	por := func(d time.Duration) float64 { return ms(d) / float64(draws) }
	var b strings.Builder
	fmt.Fprintf(&b, "  %-60s %8s %10s %12s\n", "statement or batch (client wall, round trip incl.)", "calls/dr", "mean ms", "ms per draw")
	for _, n := range nomes {
		m := r.porSQL[n]
		fmt.Fprintf(&b, "  %-60s %8.2f %10.3f %12.3f\n", n, float64(m.n)/float64(draws), ms(m.total)/float64(m.n), por(m.total))
	}
	fmt.Fprintf(&b, "  %-60s %8s %10s %12.3f\n", "sum of round trips", "", "", por(soma))
	fmt.Fprintf(&b, "  %-60s %8s %10s %12.3f\n", "rest (Go CPU, pool, hand-overs)", "", "", por(wall-soma))
	return b.String()
}

// baseFixa is a bus whose latest message never changes.
type baseFixa struct {
	id  string
	seq uint64
}

func (b baseFixa) LastEventID(context.Context) (string, uint64, error) { return b.id, b.seq, nil }
