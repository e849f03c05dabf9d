package main

import (
	"cmp"
	"fmt"
	"html"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"
)

func cpuPorSorteio(u usoCPU) string {
	return fmt.Sprintf("%.2f / %.2f / %.2f", u.Ms(u.D6A), u.Ms(u.PG), u.Ms(u.NATS))
}

func cpuTotal(u usoCPU) float64 { return u.Ms(u.D6A) + u.Ms(u.PG) + u.Ms(u.NATS) }

// juntar joins f of each of xs with sep.
func juntar[T any](xs []T, sep string, f func(T) string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = f(x)
	}
	return strings.Join(s, sep)
}

// razao is a ÷ b, 0 when b is (a pass or a yardstick that did not run).
func razao(a, b float64) float64 { return se(b == 0, 0, a/b) }

// relatorio is the results section of docs/bench.md.
type relatorio struct {
	a     *ambiente
	rs    []resultadoK
	lacos resultadoLacos
	dur   time.Duration
	data  time.Time
}

type alvo struct {
	Nome, Medido, Veredito string
	Ok                     bool
}

// achar returns the run of shape forma (fresh or not, not tmpfs) whose K is
// nearest (log scale) to k.
func achar(rs []resultadoK, k int, forma string, fresco bool) (best resultadoK, ok bool) {
	dist := math.Inf(1)
	for _, r := range rs {
		if d := math.Abs(math.Log(float64(r.K)) - math.Log(float64(k))); r.Forma == forma && r.Fresco == fresco && !r.Tmpfs && d < dist {
			best, dist, ok = r, d, true
		}
	}
	return best, ok
}

// margem describes how far valor is from limite, for "≤ limite" when menor.
func margem(valor, limite float64, menor bool) (bool, string) {
	switch {
	case menor && valor <= limite || !menor && valor >= limite:
		return true, "**met**"
	case menor:
		return false, fmt.Sprintf("**missed** by %.0f%% (%.2f× the limit)", 100*(valor/limite-1), valor/limite)
	}
	return false, fmt.Sprintf("**missed** by %.0f%% (reaches %.2f of the target)", 100*(1-valor/limite), valor/limite)
}

// piso names a bare-loop measurement (como: at what load), the latency
// floor of any design on this bus and database; empty when not measured.
func piso(l laco, como string) string {
	return se(l.M == 0, "", fmt.Sprintf("; the bare loop %s: p50 %.1f ms, p99 %.1f ms", como, ms(l.Lat.P50), ms(l.Lat.P99)))
}

// avaliar holds the runs to issue 24's targets, each a ratio to a
// yardstick measured in the same run (absolute times do not carry from
// one machine to the next).
func (r *relatorio) avaliar() (out []alvo) {
	o, bare := r.a.o, r.lacos.Lote()
	// add holds q to limite (≤ when menor, else ≥); against a bare-loop
	// yardstick l that did not run, the target is not measured.
	add := func(nome, medido string, l *laco, q, limite float64, menor bool) {
		ok, v := margem(q, limite, menor)
		if l != nil && l.M == 0 {
			ok, v = false, "**not measured** (the bare loop did not run: -bare-m 0)"
		}
		out = append(out, alvo{Nome: nome, Medido: medido, Ok: ok, Veredito: v})
	}
	// Burst throughput on the bus against the batched bare loop, at
	// K≈100,000 of each shape and at K≈1,000,000 when it ran; the
	// K≈100,000 runs' latencies, for the latency targets.
	var p50, p99, p99r, proc, procP99 float64
	var leves, ritmadas []string
	for _, c := range []cenario{{K: 100_000, Forma: "sparse"}, {K: 100_000, Forma: "dense"}, {K: 100_000, Forma: "dense", Fresco: true},
		{K: 100_000, Forma: "sparse", Fresco: true}, {K: 1_000_000, Forma: "sparse"}, {K: 1_000_000, Forma: "dense"}} {
		x, ok := achar(r.rs, c.K, c.Forma, c.Fresco)
		if !ok || c.K > 100_000 && x.K <= 100_000 {
			continue
		}
		if c.K == 100_000 {
			p50, p99, p99r = max(p50, ms(x.Leve.Lat.P50)), max(p99, ms(x.Leve.Lat.P99)), max(p99r, ms(x.Ritmada.Lat.P99))
			leves = append(leves, fmt.Sprintf("%s %.1f / %.1f ms", x.cenario, ms(x.Leve.Lat.P50), ms(x.Leve.Lat.P99)))
			proc, procP99 = max(proc, ms(x.Leve.AposRodada.P50)), max(procP99, ms(x.Leve.AposRodada.P99))
			ritmadas = append(ritmadas, fmt.Sprintf("%s %.1f ms at %.0f/s (quiet draws %.1f ms)", x.cenario, ms(x.Ritmada.Lat.P99), x.Ritmada.TaxaOfertada, ms(x.Ritmada.Quietas.P99)))
		}
		vara, onde := bare.Vazao(), "at the start"
		if v := x.lacoAdjacente(); v > 0 {
			vara, onde = v, fmt.Sprintf("the mean of %.0f just before and %.0f just after the burst; %.0f at the start", x.LacoAntes.Vazao(), x.LacoDepois.Vazao(), bare.Vazao())
		}
		q := razao(x.Maxima.Vazao(), vara)
		add(fmt.Sprintf("burst of %s: draws/s on the bus ≥ 0.9 × the bare loop (%s)", milhares(x.Maxima.M), x.cenario),
			fmt.Sprintf("%.0f draws/s ÷ %.0f msgs/s (bare loop, commits of ≤ %d, %s) = **%.2f×**; %.2f× pgbench's %.0f tps",
				x.Maxima.Vazao(), vara, bare.Lote, onde, q, razao(x.Maxima.Vazao(), x.PgbenchTPS), x.PgbenchTPS), &bare, q, 0.9, false)
	}
	// On the fast disk fsync costs next to nothing and CPU per result
	// shows: results/s (draws and sem_candidatos) against pgbench on the
	// same cluster.
	for _, x := range r.rs {
		if q := razao(x.Maxima.Vazao(), x.PgbenchTPS); x.Tmpfs {
			add(fmt.Sprintf("fast disk, burst of %s: results/s ≥ 0.9 × pgbench on the same cluster (%s)", milhares(x.Maxima.M), x.cenario),
				fmt.Sprintf("%.0f results/s ÷ %.0f tps = **%.2f×**; CPU ms per result d6a / PostgreSQL / nats-server %s", x.Maxima.Vazao(), x.PgbenchTPS, q, cpuPorSorteio(x.Maxima.CPU)), nil, q, 0.9, false)
		}
	}
	// Per-draw cost of the run at K≈100,000 of shape cx over that of cy.
	custo := func(nome string, cx, cy cenario) {
		x, okX := achar(r.rs, 100_000, cx.Forma, cx.Fresco)
		y, okY := achar(r.rs, 100_000, cy.Forma, cy.Fresco)
		if !okX || !okY || x.Maxima.Vazao() == 0 {
			return
		}
		q := razao(y.Maxima.Vazao(), x.Maxima.Vazao()) // wall per draw of x ÷ of y
		cpuX, cpuY := cpuTotal(x.Maxima.CPU), cpuTotal(y.Maxima.CPU)
		add(fmt.Sprintf("%s (%s ÷ %s): per-draw cost ≤ 1.2×", nome, x.cenario, y.cenario),
			fmt.Sprintf("wall time per draw of the burst (1 ÷ draws/s) %.3f ÷ %.3f ms = **%.2f×**; CPU per draw (d6a + PostgreSQL + nats-server) %.2f ÷ %.2f ms = %.2f×",
				1000/x.Maxima.Vazao(), 1000/y.Maxima.Vazao(), q, cpuX, cpuY, razao(cpuX, cpuY)), nil, q, 1.2, true)
	}
	custo("dense over sparse", cenario{Forma: "dense"}, cenario{Forma: "sparse"})
	custo("fresh over analyzed", cenario{Forma: "dense", Fresco: true}, cenario{Forma: "dense"})
	// Latency at light load and at half of the maximum, against the bare
	// loop at the same rate (light) and at half its own maximum.
	if l := r.lacos.Leve; o.leve > 0 && len(leves) > 0 {
		q50, q99 := razao(p50, ms(l.Lat.P50)), razao(p99, ms(l.Lat.P99))
		add(fmt.Sprintf("light load (%g events/s): publish → result p50 ≤ 1.5 ×, p99 ≤ 2 × the bare loop's", o.taxaLeve),
			fmt.Sprintf("worst p50 %.1f ms = **%.2f×**, worst p99 %.1f ms = **%.2f×** (p50 / p99: %s; %s events each)%s; from the later of the demand's publish and its beacon round's to the result, p50 %.2f ms and p99 %.2f ms at worst, the rest the round's wait (CONTRACT §4a)",
				p50, q50, p99, q99, strings.Join(leves, ", "), milhares(o.leve), piso(l, "at the same rate, one commit per message"), proc, procP99), &l, q50, 1.5, true)
		ok1, v1 := margem(q50, 1.5, true)
		ok2, v2 := margem(q99, 2, true)
		if a := &out[len(out)-1]; l.M > 0 && !(ok1 && ok2) {
			a.Ok, a.Veredito = false, "p50 "+v1+"; p99 "+v2
		}
	}
	if l := r.lacos.Ritmado; len(leves) > 0 {
		q := razao(p99r, ms(l.Lat.P99))
		add(fmt.Sprintf("%.0f%% of the maximum load: p99 ≤ 2 × the bare loop's at %.0f%% of its own", o.carga*100, o.carga*100),
			fmt.Sprintf("worst %.1f ms = **%.2f×** (%s)%s", p99r, q, strings.Join(ritmadas, ", "), piso(l, fmt.Sprintf("with commits of ≤ %d at %.0f%% of its own maximum (%.0f/s)", l.Lote, 100*o.carga, l.Taxa))), &l, q, 2, true)
	}
	// Flat cost over K (light pass, every result).
	if pequeno, ok := achar(r.rs, 1_000, "sparse", false); o.leve > 0 && ok {
		for _, forma := range []string{"sparse", "dense"} {
			if grande, ok := achar(r.rs, 1_000_000, forma, false); ok && grande.K != pequeno.K {
				g, pq := mediana(grande.LevesP50), mediana(pequeno.LevesP50)
				q := razao(ms(g), ms(pq))
				add(fmt.Sprintf("p50 at K=1,000,000 ≤ 1.2 × p50 at K=1,000, every result, light load (%s), median of %d interleaved passes", forma, rodadasLeves),
					fmt.Sprintf("%s %.2f ms ÷ %s %.2f ms = **%.2f×** (p50 of each pass, in order: %s; %s)", grande.cenario, ms(g), pequeno.cenario, ms(pq), q,
						listaMs(grande.LevesP50), listaMs(pequeno.LevesP50)), nil, q, 1.2, true)
			}
		}
	}
	// RSS at the largest K, and the slowest hierarchy cache load.
	var grande, pior resultadoK
	for _, x := range r.rs {
		if x.K > grande.K || (x.K == grande.K && x.MemFim.HWM > grande.MemFim.HWM) {
			grande = x
		}
		if x.Hierarquia.Duracao >= pior.Hierarquia.Duracao {
			pior = x
		}
	}
	add("`d6a serve` RSS ≤ 150 MB at K=1,000,000",
		fmt.Sprintf("%s, %s UCs: peak (VmHWM) **%.1f MB**, at the end (VmRSS) %.1f MB", grande.cenario, milhares(grande.UCs), mb(grande.MemFim.HWM), mb(grande.MemFim.RSS)), nil, mb(grande.MemFim.HWM), 150, true)
	add("hierarchy cache load ≤ 2 s",
		fmt.Sprintf("slowest **%.2f s** (%s, %s UCs; RSS +%.1f MB over the first draw)", pior.Hierarquia.Duracao.Seconds(),
			pior.cenario, milhares(pior.Hierarquia.UCs), mb(pior.MemDepois.RSS-pior.MemAntes.RSS)), nil, pior.Hierarquia.Duracao.Seconds(), 2, true)
	return out
}

func tabelaAlvos(b *strings.Builder, alvos []alvo) {
	fmt.Fprintf(b, "### Targets\n\n| target | measured | verdict |\n|---|---|---|\n")
	for _, a := range alvos {
		fmt.Fprintf(b, "| %s | %s | %s |\n", a.Nome, a.Medido, a.Veredito)
	}
}

const tituloSecao = "## Draws at national scale"

func (r *relatorio) markdown() string {
	var b strings.Builder
	o, a := r.a.o, r.a
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("### Results\n\nMeasured %s UTC in %s with:\n\n```\n%s\n```\n\n", r.data.Format("2006-01-02 15:04"), r.dur.Round(time.Second), o.comando)
	// Other work in progress is measured too: only the bench's own files
	// and the docs it writes are left out.
	p("- code: %s\n", revisao(a.raiz, "--untracked-files=no", "--", ".", ":!cmd/d6a-bench", ":!docs"))
	p("- machine: %s\n", maquina())
	p("- PostgreSQL %s, durable, %s\n", a.versao, juntar(slices.Sorted(maps.Keys(configuracaoPG)), ", ", func(k string) string { return k + "=" + configuracaoPG[k] }))
	p("- bus: %s\n", se(o.embutido, "d6a serve's embedded NATS server (`SyncAlways`; its memory counts in d6a's RSS)", "a separate `nats-server` v2.15.2, `sync_interval: always`"))
	p("- country: %s UCs; **sparse** = %s; **dense** = %s\n", milhares(a.pais.Tamanho()), descreverForma("sparse"), descreverForma("dense"))
	p("- per run: pgbench -T %d; light pass %s demands at %g/s; burst M = %s; paced pass M at %.0f%% of the burst's rate; the flat-cost runs' light pass %d more times (median of %d)\n",
		o.pgbenchT, milhares(o.leve), o.taxaLeve, milhares(o.m), o.carga*100, rodadasLeves-1, rodadasLeves)
	if len(r.lacos.Lacos) > 0 {
		p("- bare loop: %s messages each; floors at the light pass's rate and at %.0f%% of its own maximum; the burst's yardstick (÷ bare loop) is the batched loop measured again just before and just after each burst (their mean), where it ran, each once d6a serve's fairness fold has reached the signed log\n", milhares(o.laco), o.carga*100)
	}
	bare := r.lacos.Lote()
	p("\n| run | pgbench tps | burst draws/s | ÷ pgbench | ÷ bare loop (≤ %d) | burst: publish/s, p50 / p99 (ms), first result / rounds' waits after it (ms) | CPU ms per draw, burst: d6a / PostgreSQL / nats-server | units per transaction, burst | light (%g/s) p50 / p99 (ms) | paced: offered/s, p50 / p99 (ms) | sorteado share | RSS end / peak (MB) |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n", bare.Lote, o.taxaLeve)
	for _, x := range r.rs {
		mx, rt := x.Maxima, x.Ritmada
		p("| %s | %.0f | **%.0f** | **%.2f×** | %.2f× | %.0f, %.0f / %.0f, %.0f / %.0f | %s | %.1f | **%.1f / %.1f** | %.0f, **%.1f / %.1f** | %.0f%% | %.1f / **%.1f** |\n",
			x.cenario, x.PgbenchTPS, mx.Vazao(), razao(mx.Vazao(), x.PgbenchTPS), razao(mx.Vazao(), cmp.Or(x.lacoAdjacente(), bare.Vazao())),
			float64(mx.M)/mx.Publicacao.Seconds(), ms(mx.Lat.P50), ms(mx.Lat.P99), ms(mx.Espera), ms(mx.EsperaRodadas), cpuPorSorteio(mx.CPU), razao(mx.Lotes.Unidades, mx.Lotes.Transacoes),
			ms(x.Leve.Lat.P50), ms(x.Leve.Lat.P99), rt.TaxaOfertada, ms(rt.Lat.P50), ms(rt.Lat.P99),
			100*razao(float64(mx.Sorteados+rt.Sorteados), float64(mx.Recebidos+rt.Recebidos)), mb(x.MemFim.RSS), mb(x.MemFim.HWM))
	}
	if len(r.lacos.Lacos) > 0 {
		p("\n| bare loop | pgbench tps | msgs/s | ÷ pgbench | inputs published/s | CPU ms per message: loop and publisher / PostgreSQL / nats-server |\n|---|--:|--:|--:|--:|--:|\n")
		for _, x := range r.lacos.Lacos {
			p("| %s | %.0f | **%.0f** | **%.2f×** | %.0f | %.2f / %.2f / %.2f |\n", se(x.Lote == 1, "commit per message", fmt.Sprintf("commit per batch of ≤ %d", x.Lote)),
				r.lacos.PgbenchTPS, x.Vazao(), razao(x.Vazao(), r.lacos.PgbenchTPS), float64(x.M)/x.Publicacao.Seconds(), x.CPU.Ms(x.CPU.Eu), x.CPU.Ms(x.CPU.PG), x.CPU.Ms(x.CPU.NATS))
		}
		if l := r.lacos.Leve; l.M > 0 {
			p("\nThe bare loop at the light pass's rate (%g/s, %s messages, one commit per message): publish → result on a core subscription p50 **%.1f ms**, p99 **%.1f ms**, the floor under d6a's light-load latency on this bus and database.\n",
				l.Taxa, milhares(l.M), ms(l.Lat.P50), ms(l.Lat.P99))
		}
	}
	var (
		notas     []string
		avisos    int
		primeiros []string
	)
	for _, x := range r.rs {
		for _, ps := range []passe{x.Leve, x.Maxima, x.Ritmada} {
			if ps.Recebidos < ps.M {
				notas = append(notas, fmt.Sprintf("%s: %d results missing", x.cenario, ps.M-ps.Recebidos))
			}
		}
		if x.Fresco && x.Estatisticas != 0 {
			notas = append(notas, fmt.Sprintf("%s: the d6a tables have %d pg_statistic rows at the end (analyzed during the run)", x.cenario, x.Estatisticas))
		}
		if len(x.Avisos) > 0 {
			avisos += len(x.Avisos)
			if !slices.Contains(primeiros, x.Avisos[0]) {
				primeiros = append(primeiros, x.Avisos[0])
			}
		}
	}
	if avisos > 0 {
		notas = append(notas, fmt.Sprintf("d6a serve logged %d warnings/errors over the runs (first of each kind: %s)", avisos, strings.Join(primeiros, " / ")))
	}
	p("\nHierarchy of %s UCs cached in%s; RSS of d6a serve before → after the first draw%s%s (runs in the order of the table).", milhares(r.rs[0].Hierarquia.UCs),
		juntar(r.rs, "", func(x resultadoK) string { return fmt.Sprintf(" %.2f s", x.Hierarquia.Duracao.Seconds()) }),
		juntar(r.rs, "", func(x resultadoK) string {
			return fmt.Sprintf(" %.0f → %.0f MB", mb(x.MemAntes.RSS), mb(x.MemDepois.RSS))
		}),
		se(r.rs[0].NATSMem.HWM > 0, "; separate nats-server peak RSS"+juntar(r.rs, "", func(x resultadoK) string { return fmt.Sprintf(" %.0f MB", mb(x.NATSMem.HWM)) }), ""))
	b.WriteString(se(len(notas) > 0, " **Anomalies:** "+strings.Join(notas, "; ")+".",
		" Every demand got its result; every fresh run ended with 0 `pg_statistic` rows; d6a serve logged no warning or error."))
	if len(a.ruido) > 0 {
		p(" **Shared machine** (after waiting up to %s for quiet): %s.", o.sossego, strings.Join(a.ruido, "; "))
	} else if o.sossego > 0 {
		p(" Every pgbench run and pass started on a quiet machine (other processes under %.2f cores).", limiteQuieto)
	}
	p("\n\n![p50/p99 latency and draws/s against K](bench-draws.svg)\n\n")
	b.WriteString("\n")
	r.fasesLeves(p)
	tabelaAlvos(&b, r.avaliar())

	// Server-side breakdown of the burst and the light pass at K≈100,000,
	// dense.
	x, ok := achar(r.rs, 100_000, "dense", false)
	if !ok {
		x = r.rs[0]
	}
	dentroDoPG(p, "the burst", x, x.Maxima, x.PG)
	b.WriteString("\n")
	return b.String()
}

// passes are the burst's batches, every pass of every run and PostgreSQL
// during the light pass: printed with the report, not written to
// docs/bench.md, whose tables hold their headlines.
func (r *relatorio) passes() string {
	var b strings.Builder
	o := r.a.o
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("Batches of the burst (`d6a_lote_unidades`, `d6a_lotes_desfeitos_total`, `d6a_elegibilidade_*`, `d6a_transacao_fase_segundos`):\n\n| run | batches | executor in transactions |\n|---|---|---|\n")
	for _, x := range r.rs {
		p("| %s | %s | %s |\n", x.cenario, x.Maxima.Lotes, ocupacaoExecutor(x.Maxima))
	}
	if x, ok := achar(r.rs, 100_000, "dense", false); ok {
		dentroDoPG(p, fmt.Sprintf("the light pass (%g/s)", o.taxaLeve), x, x.Leve, x.PGLeve)
	}
	p("\nPer pass (other processes in cores out of %d; quiet draws: other processes ≤ %.2f cores):\n\n", runtime.NumCPU(), limiteQuieto)
	p("| run | pass | end-to-end p50 / p99 (ms) | quiet draws: n, p50 / p99 (ms) | d6a handler p50 / p99 (ms) | d6a's split: delivery · opening · decisions · writes and COMMIT, p50 / p99 (ms) | CPU ms/draw: d6a / PostgreSQL / nats-server / bench | WAL flushes/draw, kB/draw | machine busy | other processes (cores) |\n|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	nomes := []string{fmt.Sprintf("light %g/s", o.taxaLeve), "burst", fmt.Sprintf("%.0f%% load", o.carga*100)}
	for _, x := range r.rs {
		for i, ps := range []passe{x.Leve, x.Maxima, x.Ritmada} {
			n, q, c, pg := float64(max(ps.Recebidos, 1)), ps.Quietas, ps.CPU, []estatisticasPG{x.PGLeve, x.PG, x.PGRitmada}[i]
			if ps.M > 0 {
				p("| %s | %s | %.1f / %.1f | %s, %.1f / %.1f | ≤ %s / ≤ %s | %s | %s / %.2f | %.2f, %.1f | %.0f%% | %.2f |\n", x.cenario, nomes[i],
					ms(ps.Lat.P50), ms(ps.Lat.P99), milhares(q.N), ms(q.P50), ms(q.P99), limite(ps.Handler[0]), limite(ps.Handler[1]),
					ps.Divisao, cpuPorSorteio(c), c.Ms(c.Eu), float64(pg.WalSyncs)/n, float64(pg.WalBytes)/1024/n, 100*c.Ocupacao(), c.Outros)
			}
		}
	}
	return b.String()
}

// mediana is the median of ds (the lower middle of an even count); 0 when
// empty.
func mediana(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return slices.Sorted(slices.Values(ds))[(len(ds)-1)/2]
}

func listaMs(ds []time.Duration) string {
	return juntar(ds, ", ", func(d time.Duration) string { return fmt.Sprintf("%.2f", ms(d)) }) + " ms"
}

// fasesLeves is the table of light load's time, phase by phase: the bare
// loop's light measurement against each run's light pass. What d6a adds
// over the floor shows in the phase it falls in.
func (r relatorio) fasesLeves(p func(string, ...any)) {
	l := r.lacos.Leve
	if l.M == 0 || r.a.o.leve == 0 {
		return
	}
	p("\n### Light load, phase by phase (light passes, means)\n\n")
	p("Means at %g/s (ms): delivery per message; d6a's opening, decisions and writes per transaction, which carries the events of one beacon round; the rest per result:\n\n", r.a.o.taxaLeve)
	p("| loop | delivery | opening | decisions | writes and COMMIT | result publish → ack | rest | end to end | WAL flushes / kB / commits per result | ms per flush |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	linha := func(nome string, f fases, w wal, n int, d6a bool) {
		c := func(d time.Duration, tem bool) string { return se(tem, fmt.Sprintf("%.2f", ms(d)), "–") } // a phase the loop does not time apart: –
		k := float64(max(n, 1))
		p("| %s | %s | %s | %s | %s | %s | %s | **%s** | %.2f / %.1f / %.2f | %.2f |\n", nome, c(f.Entrega, true), c(f.Abertura, d6a), c(f.Decisoes, d6a),
			c(f.Escrita, true), c(f.Publicacao, !d6a), c(f.Resto(), true), c(f.Total, true),
			float64(w.WalSyncs)/k, float64(w.WalBytes)/1024/k, float64(w.Commits)/k, razao(w.WalSyncMs, float64(w.WalSyncs)))
	}
	linha("bare loop, one commit per message", l.Fases, l.WAL, l.M, false)
	for _, x := range r.rs {
		if x.Leve.M > 0 {
			linha("d6a, "+x.cenario.String(), x.Leve.Fases, x.PGLeve.wal, x.Leve.Recebidos, true)
		}
	}
}

// dentroDoPG is the server's side of one pass: pg_stat_statements and
// pg_stat_wal, per result.
func dentroDoPG(p func(string, ...any), oque string, x resultadoK, ps passe, pg estatisticasPG) {
	n := float64(ps.Recebidos)
	if n == 0 || len(pg.Instrucoes) == 0 {
		return
	}
	var exec float64
	for _, i := range pg.Instrucoes {
		exec += i.TotalMs
	}
	p("\n### Inside PostgreSQL during %s (%s)\n\n", oque, x.cenario)
	p("Per draw = total ÷ %s results. Wall time per draw **%.3f ms**; statement execution %.3f ms; WAL flushes %.2f at %.2f ms each = **%.3f ms** (%d syncs, %.1f MB of WAL = %.1f kB per draw, the whole cluster's); commits %.2f.\n\n",
		milhares(int(n)), 1000/ps.Vazao(), exec/n, float64(pg.WalSyncs)/n, razao(pg.WalSyncMs, float64(pg.WalSyncs)), pg.WalSyncMs/n,
		pg.WalSyncs, float64(pg.WalBytes)/(1<<20), float64(pg.WalBytes)/1024/n, float64(pg.Commits)/n)
	if u := pg.AtualizacoesConselheiros; u > 0 {
		p("`d6a.conselheiros`: %d updates, %.0f%% HOT.\n\n", u, 100*float64(pg.HOTConselheiros)/float64(u))
	}
	p("| statement (sqlc name) | calls per draw | mean ms | ms per draw | WAL kB per draw |\n|---|--:|--:|--:|--:|\n")
	for _, s := range pg.Instrucoes[:min(16, len(pg.Instrucoes))] {
		p("| `%s` | %.3f | %.3f | %.3f | %.2f |\n", strings.ReplaceAll(s.Nome, "|", "\\|"), float64(s.Chamadas)/n, s.MediaMs, s.TotalMs/n, float64(s.WalBytes)/1024/n)
	}
}

// serieSVG is one line of a panel of the plot.
type serieSVG struct {
	nome, cor string
	tracejar  bool
	ys        []float64
}

// desenharSVG plots, for the analyzed runs of the sparse shape against K
// (log scale), the light pass's p50 and p99 and the paced pass's p99 with
// the 10 ms target, and the burst's draw rate with pgbench's tps: two
// panels, plain SVG, no dependencies.
func desenharSVG(todos []resultadoK, carga float64) string {
	rs := slices.DeleteFunc(slices.Clone(todos), func(r resultadoK) bool { return r.Forma != "sparse" || r.Fresco })
	if len(rs) == 0 {
		rs = todos
	}
	ks := make([]float64, len(rs))
	serie := func(nome, cor string, tracejar bool, y func(resultadoK) float64) serieSVG {
		s := serieSVG{nome, cor, tracejar, make([]float64, len(rs))}
		for i, r := range rs {
			ks[i], s.ys[i] = float64(r.K), y(r)
		}
		return s
	}
	var b strings.Builder
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" width="960" height="440" viewBox="0 0 960 440" font-family="sans-serif" font-size="12">` + "\n")
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	b.WriteString(`<text x="480" y="22" text-anchor="middle" font-size="15" font-weight="bold">d6a serve at national scale: draws against K counsellors (sparse shape, 255,598 UCs)</text>` + "\n")
	painel(&b, 60, ks, "publish → result on the bus (ms)", 10, "p99 target 10 ms",
		serie("p50, light load", "#1f77b4", false, func(r resultadoK) float64 { return ms(r.Leve.Lat.P50) }),
		serie("p99, light load", "#d62728", false, func(r resultadoK) float64 { return ms(r.Leve.Lat.P99) }),
		serie(fmt.Sprintf("p99 at %.0f%% of the burst's rate", carga*100), "#9467bd", true, func(r resultadoK) float64 { return ms(r.Ritmada.Lat.P99) }))
	painel(&b, 520, ks, "throughput (per second)", 0, "",
		serie("draws/s (burst)", "#2ca02c", false, func(r resultadoK) float64 { return r.Maxima.Vazao() }),
		serie(fmt.Sprintf("offered in the %.0f%% pass", carga*100), "#ff7f0e", true, func(r resultadoK) float64 { return r.Ritmada.TaxaOfertada }),
		serie("pgbench tps (1 client, -N)", "#7f7f7f", true, func(r resultadoK) float64 { return r.PgbenchTPS }))
	b.WriteString("</svg>\n")
	return b.String()
}

// painel draws one 350 × 280 panel at x0 of the plot, with a dotted line
// at alvo when positive.
func painel(b *strings.Builder, x0 int, ks []float64, titulo string, alvo float64, rotuloAlvo string, ss ...serieSVG) {
	const y0, w, h = 50, 350, 280
	ymax := alvo
	for _, s := range ss {
		ymax = max(ymax, slices.Max(s.ys))
	}
	passo := passoBonito(ymax * 1.1 / 5)
	ytopo := passo * math.Ceil(ymax*1.1/passo)
	ytopo = se(ytopo <= 0, 1, ytopo)
	lmin, lmax := math.Log10(slices.Min(ks))-0.25, math.Log10(slices.Max(ks))+0.25
	px := func(k float64) float64 { return float64(x0) + (math.Log10(k)-lmin)/(lmax-lmin)*w }
	py := func(y float64) float64 { return y0 + h - y/ytopo*h }
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" font-weight="bold">%s</text>`+"\n"+`<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n",
		x0+w/2, y0-12, html.EscapeString(titulo), x0, y0, w, h)
	for y := 0.0; y <= ytopo+passo/2; y += passo {
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e5e5e5"/>`+"\n"+`<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", x0, x0+w, py(y), py(y), x0-6, py(y), numero(y))
	}
	for _, k := range ks {
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#e5e5e5"/>`+"\n"+`<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", px(k), px(k), y0, y0+h, px(k), y0+h+16, rotuloCurto(k))
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle">K counsellors (log scale)</text>`+"\n", x0+w/2, y0+h+34)
	if alvo > 0 {
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#d62728" stroke-dasharray="2,4"/>`+"\n"+`<text x="%d" y="%.1f" text-anchor="end" fill="#d62728" font-size="11">%s</text>`+"\n",
			x0, x0+w, py(alvo), py(alvo), x0+w-4, py(alvo)-4, html.EscapeString(rotuloAlvo))
	}
	for i, s := range ss {
		traco, desloc := se(s.tracejar, ` stroke-dasharray="6,4"`, ""), se(i%2 == 1, 15.0, -7.0) // value labels above the points, every other series below
		pts, marcas := []string(nil), &strings.Builder{}
		for j, y := range s.ys {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(ks[j]), py(y)))
			fmt.Fprintf(marcas, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>`+"\n"+`<text x="%.1f" y="%.1f" text-anchor="middle" font-size="10" fill="%s">%s</text>`+"\n",
				px(ks[j]), py(y), s.cor, px(ks[j]), py(y)+desloc, s.cor, numero(y))
		}
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n%s", strings.Join(pts, " "), s.cor, traco, marcas)
		ly, lx := y0+h+54+16*i, x0+10 // legend
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`+"\n"+`<text x="%d" y="%d" dominant-baseline="middle" font-size="11">%s</text>`+"\n",
			lx, lx+18, ly, ly, s.cor, traco, lx+22, ly, html.EscapeString(s.nome))
	}
}

// passoBonito is the grid step: 1, 2 or 5 × a power of ten, ≥ bruto.
func passoBonito(bruto float64) float64 {
	if bruto <= 0 {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(bruto)))
	for _, m := range []float64{1, 2, 5} {
		if m*e >= bruto {
			return m * e
		}
	}
	return 10 * e
}

func numero(v float64) string {
	return fmt.Sprintf(se(v >= 100, "%.0f", se(v >= 10, "%.1f", "%.2g")), v)
}

// rotuloCurto is K on the axis: 1k, 100k, 1M.
func rotuloCurto(k float64) string {
	s := fmt.Sprintf("%.0f", k)
	for _, u := range [][2]string{{"000000", "M"}, {"000", "k"}} {
		if m, ok := strings.CutSuffix(s, u[0]); ok {
			return m + u[1]
		}
	}
	return s
}

// ocupacaoExecutor is the share of a pass the executor spent inside its
// transactions (the three phases' means × the transactions ÷ the pass's
// wall time), with the means: near 100% the burst waits on the executor's
// cycle, well under it on the bus or on the machine's other processes.
func ocupacaoExecutor(ps passe) string {
	f := ps.Fases
	porTx := f.Abertura + f.Decisoes + f.Escrita
	if ps.Lotes.Transacoes <= 0 || ps.Duracao <= 0 || porTx <= 0 {
		return "–"
	}
	ocupado := time.Duration(float64(porTx) * ps.Lotes.Transacoes)
	return fmt.Sprintf("%.0f%% of the burst; per transaction %.1f ms: opening %.1f · decisions %.1f · writes and COMMIT %.1f",
		100*ocupado.Seconds()/ps.Duracao.Seconds(), ms(porTx), ms(f.Abertura), ms(f.Decisoes), ms(f.Escrita))
}
