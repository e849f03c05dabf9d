package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/formigueiro/d6a/internal/benchdoc"
)

// imprimirTabela writes the summary table for the terminal.
func imprimirTabela(w io.Writer, rs []resultadoK) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "K\tpgbench tps\tdraws/s\t÷ pgbench\tmax-load p50/p99 ms\toffered/s\tp50 ms\tp99 ms\tmax ms\tsorteado\thier. load\tRSS 1st draw MB\tRSS end/peak MB\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.2f×\t%.0f / %.0f\t%.1f\t%.1f\t%.1f\t%.1f\t%.0f%%\t%s\t%.1f → %.1f\t%.1f / %.1f\t\n",
			benchdoc.Thousands(r.K), r.PgbenchTPS, r.Maxima.Vazao(), razao(r.Maxima.Vazao(), r.PgbenchTPS),
			ms(r.Maxima.Lat.P50), ms(r.Maxima.Lat.P99), r.Ritmada.TaxaOfertada,
			ms(r.Ritmada.Lat.P50), ms(r.Ritmada.Lat.P99), ms(r.Ritmada.Lat.Max),
			pct(r.Maxima.Sorteados+r.Ritmada.Sorteados, r.Maxima.Recebidos+r.Ritmada.Recebidos),
			r.Hierarquia.Duracao.Round(time.Millisecond), mb(r.MemAntes.RSS), mb(r.MemDepois.RSS),
			mb(r.MemFim.RSS), mb(r.MemFim.HWM))
	}
	fmt.Fprintln(tw, "\t\t\t\t\t(p50, p99, max: paced pass)\t\t\t\t\t\t\t\t")
	tw.Flush()
}

// limite prints a histogram bucket bound in ms ("?" when unknown).
func limite(d time.Duration) string {
	switch {
	case d == 0:
		return "?"
	case d < 0:
		return "∞"
	}
	return strconv.FormatFloat(ms(d), 'f', -1, 64)
}

func razao(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// relatorio is the results section of docs/bench.md.
type relatorio struct {
	a     *ambiente
	rs    []resultadoK
	dur   time.Duration
	data  time.Time
	alvos []alvo
}

type alvo struct {
	Nome, Medido, Veredito string
	Ok                     bool
}

func novoRelatorio(a *ambiente, rs []resultadoK, dur time.Duration) *relatorio {
	r := &relatorio{a: a, rs: rs, dur: dur, data: time.Now().UTC()}
	r.alvos = r.avaliar()
	return r
}

// perto returns the result whose K is nearest (log scale) to k.
func perto(rs []resultadoK, k int) resultadoK {
	best, dist := rs[0], math.Inf(1)
	for _, r := range rs {
		if d := math.Abs(math.Log(float64(r.K)) - math.Log(float64(k))); d < dist {
			best, dist = r, d
		}
	}
	return best
}

func rotuloK(r resultadoK, want int) string {
	if r.K == want {
		return "K=" + benchdoc.Thousands(want)
	}
	return fmt.Sprintf("K=%s (nearest measured to %s)", benchdoc.Thousands(r.K), benchdoc.Thousands(want))
}

// margem describes how far value is from limit, for "≤ limit" when menor.
func margem(valor, limite float64, menor bool) (bool, string) {
	ok := valor >= limite
	if menor {
		ok = valor <= limite
	}
	if ok {
		return true, "**met**"
	}
	if menor {
		return false, fmt.Sprintf("**missed** by %.0f%% (%.2f× the limit)", 100*(valor/limite-1), valor/limite)
	}
	return false, fmt.Sprintf("**missed** by %.0f%% (reaches %.2f of the target)", 100*(1-valor/limite), valor/limite)
}

func (r *relatorio) avaliar() []alvo {
	var out []alvo
	// 1. Throughput against pgbench at K=100,000.
	k100 := perto(r.rs, 100_000)
	q := razao(k100.Maxima.Vazao(), k100.PgbenchTPS)
	ok, v := margem(q, 1.0, false)
	out = append(out, alvo{
		Nome:   "draws/s ≥ 1.0 × pgbench one-client simple-update tps at K=100,000",
		Medido: fmt.Sprintf("%s: %.1f draws/s ÷ %.1f tps = **%.2f×**", rotuloK(k100, 100_000), k100.Maxima.Vazao(), k100.PgbenchTPS, q),
		Ok:     ok, Veredito: v,
	})
	// 2. Flat cost over K: p50 at 1,000,000 within 1.3 × p50 at 1,000 (paced pass).
	grande, pequeno := perto(r.rs, 1_000_000), perto(r.rs, 1_000)
	if grande.K != pequeno.K {
		q := razao(ms(grande.Ritmada.Lat.P50), ms(pequeno.Ritmada.Lat.P50))
		ok, v := margem(q, 1.3, true)
		qs := razao(ms(grande.Ritmada.LatSorteado.P50), ms(pequeno.Ritmada.LatSorteado.P50))
		out = append(out, alvo{
			Nome: "per-draw p50 at K=1,000,000 within 1.3 × p50 at K=1,000 (paced pass)",
			Medido: fmt.Sprintf("%s %.1f ms ÷ %s %.1f ms = **%.2f×** (conselheiro.sorteado only: %.1f ÷ %.1f ms = %.2f×)",
				rotuloK(grande, 1_000_000), ms(grande.Ritmada.Lat.P50), rotuloK(pequeno, 1_000), ms(pequeno.Ritmada.Lat.P50), q,
				ms(grande.Ritmada.LatSorteado.P50), ms(pequeno.Ritmada.LatSorteado.P50), qs),
			Ok: ok, Veredito: v,
		})
	}
	// 3. p99 ≤ 25 ms at 50% offered load.
	p99 := ms(k100.Ritmada.Lat.P99)
	ok, v = margem(p99, 25, true)
	var todos []string
	for _, x := range r.rs {
		todos = append(todos, fmt.Sprintf("K=%s %.1f ms (quiet draws %.1f ms)", benchdoc.Thousands(x.K), ms(x.Ritmada.Lat.P99), ms(x.Ritmada.Quietas.P99)))
	}
	out = append(out, alvo{
		Nome: fmt.Sprintf("p99 ≤ 25 ms at %.0f%% offered load", r.a.o.carga*100),
		Medido: fmt.Sprintf("%s: **%.1f ms** at %.1f/s offered; %.1f ms over the %s quiet draws (every K: %s)", rotuloK(k100, 100_000), p99, k100.Ritmada.TaxaOfertada,
			ms(k100.Ritmada.Quietas.P99), benchdoc.Thousands(k100.Ritmada.Quietas.N), strings.Join(todos, ", ")),
		Ok: ok, Veredito: v,
	})
	// 4. RSS with 1,000,000 counsellors and 250,000 UCs.
	hwm := mb(grande.MemFim.HWM)
	ok, v = margem(hwm, 150, true)
	out = append(out, alvo{
		Nome:   "`d6a serve` RSS ≤ 150 MB with 1,000,000 counsellors and 250,000 UCs",
		Medido: fmt.Sprintf("%s, %s UCs: peak (VmHWM) **%.1f MB**, at the end (VmRSS) %.1f MB", rotuloK(grande, 1_000_000), benchdoc.Thousands(grande.UCs), hwm, mb(grande.MemFim.RSS)),
		Ok:     ok, Veredito: v,
	})
	// 5. Hierarchy cache load.
	var pior resultadoK
	for _, x := range r.rs {
		if x.Hierarquia.Duracao >= pior.Hierarquia.Duracao {
			pior = x
		}
	}
	ok, v = margem(pior.Hierarquia.Duracao.Seconds(), 2, true)
	out = append(out, alvo{
		Nome: "hierarchy cache load ≤ 2 s",
		Medido: fmt.Sprintf("slowest **%.2f s** (K=%s, %s UCs; RSS +%.1f MB over the first draw)", pior.Hierarquia.Duracao.Seconds(),
			benchdoc.Thousands(pior.K), benchdoc.Thousands(pior.Hierarquia.UCs), mb(pior.MemDepois.RSS-pior.MemAntes.RSS)),
		Ok: ok, Veredito: v,
	})
	return out
}

func (r *relatorio) imprimirAlvos(w io.Writer) {
	for _, a := range r.alvos {
		marca := "MET   "
		if !a.Ok {
			marca = "MISSED"
		}
		fmt.Fprintf(w, "%s  %s\n        %s\n", marca, a.Nome, strings.ReplaceAll(a.Medido, "**", ""))
	}
}

const (
	marcaInicio = "<!-- d6a-bench:draws:begin (generated by go run ./cmd/d6a-bench; edits inside are overwritten) -->"
	marcaFim    = "<!-- d6a-bench:draws:end -->"
	tituloSecao = "## Draws at national scale"
)

// atualizarDoc rewrites the generated block of path (between the markers),
// creating the file or the section when missing; everything else is kept.
func (r *relatorio) atualizarDoc(path string) error {
	bloco := marcaInicio + "\n" + r.markdown() + marcaFim + "\n"
	antigo, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return os.WriteFile(path, []byte("# Benchmarks\n\n"+tituloSecao+"\n\n"+bloco), 0o644)
	}
	if err != nil {
		return err
	}
	s := string(antigo)
	i, j := strings.Index(s, marcaInicio), strings.Index(s, marcaFim)
	switch {
	case i >= 0 && j > i:
		s = s[:i] + bloco + s[j+len(marcaFim)+1:]
	case strings.Contains(s, tituloSecao+"\n"):
		k := strings.Index(s, tituloSecao+"\n") + len(tituloSecao) + 1
		s = s[:k] + "\n" + bloco + s[k:]
	default:
		s = strings.TrimRight(s, "\n") + "\n\n" + tituloSecao + "\n\n" + bloco
	}
	return os.WriteFile(path, []byte(s), 0o644)
}

func (r *relatorio) markdown() string {
	var b strings.Builder
	o := r.a.o
	nats := "a separate `nats-server` v2.15.2 built from the module, `sync_interval: always` (as durable as d6a's embedded server)"
	if o.embutido {
		nats = "d6a serve's embedded NATS server (`SyncAlways`); its memory counts in d6a's RSS"
	}
	fmt.Fprintf(&b, "### Results\n\n")
	fmt.Fprintf(&b, "Measured %s UTC in %s with:\n\n", r.data.Format("2006-01-02 15:04"), r.dur.Round(time.Second))
	fmt.Fprintf(&b, "```\n%s\n```\n\n", o.comando)
	// Other work in progress is measured too: only the bench's own files
	// and the docs it writes are left out.
	fmt.Fprintf(&b, "- code: %s\n", benchdoc.Revision(r.a.raiz, "--untracked-files=no", "--", ".", ":!cmd/d6a-bench", ":!docs"))
	fmt.Fprintf(&b, "- machine: `nproc` = %s; `free -g`: %s; CPU %s; kernel %s; %s\n", comando("nproc"), memoriaLivre(), benchdoc.CPUModel(), benchdoc.Kernel(), runtime.Version())
	var ajustes []string
	for k, v := range configuracaoPG {
		ajustes = append(ajustes, k+"="+v)
	}
	sort.Strings(ajustes)
	fmt.Fprintf(&b, "- PostgreSQL %s from `internal/pglocal` with `Durable: true` (fsync, synchronous_commit and full_page_writes on), fresh in a temporary directory on the machine's disk, %s\n", r.a.versao, strings.Join(ajustes, ", "))
	fmt.Fprintf(&b, "- bus: %s\n", nats)
	fmt.Fprintf(&b, "- country: %s UCs in `core.uc_polygons` (1 country → 27 states → 5,570 municipalities → 50,000 neighbourhoods → 200,000 micro-areas); counsellors 60%% on micro-areas, 30%% on neighbourhoods, 10%% on municipalities, loaded with COPY into a fresh database per K (after `d6a migrate`), then `pg_prewarm`ed into shared_buffers as on a server that has been running\n", benchdoc.Thousands(r.a.pais.Tamanho()))
	fmt.Fprintf(&b, "- per K: `pgbench -i` + `pgbench -c 1 -j 1 -T %d -N`, then a fresh `d6a serve` (default configuration, JSON logs at info); one warm-up draw (loads the hierarchy cache); a **max-load pass** of M = %s `agenda.item_disponível` on random micro-areas published as fast as JetStream acknowledges them; the assignments are then ended (as `ciclo_concluído` would) and a **paced pass** of M more at %.0f%% of the measured draw rate. Latency = publish → the result (`conselheiro.sorteado` or `sorteio.sem_candidatos`, matched by `demanda_id`) arriving on a core NATS subscription; draws/s = results ÷ (first publish → last result).\n\n", o.pgbenchT, benchdoc.Thousands(o.m), o.carga*100)

	fmt.Fprintf(&b, "| K | pgbench tps | draws/s (max load) | draws/s ÷ pgbench | max-load latency p50 / p99 / max (ms) | paced: offered/s | paced p50 / p99 / max (ms) | paced p50 / p99, sorteado only (ms) | sorteado share | hierarchy cache load | RSS before → after 1st draw (MB) | RSS end / peak (MB) |\n")
	fmt.Fprintf(&b, "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, x := range r.rs {
		fmt.Fprintf(&b, "| %s | %.1f | %.1f | **%.2f×** | %.0f / %.0f / %.0f | %.1f | **%.1f / %.1f** / %.1f | %.1f / %.1f | %.0f%% | %.2f s | %.1f → %.1f | %.1f / **%.1f** |\n",
			benchdoc.Thousands(x.K), x.PgbenchTPS, x.Maxima.Vazao(), razao(x.Maxima.Vazao(), x.PgbenchTPS),
			ms(x.Maxima.Lat.P50), ms(x.Maxima.Lat.P99), ms(x.Maxima.Lat.Max),
			x.Ritmada.TaxaOfertada, ms(x.Ritmada.Lat.P50), ms(x.Ritmada.Lat.P99), ms(x.Ritmada.Lat.Max),
			ms(x.Ritmada.LatSorteado.P50), ms(x.Ritmada.LatSorteado.P99),
			pct(x.Maxima.Sorteados+x.Ritmada.Sorteados, x.Maxima.Recebidos+x.Ritmada.Recebidos),
			x.Hierarquia.Duracao.Seconds(), mb(x.MemAntes.RSS), mb(x.MemDepois.RSS), mb(x.MemFim.RSS), mb(x.MemFim.HWM))
	}
	var notas, ruido []string
	for _, x := range r.rs {
		if x.Maxima.Recebidos < x.Maxima.M || x.Ritmada.Recebidos < x.Ritmada.M {
			notas = append(notas, fmt.Sprintf("K=%s: %d + %d results missing", benchdoc.Thousands(x.K), x.Maxima.M-x.Maxima.Recebidos, x.Ritmada.M-x.Ritmada.Recebidos))
		}
		for _, n := range x.Ruido {
			ruido = append(ruido, fmt.Sprintf("K=%s: %s", benchdoc.Thousands(x.K), n))
		}
		for _, p := range []passe{x.Maxima, x.Ritmada} {
			if p.Ruido != "" {
				ruido = append(ruido, fmt.Sprintf("K=%s: %s", benchdoc.Thousands(x.K), p.Ruido))
			}
		}
		if len(x.Avisos) > 0 {
			notas = append(notas, fmt.Sprintf("K=%s: d6a serve logged %d warnings/errors (first: %s)", benchdoc.Thousands(x.K), len(x.Avisos), x.Avisos[0]))
		}
	}
	fmt.Fprintf(&b, "\nEvery K: hierarchy of %s UCs; pgbench mean latency", benchdoc.Thousands(r.rs[0].Hierarquia.UCs))
	for _, x := range r.rs {
		fmt.Fprintf(&b, " %.2f ms (K=%s)", ms(x.PgbenchLat), benchdoc.Thousands(x.K))
	}
	fmt.Fprintf(&b, "; first draw (publish → result, includes the cache load)")
	for _, x := range r.rs {
		fmt.Fprintf(&b, " %.0f ms", ms(x.Aquecimento))
	}
	if r.rs[0].NATSMem.HWM > 0 {
		fmt.Fprintf(&b, "; separate nats-server peak RSS")
		for _, x := range r.rs {
			fmt.Fprintf(&b, " %.0f MB", mb(x.NATSMem.HWM))
		}
	}
	fmt.Fprintf(&b, ". Publishing rate (max-load pass, bus acks):")
	for _, x := range r.rs {
		fmt.Fprintf(&b, " %.0f/s", float64(x.Maxima.M)/x.Maxima.Publicacao.Seconds())
	}
	fmt.Fprintf(&b, ".")
	if len(notas) > 0 {
		fmt.Fprintf(&b, " **Anomalies:** %s.", strings.Join(notas, "; "))
	} else {
		fmt.Fprintf(&b, " Every demand got its result; d6a serve logged no warning or error.")
	}
	if len(ruido) > 0 {
		fmt.Fprintf(&b, " **Shared machine** (after waiting up to %s for quiet): %s.", r.a.o.sossego, strings.Join(ruido, "; "))
	} else if r.a.o.sossego > 0 {
		fmt.Fprintf(&b, " Every pgbench run and pass started on a quiet machine (other processes under %.2f cores).", limiteQuieto)
	}
	fmt.Fprintf(&b, "\n\n![p50/p99 latency and draws/s against K](bench-draws.svg)\n\n")

	fmt.Fprintf(&b, "Per pass: the end-to-end latency against d6a's own handler time (`d6a_handler_duracao_segundos` of `agenda.item_disponível`, scraped from /metrics before and after: one transaction with its commit and the seed's bus lookup; the difference is the bus delivery, the ack and the outbox relay), the CPU per draw of each process (from /proc; PostgreSQL = the cluster's postmaster and backends), the WAL flushes and bytes per draw (`pg_stat_wal`), and how busy the machine was. \"Other processes\" is CPU used by anything but d6a serve, PostgreSQL, nats-server and the bench, in cores out of %s: when it is high, the run shared the machine and its figures are pessimistic. \"Quiet draws\" are those during which (from 100 ms before the publish to the result) other processes never used more than %.2f cores over a 250 ms window: what the service does on a machine of its own.\n\n", comando("nproc"), limiteQuieto)
	fmt.Fprintf(&b, "| K | pass | end-to-end p50 / p99 (ms) | quiet draws: n, p50 / p99 (ms) | d6a handler p50 / p99 (ms, its histogram: bucket bounds) | d6a serve CPU ms/draw | PostgreSQL CPU ms/draw | nats-server CPU ms/draw | WAL flushes/draw, kB/draw | machine busy | other processes (cores) |\n|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, x := range r.rs {
		for _, p := range []struct {
			nome string
			p    passe
			pg   estatisticasPG
		}{{"max load", x.Maxima, x.PG}, {fmt.Sprintf("%.0f%% load", o.carga*100), x.Ritmada, x.PGRitmada}} {
			n := float64(max(p.p.Recebidos, 1))
			fmt.Fprintf(&b, "| %s | %s | %.1f / %.1f | %s, %.1f / %.1f | ≤ %s / ≤ %s | %.2f | %.2f | %.2f | %.2f, %.1f | %.0f%% | %.2f |\n", benchdoc.Thousands(x.K), p.nome,
				ms(p.p.Lat.P50), ms(p.p.Lat.P99), benchdoc.Thousands(p.p.Quietas.N), ms(p.p.Quietas.P50), ms(p.p.Quietas.P99),
				limite(p.p.HandlerP50), limite(p.p.HandlerP99),
				p.p.CPU.D6AmsPorSorteio, p.p.CPU.PGmsPorSorteio, p.p.CPU.NATSmsPorSorteio,
				float64(p.pg.WAL.Syncs)/n, float64(p.pg.WAL.Bytes)/1024/n,
				100*p.p.CPU.OcupacaoMaquina, p.p.CPU.OutrosNucleos)
		}
	}
	b.WriteString("\n")

	fmt.Fprintf(&b, "### Targets\n\n| target | measured | verdict |\n|---|---|---|\n")
	for _, a := range r.alvos {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", a.Nome, a.Medido, a.Veredito)
	}

	// Server-side breakdown at K≈100,000.
	x := perto(r.rs, 100_000)
	n := float64(x.Maxima.Recebidos)
	if n > 0 && len(x.PG.Instrucoes) > 0 {
		wall := 1000 / x.Maxima.Vazao()
		fmt.Fprintf(&b, "\n### Inside PostgreSQL during the max-load pass (K=%s)\n\n", benchdoc.Thousands(x.K))
		var exec float64
		for _, i := range x.PG.Instrucoes {
			exec += i.TotalMs
		}
		fmt.Fprintf(&b, "From `pg_stat_statements` and `pg_stat_wal`, reset before the pass; per draw = total ÷ %s results. Wall time per draw: **%.2f ms** (1 ÷ draws/s). Statement execution in the server: %.2f ms per draw. WAL flushes: %.2f per draw at %.2f ms each = **%.2f ms per draw** (%d syncs, %.1f MB of WAL = %.1f kB per draw). The remainder (%.2f ms) is client/server round trips, d6a's own CPU, the bus (fetch, ack, `LastEventID`, the relay's publishes, each fsync'd by JetStream) and the relay's own transactions.\n\n",
			benchdoc.Thousands(int(n)), wall, exec/n, float64(x.PG.WAL.Syncs)/n, razao(x.PG.WAL.SyncMs, float64(x.PG.WAL.Syncs)), x.PG.WAL.SyncMs/n,
			x.PG.WAL.Syncs, float64(x.PG.WAL.Bytes)/(1<<20), float64(x.PG.WAL.Bytes)/1024/n, wall-exec/n-x.PG.WAL.SyncMs/n)
		if u := x.PG.AtualizacoesConselheiros; u > 0 {
			fmt.Fprintf(&b, "`d6a.conselheiros`: %d updates, %.0f%% HOT (an update that changes an indexed column, here `status`, writes a new entry in every index of the table).\n\n",
				u, 100*float64(x.PG.HOTConselheiros)/float64(u))
		}
		fmt.Fprintf(&b, "| statement (sqlc name) | calls per draw | mean ms | ms per draw |\n|---|--:|--:|--:|\n")
		for i, s := range x.PG.Instrucoes {
			if i == 16 {
				break
			}
			fmt.Fprintf(&b, "| `%s` | %.2f | %.3f | %.3f |\n", strings.ReplaceAll(s.Nome, "|", "\\|"), float64(s.Chamadas)/n, s.MediaMs, s.TotalMs/n)
		}
	}
	b.WriteString("\n")
	return b.String()
}

func comando(nome string, args ...string) string {
	out, err := exec.Command(nome, args...).Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}

func memoriaLivre() string {
	out, err := exec.Command("free", "-g").Output()
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "Mem:") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				return fmt.Sprintf("%s GB total (`%s`)", f[1], strings.Join(f, " "))
			}
		}
	}
	return "?"
}
