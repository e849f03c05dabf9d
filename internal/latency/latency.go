// Package latency summarises latency samples the way both bench tools
// report them: nearest-rank percentiles, so every figure is a latency that
// was measured.
package latency

import (
	"math"
	"slices"
	"time"
)

// Summary is one set of samples' count and percentiles.
type Summary struct {
	N                        int
	P50, P90, P99, P999, Max time.Duration
}

// Summarize sorts ds in place and summarises it; zero when ds is empty.
func Summarize(ds []time.Duration) Summary {
	if len(ds) == 0 {
		return Summary{}
	}
	slices.Sort(ds)
	q := func(p float64) time.Duration {
		i := int(math.Ceil(p*float64(len(ds)))) - 1
		return ds[max(0, min(i, len(ds)-1))]
	}
	return Summary{N: len(ds), P50: q(0.50), P90: q(0.90), P99: q(0.99), P999: q(0.999), Max: ds[len(ds)-1]}
}
