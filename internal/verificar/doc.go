// Package verificar is the tree of d6a's verifiers. Each sub-package checks
// one thing against one source, and its name says which:
//
//   - [github.com/formigueiro/d6a/internal/verificar/banco] checks one draw
//     against the database: its audit record, assignment row, outbox
//     envelope and bus times (`d6a verify --event-id`).
//   - [github.com/formigueiro/d6a/internal/verificar/barramento] checks the
//     bus against the database: results and consumed inputs on the bus that
//     PostgreSQL lost in a failover (`d6a verify --consistencia`, and the
//     check `d6a serve` runs at boot).
//   - [github.com/formigueiro/d6a/internal/verificar/log] checks the public
//     transparency log from its public API alone: tiles, checkpoints,
//     cosignatures, bus triggers and the replay of every decision
//     (`d6a verify --url`, `d6a replay`, `d6a monitor`).
//
// One verifier lives elsewhere: the arithmetic of one draw (seed, order,
// list hash and winner recomputed from public inputs; `d6a verify --json`)
// is [github.com/formigueiro/d6a/internal/sorteio.Verificar], beside the
// draw, because the writer of every log record runs it on itself and the
// draw must not import its verifier.
//
// A verifier only reads. Repair is not verification: barramento's report is
// acted on by internal/reparo.
package verificar
