// Package replay runs the decision rules over the public transparency
// log's records in log order (CONTRACT §7 "Replay") and finds what
// diverges or was left out: a decision that does not follow from the
// records before it, a sweep that passed a due demand over, an input the
// bus carried and the log dropped. The records, their checks one by one
// and the rules in force are [github.com/formigueiro/d6a/internal/registro]'s;
// this package holds the state they build. Like registro it does no I/O
// of its own (the bus is read through LeitorDeEntradas): the verifier
// (internal/verificar/log), the page (cmd/d6a-wasm) and a third party run
// it without PostgreSQL, pgx or fiber.
package replay
