package main

import (
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/formigueiro/d6a/internal/httpapi"
)

// Targets of the issue.
const (
	alvoRazao = 0.30                  // situacao req/s ≥ 30% of the bare handler's
	alvoP99   = 10 * time.Millisecond // p99 at -rate (1,000/s) below this
)

type relatorioHTTP struct {
	o    opcoesHTTP
	a    *ambienteHTTP
	data time.Time
	dur  time.Duration

	bare, situacao, aberto resultado
	semBanco               resultado     // -diag: 401 path
	banco                  []resultado   // -diag: database only, formasConsulta order
	semCache               resultado     // -diag: the situacao route of the app with Cache nil
	conjunto               *conjuntoHTTP // -cidadaos: the working-set run
	// The cached app's counters just before and just after the
	// closed-loop situacao run (warm-up included).
	cacheAntes, cacheDepois metricasHTTP
	avisos                  []string // the server's log records above info
	pedidos                 int      // and its request log lines
	fundo                   usoCPU   // 2 s before the runs: the machine without our load
}

// outrosMax is the most CPU other processes took during any run.
func (r *relatorioHTTP) outrosMax() float64 {
	m := r.fundo.Outros
	for _, x := range r.linhas() {
		m = max(m, x.CPU.Outros)
	}
	return m
}

func (r *relatorioHTTP) razao() float64 {
	if r.bare.Vazao() == 0 {
		return 0
	}
	return r.situacao.Vazao() / r.bare.Vazao()
}

func (r *relatorioHTTP) linhas() []resultado {
	out := []resultado{r.bare, r.situacao, r.aberto}
	if r.conjunto != nil {
		out = append(out, r.conjunto.bare, r.conjunto.rodada)
	}
	if r.o.diag {
		out = append(out, r.semBanco)
		out = append(out, r.banco...)
		out = append(out, r.semCache)
	}
	return out
}

func carga(x resultado) string {
	if x.Modo == "open" {
		return fmt.Sprintf("open loop, %s req/s offered, %d senders", milhares(x.Taxa), x.Conexoes)
	}
	if strings.HasPrefix(x.Nome, "database") {
		return fmt.Sprintf("closed loop, %d goroutines", x.Conexoes)
	}
	return fmt.Sprintf("closed loop, %d connections", x.Conexoes)
}

func msn(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) }

func (r *relatorioHTTP) alvos() []alvo {
	razao := r.razao()
	a1 := alvo{
		Nome:   "situacao req/s ≥ 30% of the bare fiber handler's (closed loop)",
		Medido: fmt.Sprintf("**%.1f%%** (%s ÷ %s req/s)", 100*razao, milhares(int(r.situacao.Vazao())), milhares(int(r.bare.Vazao()))),
		Ok:     razao >= alvoRazao && r.situacao.Erros == 0,
	}
	precisa := alvoRazao * r.bare.Vazao()
	if razao >= alvoRazao {
		a1.Veredito = fmt.Sprintf("met by %.1f points: %s req/s above the %s req/s the target asks", 100*(razao-alvoRazao), milhares(int(r.situacao.Vazao()-precisa)), milhares(int(precisa)))
	} else {
		a1.Veredito = fmt.Sprintf("missed by %.1f points: %s req/s short of the %s req/s the target asks", 100*(alvoRazao-razao), milhares(int(precisa-r.situacao.Vazao())), milhares(int(precisa)))
	}
	if r.situacao.Erros > 0 {
		a1.Veredito += fmt.Sprintf("; %d errors", r.situacao.Erros)
	}

	p99 := r.aberto.Lat.P99
	a2 := alvo{
		Nome: fmt.Sprintf("situacao p99 < 10 ms at %s req/s (open loop)", milhares(r.o.taxa)),
		Medido: fmt.Sprintf("**%s ms** (p50 %s, p99.9 %s, max %s ms; %.0f req/s achieved)",
			msn(p99), msn(r.aberto.Lat.P50), msn(r.aberto.Lat.P999), msn(r.aberto.Lat.Max), r.aberto.Vazao()),
		Ok: p99 < alvoP99 && r.aberto.Erros == 0,
	}
	if p99 < alvoP99 {
		a2.Veredito = fmt.Sprintf("met with %s ms to spare (%.0f%% of the budget used)", msn(alvoP99-p99), 100*float64(p99)/float64(alvoP99))
	} else {
		a2.Veredito = fmt.Sprintf("missed by %s ms", msn(p99-alvoP99))
	}
	if r.aberto.Erros > 0 {
		a2.Veredito += fmt.Sprintf("; %d errors/unsent", r.aberto.Erros)
	}
	if r.o.taxa != 1000 {
		a2.Veredito += fmt.Sprintf(" — note: measured at %s req/s, the target is stated at 1,000", milhares(r.o.taxa))
	}
	for _, a := range []*alvo{&a1, &a2} {
		a.Veredito = map[bool]string{true: "**met** — ", false: "**missed** — "}[a.Ok] + a.Veredito
	}
	if r.conjunto != nil {
		return append([]alvo{a1, a2}, r.alvosConjunto()...)
	}
	return []alvo{a1, a2}
}

const tituloHTTP = "## HTTP: situacao route"

// nomeSemCache names the diagnostic row of the app with the cache off.
const nomeSemCache = "situacao route, cache off"

// markdown is the generated block of the section.
func (r *relatorioHTTP) markdown() string {
	var b strings.Builder
	o, a := r.o, r.a
	fmt.Fprintf(&b, "`GET /d6a/conselheiros/me/situacao` (CONTRACT §6) with the throttle off and the situacao cache on, as `d6a serve` runs it, against a bare fiber handler measured in the same run. Measured %s UTC (whole run %s) with:\n\n",
		r.data.Format("2006-01-02 15:04"), r.dur.Round(time.Second))
	fmt.Fprintf(&b, "```\n%s\n```\n\n", o.comando)
	// The commit measured and what the working tree changes in the code
	// the route runs.
	fmt.Fprintf(&b, "- code: %s\n", revisao("", "--", "internal/httpapi", "internal/store", "internal/config", "internal/metrics", "sql", "cmd/d6a-bench", "go.mod", "go.sum"))
	fmt.Fprintf(&b, "- machine: %s; PostgreSQL %s\n", maquina(), a.versao)
	fmt.Fprintf(&b, "- **the load generator, the server and PostgreSQL all run on these %d cores**: every number below is what is left to the server once the load generator and the database have taken their share (the CPU columns show each share). A separate load-generator machine would give higher req/s for both routes.\n", runtime.NumCPU())
	if om := r.outrosMax(); om >= 0.15 {
		fmt.Fprintf(&b, "- **other processes were using the machine**: %.2f cores in the 2 s before the runs, up to %.2f cores during them (the \"other processes\" CPU column); the req/s are lower, and the latencies higher, than on a quiet machine\n", r.fundo.Outros, om)
	} else {
		fmt.Fprintf(&b, "- the machine was otherwise quiet: other processes used %.2f cores before the runs and at most %.2f during them\n", r.fundo.Outros, om)
	}
	fmt.Fprintf(&b, "- database: a fresh PostgreSQL from `internal/pglocal` (`Durable: true`, default settings otherwise), migrated, with %d counsellors registered as `conselheiro.cadastrado` does, %d of them `ocupado` with an active assignment; each request carries the "+r.o.alg+" session token of one of them, round-robin, so %d%% of the answers include `atribuicao_ativa`\n",
		len(a.cidadaos), a.comAtribuicao, 100*a.comAtribuicao/max(1, len(a.cidadaos)))
	fmt.Fprintf(&b, "- server: a separate process (this binary re-executed; GOMAXPROCS = %d) serving the real `httpapi.New` app assembled as `d6a serve` assembles it: configured through `config.FromEnv` (`D6A_THROTTLE_POR_MINUTO=0`, pool of %d connections = pgxpool's default, a JSON request log line at info per request written to a file — %s lines in this run, both d6a apps together), with the situacao cache below. On a second port, the same app with its own pool and metrics and `Cache: nil`: the route reading PostgreSQL on every request (the **cache off** diagnostic row). On a third, the **bare app**: fiber with the same server limits (`BodyLimit`, `ReadBufferSize`, timeouts), no middleware, one handler on the same path answering the constant `%s`\n",
		runtime.NumCPU(), a.poolMax, milhares(r.pedidos), corpoBare)
	if a.tamanhoCache > 0 {
		fmt.Fprintf(&b, "- situacao cache: `httpapi.NovoCache(cfg.SituacaoCache)` (`D6A_SITUACAO_CACHE`, default %s citizens) passed as `httpapi.Options.Cache`, with `Cache.Escutar` running on the store's pool as in `d6a serve`. It keeps, per process and per citizen, the database row the route reads (the status is still derived on every request), and answers from it only while `Escutar` holds a LISTEN connection on channel `%s`: triggers on `d6a.conselheiros` and `d6a.atribuicoes` (migration `20261129140000_d6a_notificar_situacao.sql`) NOTIFY every change, committed by any process, and each notification drops the citizen's entry; an entry is also re-read once it is older than `httpapi.CacheTTL` (%s). Without the LISTEN connection every read goes to PostgreSQL. The server announces its addresses only after the cache has answered a probe request (a hit counted in `d6a_situacao_cache_total`), so no run starts before the cache listens.\n",
			milhares(a.tamanhoCache), httpapi.CanalSituacao, httpapi.CacheTTL)
	} else {
		fmt.Fprintf(&b, "- situacao cache: **off** (`D6A_SITUACAO_CACHE` = %d): both d6a apps read PostgreSQL on every request\n", a.tamanhoCache)
	}
	fmt.Fprintf(&b, "- load generator: fasthttp `HostClient` in the parent process, keep-alive connections on loopback. **Closed loop**: %d connections, each sending its next request when the previous answer arrives, %s warm-up then %s measured. **Open loop**: requests scheduled every %s (%s req/s) for %s after a %s paced warm-up, sent by a pool of %d senders; latency runs from each request's *scheduled* time to its answer, so a stall is charged to every request it delays (no coordinated omission). Any answer but 200 counts as an error. Before each run the tool waits up to %s (`-wait-quiet`) for other processes to use under %.1f cores.\n\n",
		o.c, o.aquecimento, o.d, time.Duration(float64(time.Second)/float64(o.taxa)), milhares(o.taxa), o.d, o.aquecimento, o.conexoesAbrt, o.silencio, limiteQuieto)

	fmt.Fprintf(&b, "### Results\n\n")
	fmt.Fprintf(&b, "| run | load | req/s | p50 / p90 / p99 / max (ms) | errors | CPU cores: load gen + server + PostgreSQL + irq/softirq + other processes (machine busy) | CPU µs per request: load gen / server / PostgreSQL / irq+softirq | server read(2) / write(2) per request |\n")
	fmt.Fprintf(&b, "|---|---|--:|--:|--:|--:|--:|--:|\n")
	principais := 3 // the rows before the diagnostics
	if r.conjunto != nil {
		principais = 5
	}
	for i, x := range r.linhas() {
		nome := x.Nome
		if i < principais {
			nome = "**" + nome + "**"
		}
		if x.Nome == nomeSemCache {
			nome += " (`Cache: nil`: PostgreSQL on every request)"
		}
		if x.Detalhe != "" {
			v := "round trips"
			if x.Viagens == 1 {
				v = "round trip"
			}
			nome = fmt.Sprintf("database only, %d %s: %s", x.Viagens, v, x.Detalhe)
		}
		vazao := milhares(int(x.Vazao()))
		if i < 2 || i == 4 && r.conjunto != nil {
			vazao = "**" + vazao + "**"
		}
		lat := fmt.Sprintf("%s / %s / %s / %s", msn(x.Lat.P50), msn(x.Lat.P90), msn(x.Lat.P99), msn(x.Lat.Max))
		if i == 2 {
			lat = fmt.Sprintf("%s / %s / **%s** / %s", msn(x.Lat.P50), msn(x.Lat.P90), msn(x.Lat.P99), msn(x.Lat.Max))
		}
		erros := strconv.Itoa(x.Erros)
		if len(x.Status) > 0 {
			var ss []string
			for k, v := range x.Status {
				n := "transport"
				if k != 0 {
					n = strconv.Itoa(k)
				}
				ss = append(ss, fmt.Sprintf("%s×%d", n, v))
			}
			sort.Strings(ss)
			erros += " (" + strings.Join(ss, ", ") + ")"
		}
		sys := "–"
		if x.Viagens == 0 {
			sys = fmt.Sprintf("%.1f / %.1f", x.CPU.Por(x.CPU.Lidas), x.CPU.Por(x.CPU.Escritas))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.2f + %.2f + %.2f + %.2f + %.2f (%.0f%%) | %.0f / %.0f / %.0f / %.0f | %s |\n",
			nome, carga(x), vazao, lat, erros,
			x.CPU.Eu, x.CPU.D6A, x.CPU.PG, x.CPU.Kernel, x.CPU.Outros, 100*x.CPU.Ocupacao(),
			x.CPU.Us(x.CPU.Eu), x.CPU.Us(x.CPU.D6A), x.CPU.Us(x.CPU.PG), x.CPU.Us(x.CPU.Kernel), sys)
	}
	fmt.Fprintf(&b, "\nOpen loop: %d of %s requests were sent more than 1 ms after their scheduled time (worst %s ms), %d not sent; measured from the actual send instead of the schedule, p50 / p90 / p99 / max = %s / %s / %s / %s ms (the difference is time the request waited for the load generator, which shares the cores).",
		r.aberto.Atrasadas, milhares(r.aberto.Lat.N), msn(r.aberto.AtrasoMax), r.aberto.NaoEnviadas,
		msn(r.aberto.LatEnvio.P50), msn(r.aberto.LatEnvio.P90), msn(r.aberto.LatEnvio.P99), msn(r.aberto.LatEnvio.Max))
	if len(r.avisos) > 0 {
		fmt.Fprintf(&b, " **The server logged %d warnings/errors** (first: %s).", len(r.avisos), r.avisos[0])
	} else {
		fmt.Fprintf(&b, " The server logged no warning or error.")
	}
	if r.o.diag {
		fmt.Fprintf(&b, " The rows after the %s are diagnostics: the situacao route with a token signed by another key (401 after the full %s check, no database), the database read alone, driven with pgx from %d goroutines through a pool of the same size as the server's, no HTTP, and the situacao route of the same app with the cache off.", map[bool]string{false: "third", true: "fifth"}[r.conjunto != nil], r.o.alg, r.o.c)
	}
	fmt.Fprintf(&b, "\n\n%s\n\n", r.cacheTexto())
	if r.conjunto != nil {
		fmt.Fprintf(&b, "%s\n\n", r.conjuntoTexto())
	}

	tabelaAlvos(&b, r.alvos())
	fmt.Fprintf(&b, "\n### What bounds the situacao route\n\n%s\n\n", r.analise())
	return b.String()
}

// analise explains the ratio from the CPU each party spent per request,
// the server's system calls, the cache counters and the diagnostic runs.
// Nothing in it assumes how the handler reads the database: the round trips
// are inferred from the server's write(2) calls, the cache's share from
// d6a_situacao_cache_total.
func (r *relatorioHTTP) analise() string {
	var b strings.Builder
	tot := func(x resultado) float64 {
		return x.CPU.Us(x.CPU.Eu) + x.CPU.Us(x.CPU.D6A) + x.CPU.Us(x.CPU.PG) + x.CPU.Us(x.CPU.Kernel)
	}
	pc := func(c usoCPU) float64 { return 100 * c.Maquina / float64(max(1, c.Nucleos)) }
	porReq := func(n float64, x resultado) float64 { return n / float64(max(1, x.OK+x.Erros)) }
	bare, sit, sb, sc := r.bare, r.situacao, r.semBanco, r.semCache
	diag := r.o.diag && len(r.banco) == len(formasConsulta)
	hr, temCache := sit.CPU.RazaoCache()

	fmt.Fprintf(&b, "- **CPU per request.** Both closed-loop runs keep the machine busy (%.0f%% and %.0f%% of %d cores; other processes took %.2f and %.2f cores), so req/s is about the cores left to this run divided by the CPU one request costs the whole machine. "+
		"A bare-handler request costs %.0f µs (load generator %.0f, server %.0f, kernel irq/softirq %.0f); a situacao request costs %.0f µs (load generator %.0f, d6a %.0f, PostgreSQL %.0f, irq/softirq %.0f). "+
		"%.0f ÷ %.0f = %.1f%%, against the measured ratio of %.1f%%.\n",
		pc(bare.CPU), pc(sit.CPU), runtime.NumCPU(), bare.CPU.Outros, sit.CPU.Outros,
		tot(bare), bare.CPU.Us(bare.CPU.Eu), bare.CPU.Us(bare.CPU.D6A), bare.CPU.Us(bare.CPU.Kernel),
		tot(sit), sit.CPU.Us(sit.CPU.Eu), sit.CPU.Us(sit.CPU.D6A), sit.CPU.Us(sit.CPU.PG), sit.CPU.Us(sit.CPU.Kernel),
		tot(bare), tot(sit), 100*tot(bare)/max(1, tot(sit)), 100*r.razao())

	fmt.Fprintf(&b, "- **The cache.** ")
	if temCache {
		fmt.Fprintf(&b, "In the measured window the cache answered %.2f%% of the situacao reads (%s hits, %s misses: %.4f reads of PostgreSQL per request), and PostgreSQL used %.2f cores, %.0f µs per request. ",
			100*hr, milhares(int(sit.CPU.CacheHit)), milhares(int(sit.CPU.CacheMiss)), porReq(sit.CPU.CacheMiss, sit), sit.CPU.PG, sit.CPU.Us(sit.CPU.PG))
	} else {
		fmt.Fprintf(&b, "The cached app counted no cache reads in the measured window (D6A_SITUACAO_CACHE = %d): every request read PostgreSQL. ", r.a.tamanhoCache)
	}
	if r.o.diag {
		fmt.Fprintf(&b, "Without it (the last row: the same app with `Cache: nil`), the route serves %s req/s, %.1f%% of the bare handler, at %.0f µs of machine CPU per request (load generator %.0f, d6a %.0f, PostgreSQL %.0f, irq/softirq %.0f), against %.0f µs with it: the cached route's rate is %.1f× the cache-off rate.",
			milhares(int(sc.Vazao())), 100*sc.Vazao()/max(1, bare.Vazao()), tot(sc), sc.CPU.Us(sc.CPU.Eu), sc.CPU.Us(sc.CPU.D6A), sc.CPU.Us(sc.CPU.PG), sc.CPU.Us(sc.CPU.Kernel),
			tot(sit), sit.Vazao()/max(1, sc.Vazao()))
	}
	fmt.Fprintf(&b, "\n")
	if r.o.diag {
		fmt.Fprintf(&b, "- **The app without the database.** With a wrong-key token (401 after the full HS256 check) the d6a app serves %s req/s, %.0f%% of the bare handler, at %.0f µs of server CPU per request (bare: %.0f): fiber, the logging/metrics middleware and its JSON log line, recover, HS256. "+
			"A situacao request costs d6a %.0f µs with the cache and %.0f µs without it, %+.0f and %+.0f µs against the 401 path: the handler (cache lookup, status, JSON answer) and, without the cache, its database read.\n",
			milhares(int(sb.Vazao())), 100*sb.Vazao()/max(1, bare.Vazao()), sb.CPU.Us(sb.CPU.D6A), bare.CPU.Us(bare.CPU.D6A),
			sit.CPU.Us(sit.CPU.D6A), sc.CPU.Us(sc.CPU.D6A), sit.CPU.Us(sit.CPU.D6A)-sb.CPU.Us(sb.CPU.D6A), sc.CPU.Us(sc.CPU.D6A)-sb.CPU.Us(sb.CPU.D6A))
		fmt.Fprintf(&b, "- **Round trips.** Per request the d6a process made %.1f read(2) / %.1f write(2) calls on the 401 path, which answers and logs the same way but reads nothing; %.1f / %.1f on the situacao route with the cache; %.1f / %.1f without it. "+
			"The writes beyond the 401 path's are the handler's round trips to PostgreSQL: **≈ %.2f per request with the cache** (it missed %.4f reads per request), **≈ %.2f without it**. "+
			"On loopback each round trip runs the receiving side of the network stack and wakes a backend, and its answer wakes a d6a goroutine: without the cache d6a spends %.0f µs per request, the kernel's irq/softirq %.0f µs and PostgreSQL %.0f µs; with it, %.0f, %.0f and %.0f µs.\n",
			sb.CPU.Por(sb.CPU.Lidas), sb.CPU.Por(sb.CPU.Escritas), sit.CPU.Por(sit.CPU.Lidas), sit.CPU.Por(sit.CPU.Escritas), sc.CPU.Por(sc.CPU.Lidas), sc.CPU.Por(sc.CPU.Escritas),
			sit.CPU.Por(sit.CPU.Escritas)-sb.CPU.Por(sb.CPU.Escritas), porReq(sit.CPU.CacheMiss, sit), sc.CPU.Por(sc.CPU.Escritas)-sb.CPU.Por(sb.CPU.Escritas),
			sc.CPU.Us(sc.CPU.D6A), sc.CPU.Us(sc.CPU.Kernel), sc.CPU.Us(sc.CPU.PG), sit.CPU.Us(sit.CPU.D6A), sit.CPU.Us(sit.CPU.Kernel), sit.CPU.Us(sit.CPU.PG))
	}
	custo := func(x resultado) float64 { return x.CPU.Us(x.CPU.Eu) + x.CPU.Us(x.CPU.PG) + x.CPU.Us(x.CPU.Kernel) }
	if diag {
		h, um, velho := r.banco[0], r.banco[1], r.banco[2]
		fmt.Fprintf(&b, "- **The read alone**, what a miss and every cache-off request pay. Driven directly with pgx from %d goroutines (no HTTP), the handler's query does %s reads/s and costs %.0f µs per read (client %.0f, PostgreSQL %.0f, irq/softirq %.0f); "+
			"`SELECT 1`, a round trip that does no work, %s/s at %.0f µs (client %.0f, PostgreSQL %.0f, irq/softirq %.0f). "+
			"So %.0f%% of the read's cost is the round trip itself, not the join. The handler before commit 37bcf25 (a REPEATABLE READ transaction of %d round trips) does %s reads/s at %.0f µs: the current query is %.1f× its rate.\n",
			r.o.c, milhares(int(h.Vazao())), custo(h), h.CPU.Us(h.CPU.Eu), h.CPU.Us(h.CPU.PG), h.CPU.Us(h.CPU.Kernel),
			milhares(int(um.Vazao())), custo(um), um.CPU.Us(um.CPU.Eu), um.CPU.Us(um.CPU.PG), um.CPU.Us(um.CPU.Kernel),
			100*min(1, custo(um)/max(1, custo(h))), velho.Viagens, milhares(int(velho.Vazao())), custo(velho), h.Vazao()/max(1, velho.Vazao()))
	}
	alvos := r.alvos()
	orcamento := tot(bare) / alvoRazao
	fmt.Fprintf(&b, "- **Verdict.** ")
	if !alvos[0].Ok {
		fmt.Fprintf(&b, "**The 30%% target is missed.** A bare request costs the machine %.0f µs, so 30%% of its rate leaves a budget of **%.0f µs** per situacao request; the route costs %.0f µs, %.1f× the budget. ",
			tot(bare), orcamento, tot(sit), tot(sit)/max(1, orcamento))
	} else {
		fmt.Fprintf(&b, "**The 30%% target is met.** A bare request costs the machine %.0f µs, so 30%% of its rate leaves a budget of **%.0f µs** per situacao request; the route costs %.0f µs, %.0f%% of the budget. ",
			tot(bare), orcamento, tot(sit), 100*tot(sit)/max(1, orcamento))
	}
	if r.o.diag {
		http := tot(sb)
		fmt.Fprintf(&b, "Within it, the HTTP exchange, authentication and logging cost what a 401 request costs (%.0f µs), leaving %.0f µs for the handler; the route spends %.0f µs beyond a 401 request with the cache and %.0f µs without it (the cache-off route costs %.0f µs, %.1f× the budget",
			http, orcamento-http, tot(sit)-http, tot(sc)-http, tot(sc), tot(sc)/max(1, orcamento))
		if diag {
			fmt.Fprintf(&b, "; driven alone, the handler's query costs %.0f µs and a bare `SELECT 1` round trip %.0f µs", custo(r.banco[0]), custo(r.banco[1]))
		}
		fmt.Fprintf(&b, "). ")
	}
	fmt.Fprintf(&b, "The server process alone spends %.0f µs on a bare request and %.0f µs on a situacao request (%.1f%%): the ratio the two rates would approach if the server's own CPU were the only limit, as with the load generator and PostgreSQL on other machines (measured here, sharing the cores: %.1f%%).",
		bare.CPU.Us(bare.CPU.D6A), sit.CPU.Us(sit.CPU.D6A), 100*bare.CPU.Us(bare.CPU.D6A)/max(1, sit.CPU.Us(sit.CPU.D6A)), 100*r.razao())
	if !alvos[1].Ok {
		fmt.Fprintf(&b, " **The p99 target at %s req/s is missed**: p99 %s ms from the schedule, %s ms from the actual send; %d requests left the load generator more than 1 ms late (worst %s ms). At %.0f%% of the closed-loop capacity the machine was %.0f%% busy; every request waits for the scheduler to run d6a goroutines (and, on a cache miss, a PostgreSQL backend) on %d shared cores, so a burst of arrivals queues on the CPUs.",
			milhares(r.o.taxa), msn(r.aberto.Lat.P99), msn(r.aberto.LatEnvio.P99), r.aberto.Atrasadas, msn(r.aberto.AtrasoMax),
			100*float64(r.o.taxa)/max(1, sit.Vazao()), pc(r.aberto.CPU), runtime.NumCPU())
	} else {
		fmt.Fprintf(&b, " The p99 target is met: %s req/s is %.0f%% of the closed-loop capacity, the machine was %.0f%% busy and p99 was %s ms (%s ms from the actual send).",
			milhares(r.o.taxa), 100*float64(r.o.taxa)/max(1, sit.Vazao()), pc(r.aberto.CPU), msn(r.aberto.Lat.P99), msn(r.aberto.LatEnvio.P99))
	}
	fmt.Fprintf(&b, "\n\n`-cpuprofile FILE` saves the server process's CPU profile of the closed-loop situacao run for `go tool pprof`.")
	return b.String()
}

// cacheTexto is the paragraph under the results table on the cache
// counters: before the runs, in the closed-loop situacao run's warm-up and
// window, in the open-loop run's window.
func (r *relatorioHTTP) cacheTexto() string {
	if r.a.tamanhoCache <= 0 {
		return fmt.Sprintf("**Cache:** off (D6A_SITUACAO_CACHE = %d): every situacao request read PostgreSQL.", r.a.tamanhoCache)
	}
	sit, ab := r.situacao.CPU, r.aberto.CPU
	janela, _ := sit.RazaoCache()
	hitTudo, missTudo := r.cacheDepois.hit-r.cacheAntes.hit, r.cacheDepois.miss-r.cacheAntes.miss
	var b strings.Builder
	fmt.Fprintf(&b, "**Cache** (`d6a_situacao_cache_total` of the cached app, read from its /metrics): in the closed-loop situacao run's measured window, %s hits and %s misses, **%.2f%% hits**; over that whole run, warm-up included, %s hits and %s misses. ",
		milhares(int(sit.CacheHit)), milhares(int(sit.CacheMiss)), 100*janela, milhares(int(hitTudo)), milhares(int(missTudo)))
	if h, ok := ab.RazaoCache(); ok {
		fmt.Fprintf(&b, "Open-loop window: %s hits, %s misses (%.2f%%). ", milhares(int(ab.CacheHit)), milhares(int(ab.CacheMiss)), 100*h)
	}
	fmt.Fprintf(&b, "Before the runs, the server's readiness probe and the answers check (which asks each of the %d tokens twice: a miss, then a hit) had counted %s hits and %s misses. "+
		"The first request of each citizen is a miss; so is the first one after an entry is older than `httpapi.CacheTTL` (%s) or was dropped by a notification (nothing writes to the counsellors during the runs). "+
		"Nearly all of a window's reads are therefore hits: the rows with the cache on measure the route's steady state for counsellors polling their own situation, not a citizen's first request, which costs what a cache-off request costs.",
		len(r.a.tokens), milhares(int(r.a.cacheInicial.hit)), milhares(int(r.a.cacheInicial.miss)), httpapi.CacheTTL)
	if janela < 0.99 {
		fmt.Fprintf(&b, " **In this run only %.2f%% of the closed-loop window's reads were hits**: see the server log for a lost LISTEN connection.", 100*janela)
	}
	return b.String()
}
