package main

import (
	"os"
	"runtime/debug"
)

// gcVerificador is the collector's pace for `verify --url`: the verifier's
// live heap is small and flat (the state, the tiles in flight), while every
// record allocates its parse, so at GOGC=100 the collector runs every few
// MB and costs ~15% of the CPU of a whole-log replay (issue 39,
// docs/bench.md). At 400 the heap stays a few tens of MB. GOGC, when set,
// wins.
//
// At 400 the heap may also grow to five times what is live: against a log
// that fills the tiles in flight to their caps (limites.go) that is past
// the 256 MB a verifier may use (CONTRACT §7), so a soft limit of 160 MiB
// makes the collector run sooner there, and only there (an honest log's
// verifier peaks under 110 MB). GOMEMLIMIT, when set, wins.
func gcVerificador() {
	if _, definido := os.LookupEnv("GOGC"); !definido {
		debug.SetGCPercent(400)
	}
	if _, definido := os.LookupEnv("GOMEMLIMIT"); !definido {
		debug.SetMemoryLimit(160 << 20)
	}
}
