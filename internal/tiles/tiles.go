// Package tiles is the one place that knows the C2SP tlog-tiles paths
// (https://c2sp.org/tlog-tiles): hash tiles at tile/<L>/<N>[.p/<W>] and
// entry bundles at tile/entries/<N>[.p/<W>], and the bundles' encoding.
//
// A tile is a golang.org/x/mod/sumdb/tlog.Tile of height 8, with L = -1
// for an entry bundle, as tlog does for its data tiles; tlog's own paths
// carry a height element C2SP's do not, so they are never used.
package tiles

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/tlog"
)

// Height is the tiles' height: a full tile holds Width hashes.
const (
	Height = 8
	Width  = 1 << Height
	// MaxLevel is the highest level C2SP allows (L is 0 to 5: 256^6 leaves).
	MaxLevel = 5
	// Entries is the level of an entry bundle.
	Entries = -1
)

// Hash is the hash tile (level, n) of width w (Width: full).
func Hash(level int, n int64, w int) tlog.Tile {
	return tlog.Tile{H: Height, L: level, N: n, W: w}
}

// Bundle is the entry bundle n of width w (Width: full).
func Bundle(n int64, w int) tlog.Tile {
	return tlog.Tile{H: Height, L: Entries, N: n, W: w}
}

// Path is t's C2SP path, "tile/…", relative to the log's prefix.
func Path(t tlog.Tile) string {
	var b strings.Builder
	b.WriteString("tile/")
	if t.L == Entries {
		b.WriteString("entries/")
	} else {
		b.WriteString(strconv.Itoa(t.L))
		b.WriteByte('/')
	}
	var grupos []string
	n := t.N
	for {
		grupos = append(grupos, fmt.Sprintf("%03d", n%1000))
		n /= 1000
		if n == 0 {
			break
		}
	}
	for i := len(grupos) - 1; i > 0; i-- {
		b.WriteByte('x')
		b.WriteString(grupos[i])
		b.WriteByte('/')
	}
	b.WriteString(grupos[0])
	if t.W != Width {
		b.WriteString(".p/")
		b.WriteString(strconv.Itoa(t.W))
	}
	return b.String()
}

// ErrPath is a path that is not a C2SP tile path in canonical form.
var ErrPath = errors.New("malformed tile path")

// ParsePath reads a C2SP tile path ("tile/…"); only the canonical form
// (the one Path writes) is accepted, so each tile has one path and a cache
// holds it once.
func ParsePath(p string) (tlog.Tile, error) {
	f := strings.Split(p, "/")
	if len(f) < 3 || f[0] != "tile" {
		return tlog.Tile{}, fmt.Errorf("%w %q", ErrPath, p)
	}
	t := tlog.Tile{H: Height, W: Width}
	if f[1] == "entries" {
		t.L = Entries
	} else {
		l, err := strconv.Atoi(f[1])
		if err != nil || l < 0 || l > MaxLevel || strconv.Itoa(l) != f[1] {
			return tlog.Tile{}, fmt.Errorf("%w %q: level", ErrPath, p)
		}
		t.L = l
	}
	f = f[2:]
	if k := len(f); k >= 2 && strings.HasSuffix(f[k-2], ".p") {
		w, err := strconv.Atoi(f[k-1])
		if err != nil || w < 1 || w >= Width || strconv.Itoa(w) != f[k-1] {
			return tlog.Tile{}, fmt.Errorf("%w %q: width", ErrPath, p)
		}
		t.W = w
		f[k-2] = strings.TrimSuffix(f[k-2], ".p")
		f = f[:k-1]
	}
	if len(f) > 6 {
		return tlog.Tile{}, fmt.Errorf("%w %q: index", ErrPath, p)
	}
	for i, s := range f {
		if i < len(f)-1 {
			if !strings.HasPrefix(s, "x") {
				return tlog.Tile{}, fmt.Errorf("%w %q: index", ErrPath, p)
			}
			s = s[1:]
		}
		if len(s) != 3 || strings.Trim(s, "0123456789") != "" {
			return tlog.Tile{}, fmt.Errorf("%w %q: index", ErrPath, p)
		}
		d, _ := strconv.Atoi(s)
		t.N = t.N*1000 + int64(d)
	}
	if t.N < 0 || Path(t) != p {
		return tlog.Tile{}, fmt.Errorf("%w %q", ErrPath, p)
	}
	return t, nil
}

// In says whether t exists in a tree of n leaves: full tiles, and partial
// ones of any width up to what n holds (a partial tile of a smaller signed
// size is a prefix of the tile at n).
func In(t tlog.Tile, n int64) bool {
	if t.L < Entries || t.L > MaxLevel || t.N < 0 || t.W < 1 || t.W > Width || n < 0 {
		return false
	}
	m := n >> (Height * max(t.L, 0))
	return t.N <= m>>Height && t.N*Width+int64(t.W) <= m
}

// ForSize lists the tiles of a tree of n leaves as C2SP serves them: every
// full tile of every level, the partial ones at n, and the entry bundles.
func ForSize(n int64) []tlog.Tile { return slices.Collect(All(n)) }

// All yields ForSize's tiles one by one: a mirror of a tree of 2^40
// leaves walks four billion tiles and must not hold their list.
func All(n int64) iter.Seq[tlog.Tile] {
	return func(yield func(tlog.Tile) bool) {
		for l := 0; l <= MaxLevel; l++ {
			m := n >> (Height * l)
			if m == 0 {
				break
			}
			for k := int64(0); k*Width < m; k++ {
				if !yield(Hash(l, k, int(min(Width, m-k*Width)))) {
					return
				}
			}
		}
		for k := int64(0); k*Width < n; k++ {
			if !yield(Bundle(k, int(min(Width, n-k*Width)))) {
				return
			}
		}
	}
}

// Count is len(ForSize(n)), without the list.
func Count(n int64) int64 {
	var c int64
	for l := 0; l <= MaxLevel; l++ {
		m := n >> (Height * l)
		if m == 0 {
			break
		}
		c += (m + Width - 1) / Width
	}
	return c + (n+Width-1)/Width
}

// AppendEntry appends one entry to a bundle: a big-endian uint16 length,
// then the bytes. An eliminated record is an empty entry.
func AppendEntry(bundle, entry []byte) ([]byte, error) {
	if len(entry) > 0xFFFF {
		return bundle, fmt.Errorf("tiles: entry of %d bytes does not fit a uint16 length", len(entry))
	}
	bundle = binary.BigEndian.AppendUint16(bundle, uint16(len(entry)))
	return append(bundle, entry...), nil
}

// MaxBundle is the most bytes an entry bundle of width w can hold: w
// entries of the largest length a uint16 prefix allows.
func MaxBundle(w int) int64 { return int64(w) * (2 + 0xFFFF) }

// ReadBundle splits a bundle into its entries; want is the bundle's width.
// The entries alias data. It stops at want entries: bytes after them are
// refused, not split (a bundle of zeros would otherwise be millions of
// empty entries).
func ReadBundle(data []byte, want int) ([][]byte, error) {
	out := make([][]byte, 0, want)
	for len(data) > 0 {
		if len(out) == want {
			return nil, fmt.Errorf("tiles: bundle holds %d bytes after its %d entries", len(data), want)
		}
		if len(data) < 2 {
			return nil, errors.New("tiles: bundle ends inside a length")
		}
		k := int(binary.BigEndian.Uint16(data))
		if len(data) < 2+k {
			return nil, fmt.Errorf("tiles: entry %d claims %d bytes, %d left", len(out), k, len(data)-2)
		}
		out = append(out, data[2:2+k:2+k])
		data = data[2+k:]
	}
	if len(out) != want {
		return nil, fmt.Errorf("tiles: bundle holds %d entries, want %d", len(out), want)
	}
	return out, nil
}

// ReadHashes splits a hash tile into its hashes; want is its width.
func ReadHashes(data []byte, want int) ([]tlog.Hash, error) {
	if len(data) != want*tlog.HashSize {
		return nil, fmt.Errorf("tiles: hash tile of %d bytes, want %d", len(data), want*tlog.HashSize)
	}
	out := make([]tlog.Hash, want)
	for i := range out {
		out[i] = tlog.Hash(data[i*tlog.HashSize:])
	}
	return out, nil
}
