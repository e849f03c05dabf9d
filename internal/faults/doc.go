// Package faults is the reliability and security suite of d6a: it drives the
// real `d6a serve` binary as separate processes against a PostgreSQL cluster
// and a nats-server of its own, injects faults (kill -9, NATS restart,
// PostgreSQL outage, two instances at once, hostile messages, HTTP attacks)
// and then checks the invariants of the service on the database and on the
// bus.
//
// The tests carry the build tag `faults`, so `go test ./...` does not run
// them: `make test-faults` (about three minutes) and `make soak` (longer) do.
// docs/reliability.md says what is guaranteed and how each fault is tested.
package faults
