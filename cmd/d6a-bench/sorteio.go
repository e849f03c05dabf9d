// The draws mode (`d6a-bench`, no mode name; make bench): `d6a serve` at
// national scale. Each run builds K counsellors on a copy of the synthetic
// country, then times a burst, a paced pass and a light pass of
// agenda.item_disponível from publish to result, against pgbench and the
// bare durable loop (sorteio_laco.go) measured in the same run. The load is
// sorteio_carga.go, the report sorteio_relatorio.go.

package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/schollz/progressbar/v3"

	"github.com/formigueiro/d6a/internal/beacon"
	"github.com/formigueiro/d6a/internal/childproc"
	"github.com/formigueiro/d6a/internal/latency"
	"github.com/formigueiro/d6a/internal/natslocal"
)

// cenario is one measured run: K counsellors in a country shape, on an
// analyzed database or a fresh one (bulk-loaded, never analyzed,
// autovacuum off on the d6a tables); Tmpfs runs go to a second durable
// PostgreSQL on /dev/shm, the fast disk of issue 24, with its own pgbench.
type cenario struct {
	K             int
	Forma         string
	Fresco, Tmpfs bool
}

func (c cenario) String() string {
	return "K=" + milhares(c.K) + " " + c.Forma + se(c.Fresco, " fresh", "") + se(c.Tmpfs, " tmpfs", "")
}

const runsPadrao = "1000/sparse,100000/sparse,100000/dense,100000/dense/fresh,100000/dense/fresh/tmpfs,1000000/sparse,1000000/dense"

type opcoes struct {
	runs                   []cenario
	m, leve, laco          int     // burst and paced pass, light pass, each bare-loop measurement
	taxaLeve, carga        float64 // the light pass's rate; the paced pass's fraction of the burst's
	seed                   uint64
	doc, svg, dir, comando string
	// d6a is a prebuilt d6a binary to measure ("": built from ./cmd/d6a):
	// another commit's, judged with this bench and its yardstick.
	d6a                    string
	pgbenchT               int
	sossego                time.Duration
	embutido, manter       bool
	rapido, escrever, perf bool
}

func lerFlags(args []string) (opcoes, error) {
	fs := flag.NewFlagSet("d6a-bench", flag.ContinueOnError)
	var o opcoes
	q := rapido(args)
	runs := fs.String("runs", se(q, "1000/sparse,10000/dense,10000/dense/fresh", runsPadrao), "runs, comma separated: K/shape[/fresh][/tmpfs], shape sparse or dense; fresh = counsellors bulk-loaded, never analyzed, autovacuum off on the d6a tables; tmpfs = in a second PostgreSQL on /dev/shm (the fast disk), with its own pgbench")
	fs.IntVar(&o.m, "m", se(q, 500, 5000), "agenda.item_disponível events of the max-load burst and of the paced pass (≥ 1)")
	fs.IntVar(&o.leve, "light-m", se(q, 20, 300), "events of the light-load pass (0: none)")
	fs.Float64Var(&o.taxaLeve, "light-rate", 10, "events per second of the light-load pass")
	fs.IntVar(&o.laco, "bare-m", se(q, 500, 5000), "messages per bare-loop measurement (0: none)")
	fs.BoolVar(&o.rapido, "quick", false, "runs 1000/sparse,10000/dense,10000/dense/fresh, M = 500, light pass 20 events, bare loop 500 (unless given), pgbench 2 s, no -wait-quiet: checks the tool in under 3 minutes; docs are not written unless -doc/-svg are given")
	fs.Float64Var(&o.carga, "load", 0.5, "offered load of the paced pass, as a fraction of the measured maximum draw rate")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic country, counsellors and demands")
	fs.StringVar(&o.doc, "doc", "docs/bench.md", "markdown file whose results section is rewritten (empty: none)")
	fs.StringVar(&o.d6a, "d6a", "", "a prebuilt d6a binary to measure, another commit's for a before/after with the same bench (default: built from ./cmd/d6a)")
	fs.StringVar(&o.svg, "svg", "docs/bench-draws.svg", "SVG plot of latency and throughput against K (empty: none)")
	fs.BoolVar(&o.embutido, "embedded-nats", false, "use d6a serve's embedded NATS server instead of a separate nats-server (its memory then counts in d6a's RSS)")
	fs.IntVar(&o.pgbenchT, "pgbench-t", se(q, 2, 10), "seconds of each pgbench run")
	fs.DurationVar(&o.sossego, "wait-quiet", se(q, 0, 30*time.Second), "before pgbench and each pass, wait up to this long for other processes to use under 0.25 cores (0: don't wait)")
	fs.BoolVar(&o.manter, "keep", false, "keep the work directory (logs, PostgreSQL and NATS data) for inspection")
	fs.StringVar(&o.dir, "dir", "", "work directory (default: a fresh temporary directory)")
	fs.BoolVar(&o.perf, "perf", false, "record `perf` CPU profiles of d6a serve, nats-server and PostgreSQL, and a Go CPU profile of d6a serve, during each pass (reports in the work directory, which is then kept)")
	dado, err := analisarFlags(fs, args)
	if err != nil {
		return o, err
	}
	o.escrever = !o.rapido || dado["doc"] || dado["svg"]
	o.manter = o.manter || o.perf
	for _, s := range strings.Split(*runs, ",") {
		p := strings.Split(strings.TrimSpace(s), "/")
		k, err := strconv.Atoi(strings.ReplaceAll(p[0], "_", ""))
		c := cenario{K: k, Forma: p[min(1, len(p)-1)]}
		variantes := strings.Join(p[min(2, len(p)):], "/")
		c.Fresco, c.Tmpfs = strings.HasPrefix(variantes, "fresh"), strings.HasSuffix(variantes, "tmpfs")
		if err != nil || k < 1 || formas[c.Forma] == nil || !slices.Contains([]string{"", "fresh", "tmpfs", "fresh/tmpfs"}, variantes) {
			return o, fmt.Errorf("-runs: %q is not K/shape[/fresh][/tmpfs] with shape sparse or dense", s)
		}
		o.runs = append(o.runs, c)
	}
	switch {
	case o.m < 1:
		return o, errors.New("-m must be at least 1")
	case o.leve > 0 && o.taxaLeve <= 0:
		return o, errors.New("-light-rate must be positive")
	case o.carga <= 0 || o.carga > 1:
		return o, errors.New("-load must be in (0, 1]")
	}
	o.comando = strings.TrimSpace("go run ./cmd/d6a-bench " + strings.Join(args, " "))
	return o, nil
}

// ambiente is what every K shares.
type ambiente struct {
	*base
	// lenta is the disk's PostgreSQL and rapida the one on /dev/shm,
	// started for the first tmpfs run; base is whichever the run uses.
	lenta, rapida   *base
	o               opcoes
	binD6A, binNATS string
	pais            *pais
	ruido           []string // measurements started on a busy machine
	// laco measures the bare loop (≤ 256) again beside each burst, on the
	// nats-server medirLacos started (nil: no bare loop).
	laco func(ctx context.Context, oque string) (laco, error)
	// env is more of d6a serve's environment (the flood mode's).
	env []string
}

// noTmpfs switches the runs to the PostgreSQL on /dev/shm (starting it and
// building its country the first time) or back to the disk's.
func (a *ambiente) noTmpfs(ctx context.Context, sim bool) error {
	if a.base = se(sim, a.rapida, a.lenta); a.base != nil {
		return nil
	}
	dir, err := os.MkdirTemp("/dev/shm", "d6a-bench-")
	if err == nil {
		a.rapida, err = abrirBase(ctx, dir, configuracaoPG)
	}
	if err != nil {
		return fmt.Errorf("tmpfs run: %w", err)
	}
	a.base = a.rapida
	return a.prepararBase(ctx)
}

func executar(ctx context.Context, o opcoes) (err error) {
	inicio := time.Now()
	a := &ambiente{o: o}
	a.base, err = abrirBase(ctx, o.dir, configuracaoPG)
	if a.lenta = a.base; a.base != nil {
		defer func() {
			a.lenta.fechar(o.manter || err != nil)
			if a.rapida != nil {
				a.rapida.fechar(false)
			}
		}()
	}
	if err != nil {
		return err
	}
	logf("d6a-bench: runs %s, M = %d, work directory %s", o.runs, o.m, a.dir)
	logf("building d6a and nats-server")
	a.binD6A, a.binNATS = filepath.Join(a.dir, "bin", "d6a"), filepath.Join(a.dir, "bin", "nats-server")
	// The bare loop needs nats-server even with -embedded-nats.
	alvos := [][2]string{{a.binD6A, "./cmd/d6a"}, {a.binNATS, "github.com/nats-io/nats-server/v2"}}
	if o.d6a != "" {
		a.binD6A, alvos = o.d6a, alvos[1:]
	}
	for _, b := range alvos {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", b[0], b[1])
		cmd.Dir = a.raiz
		if _, err := comSaida(cmd, "go build "+b[1]); err != nil {
			return err
		}
	}
	if err := a.prepararBase(ctx); err != nil {
		return err
	}
	lacos, pararLaco, err := a.medirLacos(ctx)
	defer pararLaco()
	if err != nil {
		return fmt.Errorf("bare loop: %w", err)
	}
	var rs []resultadoK
	for _, c := range o.runs {
		if err := a.noTmpfs(ctx, c.Tmpfs); err != nil {
			return err
		}
		r, err := a.medir(ctx, c, 1)
		if err != nil {
			return fmt.Errorf("%s: %w", c, err)
		}
		rs = append(rs, r)
	}
	if err := a.levesIntercalados(ctx, rs); err != nil {
		return err
	}
	a.base = a.lenta
	rel := relatorio{a: a, rs: rs, lacos: lacos, dur: time.Since(inicio), data: time.Now().UTC()}
	md := rel.markdown()
	fmt.Print("\n" + rel.passes())
	if err := publicar(a.raiz, md, o.escrever, map[string]func(string) error{
		o.doc: func(p string) error { return reescrever(p, "draws", tituloSecao, md) },
		o.svg: func(p string) error { return os.WriteFile(p, []byte(desenharSVG(rs, o.carga)), 0o644) },
	}); err != nil {
		return err
	}
	logf("done in %s", time.Since(inicio).Round(time.Second))
	return nil
}

// prepararBase builds the country once in database bench_base, the template
// of every K's database.
func (a *ambiente) prepararBase(ctx context.Context) error {
	logf("generating the synthetic country (seed %d)", a.o.seed)
	a.pais = gerarPais(a.o.seed)
	if err := a.pg.CreateDatabase(ctx, "bench_base", ""); err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, a.pg.URL("bench_base"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if err := executarSQL(ctx, conn, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`, `CREATE EXTENSION IF NOT EXISTS pg_prewarm`); err != nil {
		return err
	}
	b := barra(a.pais.Tamanho(), "core.uc_polygons   ")
	t := time.Now()
	if err := criarHierarquia(ctx, conn, a.pais, func(n int) { _ = b.Set(n) }); err != nil {
		return err
	}
	_ = b.Finish()
	logf("core.uc_polygons: %d units in %s", a.pais.Tamanho(), time.Since(t).Round(time.Millisecond))
	return a.pg.CreateDatabase(ctx, "pgbench", "")
}

// resultadoK is everything measured in one run.
type resultadoK struct {
	cenario
	UCs        int
	PgbenchTPS float64
	Hierarquia cargaHierarquia
	// d6a serve once ready, after the first draw (hierarchy cached), after
	// every pass; the separate nats-server, when used.
	MemAntes, MemDepois, MemFim, NATSMem memoria
	Leve, Maxima, Ritmada                passe          // light (-light-rate), burst, paced at -load of the burst's rate
	PGLeve, PG, PGRitmada                estatisticasPG // light pass, burst, paced pass
	// LevesP50 is the p50 of each light pass, round by round: the run's
	// own, then those levesIntercalados ran after every run.
	LevesP50 []time.Duration
	// Estatisticas counts pg_statistic rows of the d6a tables at the end:
	// 0 proves a fresh run stayed never-analyzed.
	Estatisticas int
	Avisos       []string
	// LacoAntes and LacoDepois are the bare loop (≤ 256) just before and
	// just after the burst (M = 0: not measured), the burst's yardstick.
	LacoAntes, LacoDepois laco
}

// lacoAdjacente is the bare loop's msgs/s beside the burst (the mean of
// just before and just after; 0 when not measured): on a virtual machine
// whose speed drifts by a quarter within minutes, a yardstick measured at
// the start of a run of many minutes judges the machine's drift, not the
// draw.
func (x resultadoK) lacoAdjacente() float64 {
	if x.LacoAntes.M == 0 || x.LacoDepois.M == 0 {
		return 0
	}
	return (x.LacoAntes.Vazao() + x.LacoDepois.Vazao()) / 2
}

// medir measures run c: round 1 on a new database, with pgbench and the
// three passes; a later round (levesIntercalados) on the same database,
// d6a serve restarted, the light pass alone.
func (a *ambiente) medir(ctx context.Context, c cenario, rodada int) (r resultadoK, err error) {
	r = resultadoK{cenario: c, UCs: a.pais.Tamanho()}
	nome := fmt.Sprintf("k%d_%s", c.K, c.Forma) + se(c.Fresco, "_fresh", "")
	dir, db := filepath.Join(a.dir, nome), "bench_"+nome
	url := a.pg.URL(db)
	if rodada == 1 {
		if r.PgbenchTPS, err = a.carregar(ctx, c, dir, db); err != nil {
			return r, err
		}
	} else {
		logf("── %s: light pass, round %d of %d", c, rodada, rodadasLeves)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return r, err
	}
	defer conn.Close(context.Background())
	e, err := a.subir(dir, url, se(rodada == 1, "d6a-serve.log", fmt.Sprintf("d6a-serve-%d.log", rodada)))
	defer e.parar()
	if err != nil {
		return r, err
	}
	semente := uint64(c.K) ^ 0xde3a4d
	if rodada > 1 {
		semente ^= uint64(rodada) << 40
		// After d6a serve is up: its relay publishes what the last pass
		// left unmarked, which liberar waits for.
		if err := liberar(ctx, conn, c.Fresco); err != nil {
			return r, err
		}
	}
	rng := rand.New(rand.NewPCG(a.o.seed, semente))

	// The first draw loads the hierarchy cache.
	r.MemAntes = lerMemoria(e.srv.Pid())
	aq := gerarDemandas(rng, a.pais, 1)
	e.bus.registrar(aq)
	if _, err := e.bus.publicar(ctx, assuntoAgenda, aq, 0, func(int) {}); err != nil {
		return r, err
	}
	if e.bus.esperar(ctx, aq, 2*time.Minute, func(int) {}) != 1 {
		return r, fmt.Errorf("first draw: no result within 2 min; log:\n%s", childproc.Tail(e.srv.Log))
	}
	r.MemDepois = lerMemoria(e.srv.Pid())
	if r.Hierarquia, err = lerCargaHierarquia(e.srv.Log); err != nil {
		return r, err
	}

	// The passes: light load (a draw alone), the burst as fast as the bus
	// takes it, then paced at a fraction of the burst's rate (p99 target),
	// each with the server's statistics; liberar ends their assignments.
	passar := func(p *passe, pg *estatisticasPG, m int, taxa float64, nome string, libertar bool) (err error) {
		if err = executarSQL(ctx, conn, `SELECT pg_stat_statements_reset(), pg_stat_reset_shared('wal'), pg_stat_reset()`); err == nil {
			*p, err = a.passe(ctx, e, rng, m, taxa, c.String()+": ", nome)
		}
		if err == nil {
			time.Sleep(esperaEstatisticas)
			*pg, err = lerEstatisticas(ctx, conn)
		}
		if err == nil && libertar {
			err = liberar(ctx, conn, c.Fresco)
		}
		return err
	}
	if a.o.leve > 0 {
		nome := fmt.Sprintf("%g/s", a.o.taxaLeve) + se(rodada > 1, fmt.Sprintf(", round %d", rodada), "")
		if err := passar(&r.Leve, &r.PGLeve, a.o.leve, a.o.taxaLeve, nome, rodada == 1); err != nil {
			return r, err
		}
		r.LevesP50 = append(r.LevesP50, r.Leve.Lat.P50)
	}
	if rodada == 1 {
		esperarFold(ctx, conn)
		if r.LacoAntes, err = a.lacoAoLado(ctx, c, "just before the burst"); err != nil {
			return r, err
		}
		if err := passar(&r.Maxima, &r.PG, a.o.m, 0, "max load", true); err != nil {
			return r, err
		}
		esperarFold(ctx, conn)
		if r.LacoDepois, err = a.lacoAoLado(ctx, c, "just after the burst"); err != nil {
			return r, err
		}
		taxa := a.o.carga * r.Maxima.Vazao()
		if taxa <= 0 {
			return r, errors.New("max-load pass produced no results")
		}
		if err := passar(&r.Ritmada, &r.PGRitmada, a.o.m, taxa, fmt.Sprintf("%.0f%% load", a.o.carga*100), false); err != nil {
			return r, err
		}
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_statistic s JOIN pg_class c ON c.oid = s.starelid
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'd6a'`).Scan(&r.Estatisticas); err != nil {
			return r, err
		}
		r.MemFim, r.NATSMem = lerMemoria(e.srv.Pid()), lerMemoria(e.medidos.nats)
	}
	if err := e.parar(); err != nil {
		logf("d6a serve exit: %v", err)
	}
	r.Avisos, _ = lerLog(e.srv.Log)
	return r, nil
}

// carregar makes run c's database db (bench_base's copy, migrated, its
// counsellors, the tables prewarmed), then returns pgbench's tps on it.
func (a *ambiente) carregar(ctx context.Context, c cenario, dir, db string) (float64, error) {
	logf("── %s: database %s", c, db)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	if err := a.pg.CreateDatabase(ctx, db, "bench_base"); err != nil {
		return 0, err
	}
	migrar := exec.CommandContext(ctx, a.binD6A, "migrate")
	migrar.Env = append(ambienteLimpo(), "D6A_DATABASE_URL="+a.pg.URL(db), "D6A_LOG_FORMAT=json")
	if _, err := comSaida(migrar, "d6a migrate"); err != nil {
		return 0, err
	}
	conn, err := pgx.Connect(ctx, a.pg.URL(db))
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	if c.Fresco {
		// Autovacuum would analyze the tables during the run.
		if err := executarSQL(ctx, conn, `DO $$ DECLARE t regclass; BEGIN
			FOR t IN SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'd6a' AND c.relkind = 'r' LOOP
				EXECUTE format('ALTER TABLE %s SET (autovacuum_enabled = off, toast.autovacuum_enabled = off)', t);
			END LOOP; END $$`); err != nil {
			return 0, err
		}
	}
	b := barra(c.K, "d6a.conselheiros   ")
	t := time.Now()
	if err := carregarConselheiros(ctx, conn, a.pais, c.Forma, c.K, a.o.seed, !c.Fresco, func(n int) { _ = b.Set(n) }); err != nil {
		return 0, err
	}
	_ = b.Finish()
	logf("%s counsellors (%s) loaded with COPY in %s", milhares(c.K), descreverForma(c.Forma), time.Since(t).Round(time.Millisecond))
	// A server that has been serving for a while holds the counsellors and
	// their indexes in shared_buffers; COPY went through a small ring.
	if err := executarSQL(ctx, conn, `SELECT pg_prewarm(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname IN ('d6a', 'core') AND c.relkind IN ('r', 'i')`, `CHECKPOINT`); err != nil {
		return 0, err
	}
	a.sossegar(c.String()+": ", "pgbench", processosMedidos{pgDir: a.pg.Dir})
	return pgbench(ctx, a.pg, "pgbench", a.o.pgbenchT, filepath.Join(dir, "pgbench.log"))
}

// execucao is a run's bus and d6a serve. Restarted on the same
// directories, they continue the run's stream, consumer and signing key.
type execucao struct {
	nats    *natslocal.Server
	srv     *servidor
	bus     *barramento
	medidos processosMedidos
	parado  bool // d6a serve stopped; its log stays readable
	// rodadas is when each round of d6a serve's beacon is published (nil:
	// not known).
	rodadas func(uint64) time.Time
}

// subir starts the bus (unless -embedded-nats) and d6a serve (its log:
// log in dir) and connects to them; stop e even on an error.
func (a *ambiente) subir(dir, url, log string) (e *execucao, err error) {
	e = &execucao{medidos: processosMedidos{pgDir: a.pg.Dir}}
	natsURL := ""
	if !a.o.embutido {
		if e.nats, err = natslocal.Start(a.binNATS, natslocal.Options{Dir: filepath.Join(dir, "nats")}); err != nil {
			return e, err
		}
		natsURL, e.medidos.nats = e.nats.URL(), e.nats.Pid()
	}
	if e.srv, err = iniciarServe(a.binD6A, dir, log, url, natsURL, a.o.perf, a.env...); err != nil {
		return e, err
	}
	e.medidos.d6a = e.srv.Pid()
	e.rodadas = publicacaoDasRodadas(dir)
	logf("d6a serve ready (pid %d, bus %s, log %s)", e.srv.Pid(), e.srv.nats, e.srv.Log)
	e.bus, err = conectar(e.srv.nats, "")
	return e, err
}

// publicacaoDasRodadas is when each round of the private beacon d6a serve
// keeps in dir is published; nil when it has none.
func publicacaoDasRodadas(dir string) func(uint64) time.Time {
	p, err := beacon.LerPrivado(dir)
	if err != nil {
		return nil
	}
	return p.Cadeia().PublicadaEm
}

// parar stops d6a serve (its drain path), then the bus; it returns d6a
// serve's exit. A second call does nothing.
func (e *execucao) parar() (err error) {
	if e.bus != nil {
		e.bus.Close()
		e.bus = nil
	}
	if e.srv != nil && !e.parado {
		err = e.srv.Stop(syscall.SIGTERM, 30*time.Second)
		e.parado = true
	}
	if e.nats != nil {
		_ = e.nats.Stop(syscall.SIGTERM)
		e.nats = nil
	}
	return err
}

// rodadasLeves is how many light passes the flat-cost target takes the
// median of: the runs' own, then rounds after every run, so that the runs
// it compares interleave.
const rodadasLeves = 3

// levesIntercalados runs those rounds on the runs the flat-cost target
// compares (K=1,000 sparse, K=1,000,000 of each shape).
func (a *ambiente) levesIntercalados(ctx context.Context, rs []resultadoK) error {
	pequeno, ok := achar(rs, 1_000, "sparse", false)
	if a.o.leve == 0 || !ok {
		return nil
	}
	comparados := []cenario{pequeno.cenario}
	for _, forma := range []string{"sparse", "dense"} {
		if g, ok := achar(rs, 1_000_000, forma, false); ok && g.K != pequeno.K {
			comparados = append(comparados, g.cenario)
		}
	}
	if len(comparados) < 2 {
		return nil
	}
	if err := a.noTmpfs(ctx, false); err != nil {
		return err
	}
	for rodada := 2; rodada <= rodadasLeves; rodada++ {
		for _, c := range comparados {
			x, err := a.medir(ctx, c, rodada)
			if err != nil {
				return fmt.Errorf("%s, light pass %d: %w", c, rodada, err)
			}
			r := &rs[slices.IndexFunc(rs, func(r resultadoK) bool { return r.cenario == c })]
			r.LevesP50, r.Avisos = append(r.LevesP50, x.Leve.Lat.P50), append(r.Avisos, x.Avisos...)
			if p := x.Leve; p.Recebidos < p.M {
				r.Avisos = append(r.Avisos, fmt.Sprintf("light pass %d: %d results missing", rodada, p.M-p.Recebidos))
			}
		}
	}
	return nil
}

// passe publishes m fresh demands (paced at taxa per second, or as fast as
// possible when 0) and waits for every result.
func (a *ambiente) passe(ctx context.Context, e *execucao, rng *rand.Rand, m int, taxa float64, quem, nome string) (p passe, err error) {
	bus, srv, medidos := e.bus, e.srv, e.medidos
	ds := gerarDemandas(rng, a.pais, m)
	bus.registrar(ds)
	a.sossegar(quem, nome+" pass", medidos)
	pararPerf := func() {}
	if a.o.perf {
		segundos := int(float64(m) / se(taxa > 0, taxa, 150)) // a burst runs at about 150/s
		if pararPerf, err = gravarPerf(ctx, srv, medidos.nats, a.pg.Dir, segundos, nome); err != nil {
			return p, err
		}
	}
	antes, mAntes := amostrar(medidos), raspar(srv.http)
	pararVigia := make(chan struct{})
	janelas := vigia(medidos, 250*time.Millisecond, pararVigia)
	logf("%s pass: %d demands %s", nome, m, se(taxa > 0, fmt.Sprintf("at %.1f/s", taxa), "as fast as the bus acknowledges"))
	bp := barra(len(ds), fmt.Sprintf("publish %-9s   ", nome))
	pub, err := bus.publicar(ctx, assuntoAgenda, ds, taxa, func(n int) { _ = bp.Set(n) })
	if err != nil {
		return p, err
	}
	_ = bp.Finish()
	br := barra(len(ds), "results on the bus  ")
	bus.esperar(ctx, ds, time.Minute, func(n int) { _ = br.Set(n) })
	depois := amostrar(medidos)
	close(pararVigia)
	js := <-janelas
	_ = br.Finish()
	mDepois := raspar(srv.http)
	pararPerf()
	if err := cmp.Or(ctx.Err(), srv.Exited()); err != nil {
		return p, err
	}
	p = resumir(ds, taxa, pub)
	p.EsperaRodadas = esperaDeRodadas(ds, e.rodadas)
	p.AposRodada = latency.Summarize(posRodada(ds, e.rodadas))
	p.CPU = calcularUso(antes, depois, p.Recebidos)
	p.Quietas = latency.Summarize(quietas(ds, js, limiteQuieto))
	p.Handler = quantis(mAntes, mDepois, "d6a_handler_duracao_segundos", "agenda", `"ok"`)
	p.Divisao, p.Lotes = lerDivisao(mAntes, mDepois), lerLotes(mAntes, mDepois)
	p.Fases = fasesD6A(mAntes, mDepois, p.Fases.Total)
	logf("%s: %d of %d results, %.1f draws/s, p50 %.1f ms, p99 %.1f ms", nome, p.Recebidos, p.M, p.Vazao(), ms(p.Lat.P50), ms(p.Lat.P99))
	return p, nil
}

// resultadoLacos is the bare loop at each commit size, after its pgbench;
// then at the light pass's rate and, batched, paced at -load of its own
// maximum as d6a's paced pass is (M = 0 when not measured).
type resultadoLacos struct {
	PgbenchTPS    float64
	Lacos         []laco
	Leve, Ritmado laco
}

func (l resultadoLacos) Lote() (best laco) {
	for _, x := range l.Lacos {
		if x.Lote > best.Lote {
			best = x
		}
	}
	return best
}

// lacoAoLado measures the bare loop (≤ 256) beside run c's burst, on the
// disk's PostgreSQL (the bare loop's database lives there; none beside a
// tmpfs run).
func (a *ambiente) lacoAoLado(ctx context.Context, c cenario, quando string) (laco, error) {
	if a.laco == nil || c.Tmpfs {
		return laco{}, nil
	}
	return a.laco(ctx, fmt.Sprintf("commit ≤ 256, %s (%s)", quando, c))
}

// medirLacos runs the bare loop on a nats-server of its own (even with
// -embedded-nats), committing per message and per batch of the executor's
// fetch (64) and batch (256) bounds. The nats-server stays up for a.laco
// (the yardstick beside each burst) until parar.
func (a *ambiente) medirLacos(ctx context.Context) (l resultadoLacos, parar func(), err error) {
	parar = func() {}
	dir := filepath.Join(a.dir, "bare")
	if a.o.laco == 0 {
		return l, parar, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return l, parar, err
	}
	nats, err := natslocal.Start(a.binNATS, natslocal.Options{Dir: filepath.Join(dir, "nats")})
	if err != nil {
		return l, parar, err
	}
	parar = func() { _ = nats.Stop(syscall.SIGTERM) }
	if err := a.pg.CreateDatabase(ctx, "laco", ""); err != nil {
		return l, parar, err
	}
	medidos := processosMedidos{nats: nats.Pid(), pgDir: a.pg.Dir}
	a.sossegar("", "bare-loop pgbench", medidos)
	if l.PgbenchTPS, err = pgbench(ctx, a.pg, "pgbench", a.o.pgbenchT, filepath.Join(dir, "pgbench.log")); err != nil {
		return l, parar, err
	}
	urlLaco := a.pg.URL("laco")
	rng := rand.New(rand.NewPCG(a.o.seed, 0x1ac0))
	// medir names a measurement oque in the log and in a noisy start's note.
	medir := func(oque string, m, lote int, taxa float64) (x laco, err error) {
		a.sossegar("", "bare loop ("+oque+")", medidos)
		if x, err = medirLaco(ctx, nats.URL(), urlLaco, gerarDemandas(rng, a.pais, m), lote, taxa, medidos); err == nil {
			logf("bare loop, %s: %.0f msgs/s, p50 %.1f ms, p99 %.1f ms", oque, x.Vazao(), ms(x.Lat.P50), ms(x.Lat.P99))
		}
		return x, err
	}
	for _, lote := range []int{1, 64, 256} {
		x, err := medir(fmt.Sprintf("commit ≤ %d", lote), a.o.laco, lote, 0)
		if err != nil {
			return l, parar, err
		}
		l.Lacos = append(l.Lacos, x)
	}
	// The latency floors of any design on this bus and database: one commit
	// per message at the light pass's rate; batched at the paced pass's load.
	if a.o.leve > 0 {
		if l.Leve, err = medir("light", min(a.o.leve, 200), 1, a.o.taxaLeve); err != nil {
			return l, parar, err
		}
	}
	if maximo := l.Lote(); maximo.Vazao() > 0 {
		if l.Ritmado, err = medir("paced", a.o.laco, maximo.Lote, a.o.carga*maximo.Vazao()); err != nil {
			return l, parar, err
		}
	}
	a.laco = func(ctx context.Context, oque string) (laco, error) { return medir(oque, a.o.laco, 256, 0) }
	return l, parar, nil
}

// esperarFold waits, up to a minute, until d6a serve's fairness fold has
// reached the signed log: it starts once the executor has been idle for a
// second, so a bare loop run beside the burst right after it would share
// PostgreSQL with the fold catching up (a yardstick read low).
func esperarFold(ctx context.Context, conn *pgx.Conn) {
	for fim := time.Now().Add(time.Minute); time.Now().Before(fim); time.Sleep(200 * time.Millisecond) {
		var emDia bool
		err := conn.QueryRow(ctx, `SELECT e.registros >= coalesce((SELECT max(tamanho) FROM d6a.transparencia_checkpoints), 0)
			FROM d6a.transparencia_estatisticas_estado e`).Scan(&emDia)
		if err != nil || emDia {
			return
		}
	}
	logf("the fairness fold had not reached the signed log after a minute; the bare loop runs beside it")
}

// sossegar waits for a quiet machine (-wait-quiet) and records a noisy
// start of oque (quem: the run, if any).
func (a *ambiente) sossegar(quem, oque string, p processosMedidos) {
	if outros, quieto := esperarSossego(p, a.o.sossego, oque); !quieto {
		a.ruido = append(a.ruido, fmt.Sprintf("%s%s started with other processes at %.2f cores", quem, oque, outros))
	}
}

// liberar ends the pass's assignments so the next pass meets the same
// counsellors (what conselheiro.ciclo_concluído would do, without the
// events), then vacuums, but not on a fresh database: it stays
// never-analyzed. d6a serve is idle: every result is on the bus.
func liberar(ctx context.Context, conn *pgx.Conn, fresco bool) error {
	for fim := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM d6a.outbox WHERE publicado_em IS NULL`).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			break
		}
		if time.Now().After(fim) {
			return fmt.Errorf("outbox still holds %d unpublished rows after 1 min", n)
		}
	}
	sqls := []string{`UPDATE d6a.atribuicoes SET status = 'concluida' WHERE status = 'ativa'`,
		`UPDATE d6a.conselheiros SET status = 'disponivel' WHERE status = 'ocupado'`,
		`VACUUM (ANALYZE) d6a.conselheiros, d6a.atribuicoes, d6a.outbox, d6a.fila_pendentes`, `CHECKPOINT`}
	if fresco {
		sqls = append(sqls[:2], sqls[3])
	}
	return executarSQL(ctx, conn, sqls...)
}

var terminal = func() bool {
	fi, err := os.Stderr.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}()

func barra(total int, desc string) *progressbar.ProgressBar {
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(os.Stderr), progressbar.OptionSetVisibility(terminal),
		progressbar.OptionSetDescription(desc), progressbar.OptionSetWidth(32),
		progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("/s"),
		progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish())
}
