package sorteio

import (
	"math/rand/v2"
	"testing"
	"time"
)

// timeFromMillis returns the UTC instant ms milliseconds after the Unix
// epoch.
func timeFromMillis(ms int64) time.Time {
	return time.UnixMilli(ms).UTC()
}

func TestFormatTimestamp(t *testing.T) {
	sp := time.FixedZone("BRT", -3*60*60)
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 11, 29, 14, 3, 7, 123_000_000, time.UTC), "2026-11-29T14:03:07.123Z"},
		{time.Date(2026, 8, 11, 19, 17, 28, 0, time.UTC), "2026-08-11T19:17:28.000Z"},
		// Non-UTC times are converted, never printed with an offset.
		{time.Date(2026, 8, 11, 16, 17, 28, 5_000_000, sp), "2026-08-11T19:17:28.005Z"},
		// Sub-millisecond digits are truncated, not rounded.
		{time.Date(2026, 12, 31, 23, 59, 59, 999_999_999, time.UTC), "2026-12-31T23:59:59.999Z"},
	}
	for _, tt := range tests {
		if got := FormatTimestamp(tt.in); got != tt.want {
			t.Errorf("FormatTimestamp(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTimestampRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 1000; iter++ {
		want := timeFromMillis(r.Int64N(253402300800000)) // up to 9999-12-31
		s := FormatTimestamp(want)
		got, err := ParseTimestamp(s)
		if err != nil {
			t.Fatalf("ParseTimestamp(%q): %v", s, err)
		}
		if !got.Equal(want) || got.Location() != time.UTC {
			t.Fatalf("ParseTimestamp(%q) = %v, want %v in UTC", s, got, want)
		}
		if again := FormatTimestamp(got); again != s {
			t.Fatalf("round trip %q -> %q", s, again)
		}
	}
}

func TestParseTimestampRejects(t *testing.T) {
	for _, s := range []string{
		"",
		"2026-11-29T14:03:07Z",          // missing millis
		"2026-11-29T14:03:07.1Z",        // one digit
		"2026-11-29T14:03:07.12Z",       // two digits
		"2026-11-29T14:03:07.1234Z",     // four digits
		"2026-11-29T14:03:07.123",       // no zone
		"2026-11-29T14:03:07.123z",      // lowercase z
		"2026-11-29T14:03:07.123+00:00", // offset instead of Z
		"2026-11-29T11:03:07.123-03:00", // non-UTC
		"2026-11-29 14:03:07.123Z",      // space separator
		"2026-11-29t14:03:07.123Z",      // lowercase t
		" 2026-11-29T14:03:07.123Z",     // leading space
		"2026-11-29T14:03:07.123Z\n",    // trailing newline
		"2026-02-30T14:03:07.123Z",      // no such day
		"2026-11-29T24:00:00.000Z",      // hour 24
		"2026-11-29T14:03:60.000Z",      // leap second
		"2026-1-29T14:03:07.123Z",       // unpadded month
		"2026-11-29T14:03:07,123Z",      // comma decimal separator
	} {
		if got, err := ParseTimestamp(s); err == nil {
			t.Errorf("ParseTimestamp(%q) = %v, want error", s, got)
		}
	}
}
