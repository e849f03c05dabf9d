// The catchup mode (`d6a-bench catchup`; make bench-catchup): N
// agenda.item_disponível wait on the durable while d6a is down, then d6a
// starts and drains them, once with the beacon rule (CONTRACT §4a) and
// once without it, in the same run. The yardstick of the beacon arm is
// the arm without it: the rounds the triggers owe are all out when d6a
// starts, so catching up may not be slower than deciding without them.
//
// Both arms run the colony in this process through internal/colonia, the
// same assembly as `d6a serve`; the arm without the beacon sets
// colonia.Options.SemBeacon, a seam no production build can reach. Each
// arm has a fresh database (the same K counsellors), a fresh nats-server
// and a fresh data directory (its own private beacon, period 1 s).

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/colonia"
	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/natslocal"
	"github.com/formigueiro/d6a/internal/store"
)

type opcoesRecuperacao struct {
	n, k, pares      int
	forma            string
	seed             uint64
	fora             time.Duration // the outage after the last publish
	doc, dir, perfil string
	manter, escrever bool
	comando          string
}

func lerFlagsRecuperacao(args []string) (opcoesRecuperacao, error) {
	fs := flag.NewFlagSet("d6a-bench catchup", flag.ContinueOnError)
	var o opcoesRecuperacao
	q := rapido(args)
	fs.IntVar(&o.n, "n", se(q, 2000, 100_000), "agenda.item_disponível waiting on the durable when d6a starts")
	fs.IntVar(&o.k, "k", se(q, 10_000, 100_000), "counsellors")
	fs.StringVar(&o.forma, "shape", "dense", "the counsellors' shape: sparse or dense (as the draws mode's)")
	fs.IntVar(&o.pares, "pairs", 1, "pairs of arms (with the beacon rule, then without), alternating which goes first")
	fs.DurationVar(&o.fora, "outage", 5*time.Second, "how long d6a stays down after the last publish is acknowledged (≥ 2 s, so every owed round is out)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic country, counsellors and demands")
	fs.StringVar(&o.doc, "doc", "docs/bench.md", "markdown file whose catchup block is rewritten (empty: none)")
	fs.StringVar(&o.dir, "dir", "", "work directory (default: a fresh temporary directory)")
	fs.StringVar(&o.perfil, "cpuprofile", "", "write a Go CPU profile of each arm's drain (the colony runs in this process) into this directory, one file per arm")
	fs.BoolVar(&o.manter, "keep", false, "keep the work directory (the colony's logs, PostgreSQL and NATS data)")
	fs.Bool("quick", false, "N = 2,000, K = 10,000; docs are not written unless -doc is given")
	dado, err := analisarFlags(fs, args)
	if err != nil {
		return o, err
	}
	switch {
	case o.n < 2:
		return o, errors.New("-n must be at least 2")
	case o.k < 1:
		return o, errors.New("-k must be at least 1")
	case formas[o.forma] == nil:
		return o, fmt.Errorf("-shape %q is not sparse or dense", o.forma)
	case o.pares < 1:
		return o, errors.New("-pairs must be at least 1")
	case o.fora < 2*time.Second:
		return o, errors.New("-outage must be at least 2s")
	}
	o.escrever = !q || dado["doc"]
	o.comando = strings.TrimSpace("go run ./cmd/d6a-bench catchup " + strings.Join(args, " "))
	return o, nil
}

// braco is one arm's catch-up.
type braco struct {
	Beacon                              bool
	Pendentes                           uint64        // on the durable when d6a started
	Publicacao                          time.Duration // the N publishes, first to last ack
	Pronto                              time.Duration // d6a's start → /readyz
	Primeiro                            time.Duration // d6a's start → first result
	Ultimo                              time.Duration // d6a's start → last result
	Recebidos, Sorteados, SemCandidatos int
	Rodadas                             int // distinct beacon rounds of the draws (0: no beacon)
	// CPU is the drain's, start to last result: this process (the colony
	// and the bench's subscriber), PostgreSQL and nats-server, and what
	// other processes took meanwhile.
	CPU    usoCPU
	Avisos []string
}

// Vazao is the drain rate: results per second from the first result to the last.
func (b braco) Vazao() float64 {
	return razao(float64(b.Recebidos-1), (b.Ultimo - b.Primeiro).Seconds())
}

// cpuPorResultado is the drain's CPU per result, in ms: this process,
// PostgreSQL and nats-server. A shared machine slows an arm's wall clock
// by what others take; this much less.
func (b braco) cpuPorResultado() float64 {
	return b.CPU.Ms(b.CPU.Eu + b.CPU.PG + b.CPU.NATS)
}

func executarRecuperacao(ctx context.Context, args []string) error {
	o, err := lerFlagsRecuperacao(args)
	if err != nil {
		return err
	}
	inicio := time.Now()
	md, raiz, _, err := medirRecuperacao(ctx, o)
	if err != nil {
		return err
	}
	if err := publicar(raiz, md, o.escrever, map[string]func(string) error{
		o.doc: func(p string) error { return reescrever(p, "catchup", "## Catch-up after an outage", md) },
	}); err != nil {
		return err
	}
	logf("done in %s", time.Since(inicio).Round(time.Second))
	return nil
}

// medirRecuperacao runs the arms and returns them with their report and
// the module's root.
func medirRecuperacao(ctx context.Context, o opcoesRecuperacao) (md, raiz string, bracos []braco, err error) {
	inicio := time.Now()
	b, err := abrirBase(ctx, o.dir, configuracaoPG)
	if b != nil {
		defer func() { b.fechar(o.manter || err != nil) }()
	}
	if err != nil {
		return "", "", nil, err
	}
	logf("d6a-bench catchup: N = %d, K = %d %s, work directory %s", o.n, o.k, o.forma, b.dir)
	binNATS := filepath.Join(b.dir, "bin", "nats-server")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", binNATS, "github.com/nats-io/nats-server/v2")
	cmd.Dir = b.raiz
	if _, err := comSaida(cmd, "go build nats-server"); err != nil {
		return "", "", nil, err
	}
	a := &ambiente{base: b, o: opcoes{seed: o.seed}}
	if err := a.prepararBase(ctx); err != nil {
		return "", "", nil, err
	}
	for par := range o.pares {
		// Alternating the order: a machine that drifts within the run
		// favours neither arm.
		for _, comBeacon := range []bool{par%2 == 0, par%2 != 0} {
			x, err := recuperar(ctx, a, o, binNATS, comBeacon, len(bracos))
			if err != nil {
				return "", "", bracos, fmt.Errorf("arm %d (%s): %w", len(bracos)+1, nomeBraco(comBeacon), err)
			}
			bracos = append(bracos, x)
		}
	}
	return relatorioRecuperacao(o, b, bracos, time.Since(inicio), time.Now().UTC()), b.raiz, bracos, nil
}

func nomeBraco(comBeacon bool) string { return se(comBeacon, "beacon rule on", "beacon rule off") }

// recuperar runs one arm: the colony starts once on a fresh database and
// bus (the stream, the durable and the private beacon's chain exist from
// then on) and stops; N triggers are published; after the outage the
// colony starts again and every result is timed from that start.
func recuperar(ctx context.Context, a *ambiente, o opcoesRecuperacao, binNATS string, comBeacon bool, i int) (x braco, err error) {
	x.Beacon = comBeacon
	nome := fmt.Sprintf("catchup%d_%s", i+1, se(comBeacon, "beacon", "sem_beacon"))
	dir, db := filepath.Join(a.dir, nome), "bench_"+nome
	logf("── arm %d, %s: database %s", i+1, nomeBraco(comBeacon), db)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return x, err
	}
	if err := a.pg.CreateDatabase(ctx, db, "bench_base"); err != nil {
		return x, err
	}
	// The colony logs to its own file, the migrations included.
	logArq, err := os.Create(filepath.Join(dir, "d6a.log"))
	if err != nil {
		return x, err
	}
	defer logArq.Close()
	anterior := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(logArq, &slog.HandlerOptions{Level: slog.LevelInfo})))
	defer slog.SetDefault(anterior)
	url := a.pg.URL(db)
	if err := migrar(ctx, url); err != nil {
		return x, err
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return x, err
	}
	defer conn.Close(context.Background())
	// The same counsellors in every arm: the seed fixes them.
	if err := carregarConselheiros(ctx, conn, a.pais, o.forma, o.k, o.seed, true, func(int) {}); err != nil {
		return x, err
	}
	if err := executarSQL(ctx, conn, `SELECT pg_prewarm(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname IN ('d6a', 'core') AND c.relkind IN ('r', 'i')`, `CHECKPOINT`); err != nil {
		return x, err
	}
	nats, err := natslocal.Start(binNATS, natslocal.Options{Dir: filepath.Join(dir, "nats")})
	if err != nil {
		return x, err
	}
	defer func() { _ = nats.Stop(syscall.SIGTERM) }()
	cfg, err := config.Parse(func(string) (string, bool) { return "", false })
	if err != nil {
		return x, err
	}
	cfg.DatabaseURL, cfg.NATSURL, cfg.DataDir, cfg.HTTPAddr = url, nats.URL(), dir, "127.0.0.1:0"
	cfg.Migrate, cfg.JWTSecret = false, "d6a-bench catchup: 32 bytes or more, no token is ever made with it"

	// Before the outage.
	parar, _, err := subirColonia(ctx, cfg, comBeacon)
	if err != nil {
		return x, err
	}
	if err := parar(); err != nil {
		return x, fmt.Errorf("stopping the colony before the outage: %w", err)
	}

	// The outage: N triggers on the durable, nobody consuming.
	bus, err := conectar(nats.URL(), "")
	if err != nil {
		return x, err
	}
	defer bus.Close()
	// The same demands in every arm (their timestamps aside).
	ds := gerarDemandas(rand.New(rand.NewPCG(o.seed, 0xca7c4)), a.pais, o.n)
	bus.registrar(ds)
	bp := barra(len(ds), "publish             ")
	if x.Publicacao, err = bus.publicar(ctx, assuntoAgenda, ds, 0, func(n int) { _ = bp.Set(n) }); err != nil {
		return x, err
	}
	_ = bp.Finish()
	logf("%d demands published in %s; d6a stays down %s", len(ds), x.Publicacao.Round(time.Millisecond), o.fora)
	time.Sleep(o.fora)
	cons, err := bus.js.Consumer(ctx, cfg.Stream, evento.DurableEntradas)
	if err != nil {
		return x, err
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return x, err
	}
	if x.Pendentes = info.NumPending; x.Pendentes < uint64(o.n) {
		return x, fmt.Errorf("%d messages pending on the durable, want at least %d", x.Pendentes, o.n)
	}

	// The catch-up.
	medidos := processosMedidos{nats: nats.Pid(), pgDir: a.pg.Dir}
	pararPerfil, err := perfilarCPU(o.perfil, nome)
	if err != nil {
		return x, err
	}
	defer pararPerfil()
	antes := amostrar(medidos)
	t0 := time.Now()
	parar, pronto, err := subirColonia(ctx, cfg, comBeacon)
	if err != nil {
		return x, err
	}
	x.Pronto = pronto
	br := barra(len(ds), "results on the bus  ")
	bus.esperar(ctx, ds, 2*time.Minute, func(n int) { _ = br.Set(n) })
	depois := amostrar(medidos)
	pararPerfil()
	_ = br.Finish()
	if err := parar(); err != nil {
		logf("stopping the colony: %v", err)
	}
	if err := ctx.Err(); err != nil {
		return x, err
	}
	for _, d := range ds {
		r := d.recv.Load()
		if r == 0 {
			continue
		}
		em := relogioBase.Add(time.Duration(r)).Sub(t0)
		if x.Recebidos == 0 || em < x.Primeiro {
			x.Primeiro = em
		}
		x.Ultimo = max(x.Ultimo, em)
		x.Recebidos++
		switch d.tipo.Load() {
		case sorteado:
			x.Sorteados++
		case semCandidatos:
			x.SemCandidatos++
		}
	}
	x.CPU = calcularUso(antes, depois, x.Recebidos)
	if x.Recebidos < 2 {
		return x, fmt.Errorf("%d of %d results; log: %s", x.Recebidos, len(ds), logArq.Name())
	}
	if err := conn.QueryRow(ctx, `SELECT count(DISTINCT rodada) FROM d6a.auditoria_sorteios`).Scan(&x.Rodadas); err != nil {
		return x, err
	}
	avisos, _ := lerLog(logArq.Name())
	for _, a := range avisos {
		// What this bench configures on purpose: the development log key
		// and the private beacon.
		if !strings.Contains(a, "D6A_LOG_KEY_FILE") && !strings.Contains(a, "beacon PRIVADO") {
			x.Avisos = append(x.Avisos, a)
		}
	}
	logf("%s: %d of %d results, %.0f results/s from the first to the last; ready after %s, first result after %s, %d distinct rounds; %.2f ms CPU per result (this process %.2f, PostgreSQL %.2f, nats-server %.2f), other processes %.2f cores",
		nomeBraco(comBeacon), x.Recebidos, len(ds), x.Vazao(), x.Pronto.Round(time.Millisecond), x.Primeiro.Round(time.Millisecond), x.Rodadas,
		x.cpuPorResultado(), x.CPU.Ms(x.CPU.Eu), x.CPU.Ms(x.CPU.PG), x.CPU.Ms(x.CPU.NATS), x.CPU.Outros)
	return x, nil
}

// perfilarCPU starts a Go CPU profile into dir/nome.pprof ("" dir: none);
// parar ends it.
func perfilarCPU(dir, nome string) (parar func(), err error) {
	if dir == "" {
		return func() {}, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, nome+".pprof"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	var uma sync.Once
	return func() {
		uma.Do(func() {
			pprof.StopCPUProfile()
			f.Close()
			logf("Go CPU profile: %s", f.Name())
		})
	}, nil
}

// migrar applies d6a's migrations to the database at url (the colony
// then starts with D6A_MIGRATE=false, as the draws mode's d6a serve).
func migrar(ctx context.Context, url string) error {
	st, err := store.Open(ctx, url)
	if err != nil {
		return err
	}
	defer st.Close()
	return store.Migrate(ctx, st.Pool)
}

// subirColonia starts the colony in this process and waits for /readyz;
// pronto is how long that took. parar drains it (the SIGTERM path).
func subirColonia(ctx context.Context, cfg config.Config, comBeacon bool) (parar func() error, pronto time.Duration, err error) {
	inicio := time.Now()
	w, err := colonia.New(ctx, cfg, colonia.Options{SemBeacon: !comBeacon})
	if err != nil {
		return nil, 0, err
	}
	rctx, cancel := context.WithCancel(context.Background())
	feito := make(chan error, 1)
	go func() { feito <- w.Run(rctx) }()
	parar = func() error {
		cancel()
		select {
		case err := <-feito:
			return err
		case <-time.After(time.Minute):
			return errors.New("the colony did not drain within 1 min")
		}
	}
	for w.Ready(ctx) != nil {
		select {
		case err := <-feito:
			cancel()
			return nil, 0, fmt.Errorf("the colony stopped before it was ready: %v", err)
		case <-ctx.Done():
			return parar, 0, errors.Join(ctx.Err(), parar())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return parar, time.Since(inicio), nil
}

// relatorioRecuperacao is the catchup block of docs/bench.md.
func relatorioRecuperacao(o opcoesRecuperacao, b *base, bs []braco, dur time.Duration, data time.Time) string {
	var s strings.Builder
	fmt.Fprintf(&s, "`%s`, %s–%s UTC, %s (%s); %s; PostgreSQL %s, durable.\n\n", o.comando,
		data.Add(-dur).Format("2006-01-02 15:04"), data.Format("15:04"), revisao(b.raiz, "--", "cmd", "internal"), maquina(),
		fmt.Sprintf("load average %s", cargaMedia()), b.versao)
	fmt.Fprintf(&s, "N = %s agenda items on the durable, K = %s counsellors (%s), outage %s after the last publish.\n\n",
		milhares(o.n), milhares(o.k), o.forma, o.fora)
	s.WriteString("| arm | published in | pending at start | ready after | first result after | results/s, first → last | distinct rounds | drawn / no candidates | CPU per result | other processes |\n")
	s.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	var com, sem, cpuCom, cpuSem []float64
	for i, x := range bs {
		fmt.Fprintf(&s, "| %d. %s | %.1f s | %s | %.2f s | %.2f s | %s | %s | %s / %s | %.2f ms | %.2f cores |\n", i+1, nomeBraco(x.Beacon), x.Publicacao.Seconds(), milhares(int(x.Pendentes)),
			x.Pronto.Seconds(), x.Primeiro.Seconds(), milhares(int(x.Vazao()+0.5)), se(x.Beacon, milhares(x.Rodadas), "–"),
			milhares(x.Sorteados), milhares(x.SemCandidatos), x.cpuPorResultado(), x.CPU.Outros)
		if x.Beacon {
			com, cpuCom = append(com, x.Vazao()), append(cpuCom, x.cpuPorResultado())
		} else {
			sem, cpuSem = append(sem, x.Vazao()), append(cpuSem, x.cpuPorResultado())
		}
	}
	var razoes, razoesCPU []string
	for i := range min(len(com), len(sem)) {
		razoes = append(razoes, fmt.Sprintf("%.2f×", razao(com[i], sem[i])))
		razoesCPU = append(razoesCPU, fmt.Sprintf("%.2f×", razao(cpuSem[i], cpuCom[i])))
	}
	fmt.Fprintf(&s, "\nDrain rate with the beacon rule ÷ without (target ≥ 0.8×), pair by pair: **%s**. "+
		"The same as CPU per result, without ÷ with (this process, PostgreSQL and nats-server; less moved by other processes): %s.\n",
		strings.Join(razoes, ", "), strings.Join(razoesCPU, ", "))
	var avisos []string
	for i, x := range bs {
		for _, a := range x.Avisos {
			avisos = append(avisos, fmt.Sprintf("arm %d: %s", i+1, a))
		}
	}
	if len(avisos) > 0 {
		s.WriteString("\nWarnings in the colony's log:\n\n")
		for _, a := range avisos[:min(len(avisos), 10)] {
			s.WriteString("- " + a + "\n")
		}
	}
	return s.String()
}

// cargaMedia is /proc/loadavg's three figures.
func cargaMedia() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], "/")
}
