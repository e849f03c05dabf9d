package sorteio

import (
	"fmt"
	"time"
)

// TimestampLayout is the time layout of the draw time T: UTC with exactly
// three millisecond digits and a literal Z (CONTRACT §4).
const TimestampLayout = "2006-01-02T15:04:05.000Z"

// FormatTimestamp formats t as the draw time T, e.g.
// 2026-11-29T14:03:07.123Z. The time is converted to UTC and truncated, not
// rounded, to the millisecond, so the string never names an instant later
// than t. Years outside 0000-9999 yield a string that [ParseTimestamp]
// rejects.
func FormatTimestamp(t time.Time) string {
	return t.UTC().Format(TimestampLayout)
}

// ParseTimestamp parses a draw time T and returns it in UTC. It is strict:
// the string must be exactly what [FormatTimestamp] would produce for the
// result, so offsets other than Z, a lowercase z, missing or extra
// millisecond digits and surrounding spaces are all rejected. The seed hashes
// T as text (CONTRACT §4), so two spellings of the same instant would be two
// different draws.
func ParseTimestamp(s string) (time.Time, error) {
	t, err := time.Parse(TimestampLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("sorteio: timestamp %q is not YYYY-MM-DDTHH:MM:SS.mmmZ: %w", s, err)
	}
	if FormatTimestamp(t) != s {
		return time.Time{}, fmt.Errorf("sorteio: timestamp %q is not in canonical form %q", s, FormatTimestamp(t))
	}
	return t.UTC(), nil
}
