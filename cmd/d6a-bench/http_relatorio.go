package main

import (
	"fmt"
	"math"
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
	cacheRodada            metricasHTTP  // the cached app's counters over the closed-loop situacao run, warm-up included
	avisos                 []string      // the server's log records above info
	pedidos                int           // and its request log lines
	fundo                  usoCPU        // 2 s before the runs: the machine without our load
}

func (r *relatorioHTTP) razao() float64 { return razao(r.situacao.Vazao(), r.bare.Vazao()) }

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
	if x.Taxa > 0 {
		return fmt.Sprintf("open loop, %s req/s offered, %d senders", milhares(x.Taxa), x.Conexoes)
	}
	return fmt.Sprintf("closed loop, %d %s", x.Conexoes, se(x.Viagens > 0, "goroutines", "connections"))
}

// fila is x's row of the results table, its name, req/s and p99 in bold as
// negrito says (each run's log line is its row).
func (x resultado) fila(negrito [3]bool) string {
	b := func(i int, s string) string { return se(negrito[i], "**"+s+"**", s) }
	var ss []string
	for k, v := range x.Status {
		ss = append(ss, fmt.Sprintf("%s×%d", se(k == 0, "transport", strconv.Itoa(k)), v))
	}
	sort.Strings(ss)
	c := x.CPU
	return fmt.Sprintf("| %s | %s | %s | %s / %s / %s / %s | %d%s | %.2f + %.2f + %.2f + %.2f + %.2f (%.0f%%) | %s | %s |",
		b(0, x.Nome)+se(x.Nome == nomeSemCache, " (`Cache: nil`: PostgreSQL on every request)", ""), carga(x), b(1, milhares(int(x.Vazao()))),
		msn(x.Lat.P50), msn(x.Lat.P90), b(2, msn(x.Lat.P99)), msn(x.Lat.Max), x.Erros, se(len(ss) > 0, " ("+strings.Join(ss, ", ")+")", ""),
		c.Eu, c.D6A, c.PG, c.Kernel, c.Outros, 100*c.Ocupacao(), usPartesHTTP(x), se(x.Viagens == 0, chamadasHTTP(x), "–"))
}

// usPartesHTTP is the CPU µs per request of load gen / server / PostgreSQL / irq+softirq.
func usPartesHTTP(x resultado) string {
	return fmt.Sprintf("%.0f / %.0f / %.0f / %.0f", x.CPU.Us(x.CPU.Eu), x.CPU.Us(x.CPU.D6A), x.CPU.Us(x.CPU.PG), x.CPU.Us(x.CPU.Kernel))
}

// chamadasHTTP is the server's read(2) / write(2) calls per request.
func chamadasHTTP(x resultado) string {
	return fmt.Sprintf("%.1f / %.1f", x.CPU.Por(x.CPU.Lidas), x.CPU.Por(x.CPU.Escritas))
}

func msn(d time.Duration) string { return strconv.FormatFloat(ms(d), 'f', 2, 64) }

// erros is "; n what" when n > 0.
func erros(n int, what string) string { return se(n > 0, fmt.Sprintf("; %d %s", n, what), "") }

// acerto is the share of hits of a (hits, misses) pair; contagem says both.
func acerto(hm [2]float64) float64 { return hm[0] / max(1, hm[0]+hm[1]) }

func contagem(hm [2]float64) string {
	return milhares(int(hm[0])) + " hits, " + milhares(int(hm[1])) + " misses"
}

// acertos is "**99.99% hits** (h hits, m misses)" of a counter pair.
func acertos(hm [2]float64) string {
	return se(hm[0]+hm[1] == 0, "no lookups", fmt.Sprintf("**%.2f%% hits** (%s)", 100*acerto(hm), contagem(hm)))
}

// The targets' verdicts are their own (points, req/s, ms), not margem's
// "missed by x%".
func (r *relatorioHTTP) alvos() (out []alvo) {
	add := func(nome, medido string, ok bool, veredito string) {
		out = append(out, alvo{Nome: nome, Medido: medido, Ok: ok, Veredito: se(ok, "**met** — ", "**missed** — ") + veredito})
	}
	rz, sit, ab, p99 := r.razao(), r.situacao, r.aberto, r.aberto.Lat.P99
	precisa := alvoRazao * r.bare.Vazao()
	add("situacao req/s ≥ 30% of the bare fiber handler's (closed loop)", fmt.Sprintf("**%.1f%%** (%s ÷ %s req/s)", 100*rz, milhares(int(sit.Vazao())), milhares(int(r.bare.Vazao()))),
		rz >= alvoRazao && sit.Erros == 0, fmt.Sprintf("%s by %.1f points: %s req/s %s the %s req/s the target asks", se(rz >= alvoRazao, "met", "missed"), 100*math.Abs(rz-alvoRazao),
			milhares(int(math.Abs(sit.Vazao()-precisa))), se(rz >= alvoRazao, "above", "short of"), milhares(int(precisa)))+erros(sit.Erros, "errors"))
	add(fmt.Sprintf("situacao p99 < 10 ms at %s req/s (open loop)", milhares(r.o.taxa)),
		fmt.Sprintf("**%s ms** (p50 %s, p99.9 %s, max %s ms; %.0f req/s achieved)", msn(p99), msn(ab.Lat.P50), msn(ab.Lat.P999), msn(ab.Lat.Max), ab.Vazao()), p99 < alvoP99 && ab.Erros == 0,
		se(p99 < alvoP99, fmt.Sprintf("met with %s ms to spare (%.0f%% of the budget used)", msn(alvoP99-p99), 100*float64(p99)/float64(alvoP99)), "missed by "+msn(p99-alvoP99)+" ms")+
			erros(ab.Erros, "errors/unsent")+se(r.o.taxa != 1000, " — note: measured at "+milhares(r.o.taxa)+" req/s, the target is stated at 1,000", ""))
	if c := r.conjunto; c != nil {
		x, bare := c.rodada, c.bare
		rz, limite := x.Vazao()/max(1, bare.Vazao()), time.Duration(alvoP99Conjunto*float64(bare.Lat.P99))
		ok1, ok2 := rz >= alvoRazaoConjunto && x.Erros == 0, x.Lat.P99 <= limite && x.Erros == 0
		add(fmt.Sprintf("working set (%s citizens, RS256 through a JWKS): req/s ≥ 50%% of the bare fiber handler's measured just before (closed loop)", milhares(c.n)),
			fmt.Sprintf("**%.1f%%** (%s ÷ %s req/s)", 100*rz, milhares(int(x.Vazao())), milhares(int(bare.Vazao()))), ok1,
			fmt.Sprintf("%s by %.1f points", se(ok1, "met", "missed"), 100*math.Abs(rz-alvoRazaoConjunto))+erros(x.Erros, "errors"))
		add("working set: p99 ≤ 2× the bare fiber handler's p99 (closed loop)", fmt.Sprintf("**%s ms** (bare %s ms, so at most %s ms)", msn(x.Lat.P99), msn(bare.Lat.P99), msn(limite)),
			ok2, fmt.Sprintf("%s by %s ms", se(ok2, "met", "missed"), msn(max(limite-x.Lat.P99, x.Lat.P99-limite)))+erros(x.Erros, "errors"))
	}
	return out
}

const tituloHTTP = "## HTTP: situacao route"

// nomeSemCache names the diagnostic row of the app with the cache off.
const nomeSemCache = "situacao route, cache off"

// markdown is the generated block of the section; how each figure is
// measured is written once, by hand, below the block in docs/bench.md.
func (r *relatorioHTTP) markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	o, a, ab := r.o, r.a, r.aberto
	p("`GET /d6a/conselheiros/me/situacao` against a bare fiber handler in the same run. Measured %s UTC (whole run %s) with:\n\n```\n%s\n```\n\n",
		r.data.Format("2006-01-02 15:04"), r.dur.Round(time.Second), o.comando)
	// The commit measured and what the working tree changes in the code
	// the route runs.
	p("- code: %s\n", revisao("", "--", "internal/httpapi", "internal/store", "internal/config", "internal/metrics", "sql", "cmd/d6a-bench", "go.mod", "go.sum"))
	p("- machine: %s; PostgreSQL %s; load generator, server and PostgreSQL share these %d cores\n", maquina(), a.versao, runtime.NumCPU())
	om := r.fundo.Outros // the most CPU other processes took, before or during any run
	for _, x := range r.linhas() {
		om = max(om, x.CPU.Outros)
	}
	p("- other processes: %.2f cores in the 2 s before the runs, at most %.2f during them%s\n", r.fundo.Outros, om,
		se(om >= 0.15, " — **the machine was shared**: req/s lower and latencies higher than on a quiet machine", ""))
	p("- database: %d counsellors, %d of them `ocupado` with an active assignment; %s tokens round-robin, so %d%% of the answers include `atribuicao_ativa`\n",
		len(a.cidadaos), o.ativos, o.alg, 100*o.ativos/max(1, len(a.cidadaos)))
	p("- server: GOMAXPROCS = %d, pool of %d connections, %s request log lines (both d6a apps); situacao cache `D6A_SITUACAO_CACHE` = %s, `httpapi.CacheTTL` %s; bare answer `%s`\n",
		runtime.NumCPU(), a.poolMax, milhares(r.pedidos), milhares(a.tamanhoCache), httpapi.CacheTTL, corpoBare)
	p("- load: closed loop %d connections, %s warm-up, %s measured; open loop every %s (%s req/s) for %s after %s, %d senders; `-wait-quiet` %s for other processes under %.2f cores\n\n",
		o.c, o.aquecimento, o.d, time.Duration(float64(time.Second)/float64(o.taxa)), milhares(o.taxa), o.d, o.aquecimento, o.conexoesAbrt, o.silencio, limiteQuieto)

	p("### Results\n\n| run | load | req/s | p50 / p90 / p99 / max (ms) | errors | CPU cores: load gen + server + PostgreSQL + irq/softirq + other processes (machine busy) | CPU µs per request: load gen / server / PostgreSQL / irq+softirq | server read(2) / write(2) per request |\n|---|---|--:|--:|--:|--:|--:|--:|\n")
	principais := se(r.conjunto != nil, 5, 3) // the rows before the diagnostics
	for i, x := range r.linhas() {
		p("%s\n", x.fila([3]bool{i < principais, i < 2 || i == 4 && r.conjunto != nil, i == 2}))
	}
	p("\nOpen loop: %d of %s requests sent more than 1 ms after their scheduled time (worst %s ms), %d not sent; from the actual send, p50 / p90 / p99 / max = %s / %s / %s / %s ms.",
		ab.Atrasadas, milhares(ab.Lat.N), msn(ab.AtrasoMax), ab.NaoEnviadas, msn(ab.LatEnvio.P50), msn(ab.LatEnvio.P90), msn(ab.LatEnvio.P99), msn(ab.LatEnvio.Max))
	if len(r.avisos) > 0 {
		p(" **The server logged %d warnings/errors** (first: %s).", len(r.avisos), r.avisos[0])
	} else {
		p(" The server logged no warning or error.")
	}
	if o.diag {
		p(" The rows after the %s are diagnostics (%s tokens; the database rows from %d goroutines).", se(r.conjunto != nil, "fifth", "third"), o.alg, o.c)
	}
	p("\n\n%s\n\n", r.cacheTexto())
	if r.conjunto != nil {
		p("%s\n\n", r.conjuntoTexto())
	}
	tabelaAlvos(&b, r.alvos())
	p("\n### What bounds the situacao route\n\n| figure | measured |\n|---|---|\n")
	r.analise(p)
	p("\n")
	return b.String()
}

// analise explains the ratio from each party's CPU per request, the server's
// system calls (round trips inferred from its write(2) calls), the cache
// counters and the diagnostic runs.
func (r *relatorioHTTP) analise(p func(string, ...any)) {
	tot := func(x resultado) float64 { return x.CPU.Us(x.CPU.Eu + x.CPU.D6A + x.CPU.PG + x.CPU.Kernel) }
	custo := func(x resultado) float64 { return x.CPU.Us(x.CPU.Eu + x.CPU.PG + x.CPU.Kernel) }
	us, sys := usPartesHTTP, chamadasHTTP
	cliente := func(x resultado) string {
		return fmt.Sprintf("%s/s, %.0f µs (client %.0f, PostgreSQL %.0f, irq/softirq %.0f)", milhares(int(x.Vazao())), custo(x), x.CPU.Us(x.CPU.Eu), x.CPU.Us(x.CPU.PG), x.CPU.Us(x.CPU.Kernel))
	}
	bare, sit, sb, sc, ab := r.bare, r.situacao, r.semBanco, r.semCache, r.aberto
	hm, orc := sit.CPU.Cache.situacao, tot(bare)/alvoRazao
	fila := func(nome, format string, args ...any) { p("| %s | "+format+" |\n", append([]any{nome}, args...)...) }
	fila("machine busy, closed loop bare / situacao; other processes (cores)", "%.0f%% / %.0f%% of %d cores; %.2f / %.2f",
		100*bare.CPU.Ocupacao(), 100*sit.CPU.Ocupacao(), runtime.NumCPU(), bare.CPU.Outros, sit.CPU.Outros)
	fila("CPU µs per request (load gen / server / PostgreSQL / irq+softirq): bare; situacao", "**%.0f** (%s); **%.0f** (%s)", tot(bare), us(bare), tot(sit), us(sit))
	fila("bare ÷ situacao CPU per request; measured req/s ratio", "%.0f ÷ %.0f = %.1f%%; %.1f%%", tot(bare), tot(sit), 100*tot(bare)/max(1, tot(sit)), 100*r.razao())
	fila("cache, closed-loop window: hits (hits, misses), PostgreSQL reads per request; PostgreSQL cores, µs per request", "%.2f%% (%s, %s), %.4f; %.2f, %.0f",
		100*acerto(hm), milhares(int(hm[0])), milhares(int(hm[1])), sit.CPU.Por(hm[1]), sit.CPU.PG, sit.CPU.Us(sit.CPU.PG))
	if r.o.diag {
		fila("cache off: req/s, share of the bare handler's; CPU µs per request (load gen / d6a / PostgreSQL / irq); cached ÷ cache-off rate", "%s, %.1f%%; %.0f (%s); %.1f×",
			milhares(int(sc.Vazao())), 100*sc.Vazao()/max(1, bare.Vazao()), tot(sc), us(sc), sit.Vazao()/max(1, sc.Vazao()))
		fila("401 path (wrong-key token, no database): req/s, share of the bare handler's; server µs per request (bare)", "%s, %.0f%%; %.0f (%.0f)",
			milhares(int(sb.Vazao())), 100*sb.Vazao()/max(1, bare.Vazao()), sb.CPU.Us(sb.CPU.D6A), bare.CPU.Us(bare.CPU.D6A))
		fila("d6a µs per situacao request, cache on / off; against the 401 path", "%.0f / %.0f; %+.0f / %+.0f",
			sit.CPU.Us(sit.CPU.D6A), sc.CPU.Us(sc.CPU.D6A), sit.CPU.Us(sit.CPU.D6A)-sb.CPU.Us(sb.CPU.D6A), sc.CPU.Us(sc.CPU.D6A)-sb.CPU.Us(sb.CPU.D6A))
		fila("d6a read(2) / write(2) per request: 401 path; cache on; cache off", "%s; %s; %s", sys(sb), sys(sit), sys(sc))
		fila("round trips to PostgreSQL per request (writes beyond the 401 path's): cache on (misses per request); cache off", "**≈ %.2f** (%.4f); **≈ %.2f**",
			sit.CPU.Por(sit.CPU.Escritas)-sb.CPU.Por(sb.CPU.Escritas), sit.CPU.Por(hm[1]), sc.CPU.Por(sc.CPU.Escritas)-sb.CPU.Por(sb.CPU.Escritas))
	}
	if r.o.diag && len(r.banco) == len(formasConsulta) {
		h, um, velho := r.banco[0], r.banco[1], r.banco[2]
		fila(fmt.Sprintf("the read alone (pgx, %d goroutines): the handler's query; `SELECT 1`; share of the read's cost that is the round trip", r.o.c), "%s; %s; %.0f%%",
			cliente(h), cliente(um), 100*min(1, custo(um)/max(1, custo(h))))
		fila("the handler before commit 37bcf25: round trips; reads/s, µs; the current query's rate ÷ its", "%d; %s, %.0f; %.1f×", velho.Viagens, milhares(int(velho.Vazao())), custo(velho), h.Vazao()/max(1, velho.Vazao()))
	}
	fila("30% budget: bare µs ÷ 0.30; the route's µs, × the budget", "%.0f → **%.0f µs**; %.0f, %.2f×", tot(bare), orc, tot(sit), tot(sit)/max(1, orc))
	if r.o.diag {
		fila("within the budget: a 401 request; left for the handler; the route beyond a 401, cache on / off; the cache-off route, × the budget", "%.0f; %.0f; %.0f / %.0f; %.0f, %.2f×",
			tot(sb), orc-tot(sb), tot(sit)-tot(sb), tot(sc)-tot(sb), tot(sc), tot(sc)/max(1, orc))
	}
	fila("server process alone, µs per request: bare; situacao; ratio (measured, sharing the cores)", "%.0f; %.0f; %.1f%% (%.1f%%)",
		bare.CPU.Us(bare.CPU.D6A), sit.CPU.Us(sit.CPU.D6A), 100*bare.CPU.Us(bare.CPU.D6A)/max(1, sit.CPU.Us(sit.CPU.D6A)), 100*r.razao())
	fila(fmt.Sprintf("open loop at %s req/s: share of the closed-loop capacity; machine busy; p99 from the schedule / from the send; sent > 1 ms late (worst)", milhares(r.o.taxa)),
		"%.0f%%; %.0f%%; %s / %s ms; %d (%s ms)", 100*float64(r.o.taxa)/max(1, sit.Vazao()), 100*ab.CPU.Ocupacao(), msn(ab.Lat.P99), msn(ab.LatEnvio.P99), ab.Atrasadas, msn(ab.AtrasoMax))
}

// cacheTexto is the cache counters' line under the results table.
func (r *relatorioHTTP) cacheTexto() string {
	sit, ab := r.situacao.CPU.Cache.situacao, r.aberto.CPU.Cache.situacao
	return fmt.Sprintf("**Cache** (`d6a_situacao_cache_total`): closed-loop window %s, **%.2f%% hits**; that whole run, warm-up included, %s; open-loop window %s (%.2f%%); "+
		"before the runs (probe and answers check, %d tokens asked twice) %s.", contagem(sit), 100*acerto(sit), contagem(r.cacheRodada.situacao),
		contagem(ab), 100*acerto(ab), len(r.a.tokens), contagem(r.a.cacheInicial.situacao)) +
		se(acerto(sit) < 0.99, fmt.Sprintf(" **In this run only %.2f%% of the closed-loop window's reads were hits**: see the server log for a lost LISTEN connection.", 100*acerto(sit)), "")
}

// conjuntoTexto is the working-set run's line.
func (r *relatorioHTTP) conjuntoTexto() string {
	c, n := r.conjunto, runtime.NumCPU()
	caches := func(m metricasHTTP) string {
		return fmt.Sprintf("verified tokens %s, situacao %s, JWKS keys %s", acertos(m.tokens), acertos(m.situacao), acertos(m.jwks))
	}
	return fmt.Sprintf("**Working set**: %s more counsellors (%s with an active assignment) seeded in %s; RS256 tokens (`kid` `%s`) signed on %d cores in %s, %.2f ms per signature; "+
		"each citizen asked once in %s (%.0f requests/s); caches at %s entries each. Caches over the first requests: %s; **over the random run** (warm-up included): %s. "+
		"**Memory** (VmRSS of the server process): %s started, %s with every citizen cached, %s after the run (peak %s): about %s bytes per citizen.",
		milhares(c.n), milhares(c.ativos), c.semear.Round(time.Second), kidConjunto, n, c.assinar.Round(time.Second), float64(c.assinar.Milliseconds())*float64(n)/float64(max(1, c.n+1)),
		c.encher.Round(time.Second), float64(c.n)/max(0.001, c.encher.Seconds()), milhares(r.a.tamanhoCache), caches(c.primeiros), caches(c.aleatorios),
		mib(c.memInicio.RSS), mib(c.memCheia.RSS), mib(c.memFim.RSS), mib(c.memFim.HWM), milhares(int(c.memCheia.RSS-c.memInicio.RSS)/max(1, c.n)))
}
