package latency

import (
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	var ds []time.Duration
	for i := 1000; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	l := Summarize(ds)
	if l.N != 1000 || l.P50 != 500*time.Millisecond || l.P90 != 900*time.Millisecond || l.P99 != 990*time.Millisecond || l.P999 != 999*time.Millisecond || l.Max != time.Second {
		t.Errorf("%+v", l)
	}
	if (Summarize(nil) != Summary{}) {
		t.Error("empty input")
	}
	if one := Summarize([]time.Duration{7}); one.N != 1 || one.P50 != 7 || one.P999 != 7 || one.Max != 7 {
		t.Errorf("one sample: %+v", one)
	}
}
