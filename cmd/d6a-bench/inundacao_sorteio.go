// The flood mode (`d6a-bench flood`; make bench-flood): bursts of draws
// while clients flood d6a serve's public routes (/metrics, /readyz,
// /estatisticas and the log's partial tiles; issue 50 item 4), each burst
// run twice in the same run, alone and under the flood, so the flooded
// burst is judged against its own yardstick: draws/s ≥ 0.8× alone.

package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/childproc"
)

// alvoInundacao is the target: a burst under the flood keeps at least this
// fraction of its draws/s alone.
const alvoInundacao = 0.8

type opcoesInundacao struct {
	cenario
	m, rodadas, clientes int
	nice                 int
	aquecer, sossego     time.Duration
	seed                 uint64
	doc, dir, d6a        string
	comando              string
	manter, escrever     bool
	perf                 bool
}

func lerFlagsInundacao(args []string) (opcoesInundacao, error) {
	fs := flag.NewFlagSet("d6a-bench flood", flag.ContinueOnError)
	var o opcoesInundacao
	q := rapido(args)
	run := fs.String("run", se(q, "10000/dense", "100000/dense"), "K/shape: K counsellors, shape sparse or dense (as the draws mode's -runs)")
	fs.IntVar(&o.m, "m", se(q, 1000, 5000), "agenda.item_disponível events per burst")
	fs.IntVar(&o.rodadas, "rounds", se(q, 1, 3), "rounds; each runs the burst alone and under the flood (alternating which goes first)")
	fs.IntVar(&o.clientes, "clients", 64, "concurrent flood clients, each asking again as soon as it has its answer")
	fs.IntVar(&o.nice, "nice", 19, "nice(1) of the flood's process (0: not niced): 19 stands for clients on other machines, taking only the CPU the draws leave idle")
	fs.DurationVar(&o.aquecer, "warmup", time.Second, "flood before each flooded burst's first publish")
	fs.DurationVar(&o.sossego, "wait-quiet", se(q, 0, 30*time.Second), "before each burst, wait up to this long for other processes to use under 0.25 cores (0: don't wait)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic country, counsellors and demands")
	fs.StringVar(&o.doc, "doc", "docs/bench.md", "markdown file whose flood section is rewritten (empty: none)")
	fs.StringVar(&o.d6a, "d6a", "", "a prebuilt d6a binary to measure (default: built from ./cmd/d6a)")
	fs.StringVar(&o.dir, "dir", "", "work directory (default: a fresh temporary directory)")
	fs.BoolVar(&o.manter, "keep", false, "keep the work directory")
	fs.BoolVar(&o.perf, "perf", false, "record `perf` CPU profiles and a Go CPU profile of d6a serve during each burst (in the work directory, then kept)")
	fs.Bool("quick", false, "run 10000/dense, M = 1000, one round, no -wait-quiet; docs are not written unless -doc is given")
	dado, err := analisarFlags(fs, args)
	if err != nil {
		return o, err
	}
	o.escrever = !q || dado["doc"]
	o.manter = o.manter || o.perf
	p := strings.Split(*run, "/")
	k, err := strconv.Atoi(strings.ReplaceAll(p[0], "_", ""))
	if err != nil || k < 1 || len(p) != 2 || formas[p[1]] == nil {
		return o, fmt.Errorf("-run: %q is not K/shape with shape sparse or dense", *run)
	}
	o.cenario = cenario{K: k, Forma: p[1]}
	if o.m < 2 || o.rodadas < 1 || o.clientes < 1 {
		return o, fmt.Errorf("-m must be at least 2, -rounds and -clients at least 1")
	}
	o.comando = strings.TrimSpace("go run ./cmd/d6a-bench flood " + strings.Join(args, " "))
	return o, nil
}

// rajada is one burst: alone or under a flood.
type rajada struct {
	Rodada int
	Flood  bool
	P      passe
	F      inundacao
	// FCores is the flood process's CPU over the flood, in cores.
	FCores float64
}

func executarInundacao(ctx context.Context, o opcoesInundacao) (err error) {
	inicio := time.Now()
	// The per-IP limits are off: the flood stands for many addresses (or
	// a CDN in front), so every request reaches the handlers.
	a := &ambiente{o: opcoes{seed: o.seed, pgbenchT: 2, dir: o.dir, manter: o.manter, perf: o.perf},
		env: []string{"D6A_TRANSPARENCIA_POR_MINUTO=0", "D6A_THROTTLE_POR_MINUTO=0"}}
	a.base, err = abrirBase(ctx, o.dir, configuracaoPG)
	if a.lenta = a.base; a.base != nil {
		defer func() { a.base.fechar(o.manter || err != nil) }()
	}
	if err != nil {
		return err
	}
	logf("d6a-bench flood: %s, M = %d, %d rounds, %d clients, work directory %s", o.cenario, o.m, o.rodadas, o.clientes, a.dir)
	a.binD6A, a.binNATS = filepath.Join(a.dir, "bin", "d6a"), filepath.Join(a.dir, "bin", "nats-server")
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
	c := o.cenario
	nome := fmt.Sprintf("k%d_%s", c.K, c.Forma)
	dir, db := filepath.Join(a.dir, nome), "bench_"+nome
	if _, err := a.carregar(ctx, c, dir, db); err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, a.pg.URL(db))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	e, err := a.subir(dir, a.pg.URL(db), "d6a-serve.log")
	defer e.parar()
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(o.seed, uint64(c.K)^0xf100d))
	// The first draw loads the hierarchy cache and signs the first
	// checkpoint, so the flood's tiles exist from the first burst.
	aq := gerarDemandas(rng, a.pais, 1)
	e.bus.registrar(aq)
	if _, err := e.bus.publicar(ctx, assuntoAgenda, aq, 0, func(int) {}); err != nil {
		return err
	}
	if e.bus.esperar(ctx, aq, 2*time.Minute, func(int) {}) != 1 {
		return fmt.Errorf("first draw: no result within 2 min; log:\n%s", childproc.Tail(e.srv.Log))
	}
	var rs []rajada
	for rodada := 1; rodada <= o.rodadas; rodada++ {
		// Alternating which goes first cancels a drift of the machine's
		// speed over the rounds.
		for _, flood := range [][]bool{{false, true}, {true, false}}[(rodada-1)%2] {
			quem := fmt.Sprintf("round %d of %d: ", rodada, o.rodadas)
			nomeP := se(flood, "flooded", "alone")
			if outros, quieto := esperarSossego(e.medidos, o.sossego, nomeP+" burst"); !quieto {
				a.ruido = append(a.ruido, fmt.Sprintf("%s%s burst started with other processes at %.2f cores", quem, nomeP, outros))
			}
			r := rajada{Rodada: rodada, Flood: flood}
			parar := func() (inundacao, float64, error) { return inundacao{}, 0, nil }
			if flood {
				logf("%sflood: %d clients on %s (nice %d)", quem, o.clientes, e.srv.http, o.nice)
				if parar, err = processoInundacao(e.srv.http, o.clientes, o.nice); err != nil {
					return err
				}
				time.Sleep(o.aquecer)
			}
			r.P, err = a.passe(ctx, e, rng, o.m, 0, quem, nomeP)
			var errF error
			r.F, r.FCores, errF = parar()
			if err = cmp.Or(err, errF); err != nil {
				return err
			}
			if r.P.Recebidos < r.P.M {
				return fmt.Errorf("%s%s burst: %d of %d results; log:\n%s", quem, nomeP, r.P.Recebidos, r.P.M, childproc.Tail(e.srv.Log))
			}
			if flood {
				logf("%sflood: %.0f requests/s, %d answered 200, %d answered 503", quem, r.F.Taxa(-1, -1), r.F.Total(-1, 200), r.F.Total(-1, 503))
			}
			rs = append(rs, r)
			if err := liberar(ctx, conn, false); err != nil {
				return err
			}
		}
	}
	if err := e.parar(); err != nil {
		logf("d6a serve exit: %v", err)
	}
	avisos, _ := lerLog(e.srv.Log)
	md := relatorioInundacao(o, a, rs, avisos, time.Since(inicio), time.Now().UTC())
	if err := publicar(a.raiz, md, o.escrever, map[string]func(string) error{
		o.doc: func(p string) error { return reescrever(p, "flood", "## Public routes under a flood", md) },
	}); err != nil {
		return err
	}
	logf("done in %s", time.Since(inicio).Round(time.Second))
	return nil
}

// somaInundacao is the draws/s of every burst alone or flooded, results
// over their time from first result to last, summed over the rounds.
func somaInundacao(rs []rajada, flood bool) float64 {
	var n float64
	var d time.Duration
	for _, r := range rs {
		if r.Flood == flood && r.P.Recebidos > 1 {
			n += float64(r.P.Recebidos - 1)
			d += r.P.Duracao - r.P.Espera - r.P.EsperaRodadas
		}
	}
	return razao(n, d.Seconds())
}

func relatorioInundacao(o opcoesInundacao, a *ambiente, rs []rajada, avisos []string, dur time.Duration, data time.Time) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	sozinho, inundado := somaInundacao(rs, false), somaInundacao(rs, true)
	q := razao(inundado, sozinho)
	w("Run of %s UTC (%s), %s; %s; PostgreSQL %s.\n\n", data.Format("2006-01-02 15:04"), dur.Round(time.Second),
		revisao(a.raiz, "--", "cmd", "internal"), maquina(), a.versao)
	w("```\n%s\n```\n\n", o.comando)
	w("%s, bursts of %s `agenda.item_disponível` published as fast as JetStream acknowledges; draws/s = results from the first to the last ÷ that time (the beacon rounds' waits are left out, as in the draws mode). Each round runs the burst alone and under the flood (alternating which goes first); the flood is %d clients, each asking again as soon as it has its answer, cycling through `/metrics`, `/readyz`, `/d6a/transparencia/estatisticas` and the partial tiles at the edge of the latest checkpoint (read every 500 ms), started %s before the burst, in a process of its own%s; the per-IP limits are off (`D6A_TRANSPARENCIA_POR_MINUTO=0`): a flood from many addresses.\n\n",
		descreverK(o.cenario), milhares(o.m), o.clientes, o.aquecer,
		se(o.nice != 0, fmt.Sprintf(" at nice %d (clients on other machines: it takes only the CPU the draws leave idle)", o.nice), ", not niced (it competes with the draws for the same cores)"))
	w("| round | burst | draws/s | published in | first result after | d6a serve | PostgreSQL | nats-server | publisher | flood process | machine |\n|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rs {
		u := r.P.CPU
		w("| %d | %s | %.0f | %.0f ms | %.0f ms | %.2f | %.2f | %.2f | %.2f | %s | %.2f of %d |\n", r.Rodada, se(r.Flood, "under the flood", "alone"), r.P.Vazao(), ms(r.P.Publicacao), ms(r.P.Espera),
			u.D6A, u.PG, u.NATS, u.Eu, se(r.Flood, fmt.Sprintf("%.2f", r.FCores), "–"), u.Maquina, u.Nucleos)
	}
	w("\n(CPU in cores over each burst; the flood process's over its flood.) Draws/s over every round: alone %.0f, under the flood %.0f: **%.2f×** (target ≥ %.1f×: %s); round by round %s.\n\n",
		sozinho, inundado, q, alvoInundacao, se(q >= alvoInundacao, "met", "**missed**"), razoesPorRodada(rs))
	var f inundacao
	for _, r := range rs {
		if !r.Flood {
			continue
		}
		f.Clientes, f.Duracao = r.F.Clientes, f.Duracao+r.F.Duracao
		for i, m := range r.F.Status {
			if f.Status[i] == nil {
				f.Status[i] = map[int]int{}
			}
			for s, k := range m {
				f.Status[i][s] += k
			}
			f.Lat[i] = se(r.F.Lat[i].P99 > f.Lat[i].P99, r.F.Lat[i], f.Lat[i])
		}
	}
	ss := f.statusVistos()
	w("The flood over the flooded bursts (%s in all): %s requests, **%.0f/s**.\n\n| route | requests/s |", f.Duracao.Round(100*time.Millisecond), milhares(f.Total(-1, -1)), f.Taxa(-1, -1))
	for _, s := range ss {
		w(" %s |", se(s == 0, "no answer", strconv.Itoa(s)))
	}
	w(" p50 | p99 (worst burst) |\n|---|--:|%s--:|--:|\n", strings.Repeat("--:|", len(ss)))
	for r := range nRotas {
		w("| `%s` | %.0f |", nomesRotas[r], f.Taxa(r, -1))
		for _, s := range ss {
			w(" %s |", milhares(f.Total(r, s)))
		}
		w(" %.1f ms | %.1f ms |\n", ms(f.Lat[r].P50), ms(f.Lat[r].P99))
	}
	if len(a.ruido) > 0 || len(avisos) > 0 {
		w("\nNotes:\n")
		for _, s := range a.ruido {
			w("- %s\n", s)
		}
		for _, s := range resumirAvisos(avisos) {
			w("- d6a serve logged: %s\n", s)
		}
	}
	return b.String()
}

// razoesPorRodada is each round's flooded ÷ alone draws/s: "0.85×, 0.38×".
func razoesPorRodada(rs []rajada) string {
	var out []string
	for i := 0; i+1 < len(rs); i += 2 {
		a, b := rs[i], rs[i+1]
		if a.Flood {
			a, b = b, a
		}
		out = append(out, fmt.Sprintf("%.2f×", razao(b.P.Vazao(), a.P.Vazao())))
	}
	return strings.Join(out, ", ")
}

// descreverK is "K = 100,000 counsellors, dense".
func descreverK(c cenario) string {
	return "K = " + milhares(c.K) + " counsellors, " + c.Forma
}

// resumirAvisos counts repeated log lines: "WARN x (×12)".
func resumirAvisos(avisos []string) []string {
	conta := map[string]int{}
	var ordem []string
	for _, s := range avisos {
		if conta[s] == 0 {
			ordem = append(ordem, s)
		}
		conta[s]++
	}
	for i, s := range ordem {
		if conta[s] > 1 {
			ordem[i] = fmt.Sprintf("%s (×%s)", s, milhares(conta[s]))
		}
	}
	return ordem
}
