// Command d6a-bench measures d6a at national scale, each figure beside a
// yardstick measured in the same run (docs/bench.md says how to read
// them). The draws and http modes print their report and rewrite its
// generated block of docs/bench.md; escala and verificar print theirs. The
// mode is the first argument:
//
//	go run ./cmd/d6a-bench                       # draws (make bench)
//	go run ./cmd/d6a-bench -quick                # small draws runs; checks the tool in < 3 min
//	go run ./cmd/d6a-bench -runs 100000/dense/fresh -m 10000
//	go run ./cmd/d6a-bench http -d 10s -c 32 -rate 1000
//	go run ./cmd/d6a-bench flood
//	go run ./cmd/d6a-bench escala
//	go run ./cmd/d6a-bench verificar
//	go run ./cmd/d6a-bench replay
//	go run ./cmd/d6a-bench catchup               # make bench-catchup
//
// The draws mode (no name) runs `d6a serve` on a durable PostgreSQL of its
// own, a JetStream bus and a synthetic country of 255,598 civic units with
// K counsellors, and times every draw from its agenda.item_disponível
// publish to its result on the bus, against pgbench and a bare durable loop
// of the draw's shape. It rewrites the "draws" block and
// docs/bench-draws.svg (-quick only with -doc/-svg). Files: sorteio.go
// (flags, runs, passes), sorteio_carga.go (the load on the bus),
// sorteio_laco.go (the bare loop), sorteio_relatorio.go (the report and
// the plot).
//
// The http mode measures GET /d6a/conselheiros/me/situacao against a bare
// fiber handler on a server process (this binary re-executed), and
// rewrites the "HTTP: situacao route" block. Files:
// http.go, http_carga.go, http_relatorio.go.
//
// The flood mode runs bursts of draws twice each, alone and while 64
// clients flood /metrics, /readyz, /estatisticas and the log's partial
// tiles, and rewrites the "Public routes under a flood" block. Files:
// inundacao_sorteio.go (the bursts and the report), inundacao.go (the
// flood's clients).
//
// The escala mode simulates, with no database and no bus, what a
// partitioned executor would gain over the same country (docs/escala.md).
// File: escala.go.
//
// The verificar mode runs the public verifier (`d6a verify --url --all
// --replay`, then a monitor) over a signed static mirror of a synthetic
// history. File: verificar.go; with -rodadas every draw carries a beacon
// round of its own, verified in batches and, on a smaller yardstick
// history, one pairing per round: verificar_rodadas.go.
//
// The replay mode runs a burst whose counsellors are registered through
// the bus (conselheiro.cadastrado, not COPY), demands mixed with cycle ends
// and refusals, then `d6a verify --url --all --replay` with the bus over
// the service's own log, and fails on any divergence. File: replay.go
// (TestReplayDaRajada runs it small).
//
// The catchup mode publishes N agenda.item_disponível while d6a is down,
// then times the drain from d6a's start, with the beacon rule on and off
// in the same run, each arm on a fresh database with the same counsellors;
// the colony runs in process (internal/colonia, Options.SemBeacon for the
// arm without the rule). It rewrites the "catchup" block. File:
// recuperacao.go.
//
// Shared by the modes: main.go (dispatch, flags, output), benchmd.go (what
// every block of docs/bench.md carries: the machine, the commit, the
// generated-block markers), pais.go (the synthetic country), processos.go
// (PostgreSQL clusters and `d6a serve` processes), postgres.go (pgbench
// and PostgreSQL's own counters), cpu.go (CPU time and quiet-machine
// waits) and metricas.go (reading d6a's /metrics).
//
// The in-process benchmarks of the draw path are sorteio_bench_test.go and
// hierarquia_bench_test.go (go test -bench, not this command).
package main
