package tiles

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

func TestPathC2SP(t *testing.T) {
	casos := map[string]tlog.Tile{
		"tile/0/000":                  Hash(0, 0, Width),
		"tile/0/x001/x234/067":        Hash(0, 1234067, Width),
		"tile/2/001.p/7":              Hash(2, 1, 7),
		"tile/entries/000.p/1":        Bundle(0, 1),
		"tile/entries/x001/000":       Bundle(1000, Width),
		"tile/entries/x999/999.p/255": Bundle(999999, 255),
	}
	for p, want := range casos {
		if got := Path(want); got != p {
			t.Errorf("Path(%+v) = %q, want %q", want, got, p)
		}
		got, err := ParsePath(p)
		if err != nil || got != want {
			t.Errorf("ParsePath(%q) = %+v %v, want %+v", p, got, err, want)
		}
	}
}

func TestParsePathRecusaOQueNaoECanonico(t *testing.T) {
	for _, p := range []string{
		"", "tile", "tile/0", "tile/0/", "tile/6/000", "tile/-1/000", "tile/00/000", "tile/a/000",
		"tile/0/0", "tile/0/0000", "tile/0/x000/001", "tile/0/001/002", "tile/0/x001", "tile/0/abc",
		"tile/0/000.p/0", "tile/0/000.p/256", "tile/0/000.p/07", "tile/0/000.p/", "tile/0/000.p",
		"tile/data/000", "tile/8/0/000", "tiles/0/000", "tile/entries/000.p/300",
		"tile/0/x001/x002/x003/x004/x005/x006/007", "tile/0/x-01/000", "tile/0/+01",
	} {
		if tl, err := ParsePath(p); err == nil {
			t.Errorf("ParsePath(%q) = %+v, want an error", p, tl)
		}
	}
}

func TestIn(t *testing.T) {
	const n = 256*256 + 300 // two levels, a partial level-0 tile of 44
	casos := []struct {
		t  tlog.Tile
		in bool
	}{
		{Hash(0, 0, Width), true},
		{Hash(0, 256, Width), true},
		{Hash(0, 257, 44), true},
		{Hash(0, 257, 10), true},
		{Hash(0, 257, 45), false},
		{Hash(0, 257, Width), false},
		{Hash(0, 258, 1), false},
		{Hash(1, 0, Width), true},
		{Hash(1, 1, 1), true},
		{Hash(1, 1, 2), false},
		{Hash(2, 0, 1), true},
		{Hash(3, 0, 1), false},
		{Bundle(257, 44), true},
		{Bundle(257, 45), false},
		{Hash(0, 1<<55, Width), false},
	}
	for _, c := range casos {
		if got := In(c.t, n); got != c.in {
			t.Errorf("In(%s, %d) = %v, want %v", Path(c.t), n, got, c.in)
		}
	}
	for _, tl := range ForSize(n) {
		if !In(tl, n) {
			t.Errorf("ForSize lists %s, not in the tree", Path(tl))
		}
	}
	if got := len(ForSize(n)); got != 258+2+1+258 || Count(n) != int64(got) {
		t.Errorf("ForSize(%d): %d tiles, Count %d", n, got, Count(n))
	}
}

func TestBundle(t *testing.T) {
	var b []byte
	entradas := [][]byte{[]byte("a"), {}, bytes.Repeat([]byte("z"), 300)}
	for _, e := range entradas {
		var err error
		if b, err = AppendEntry(b, e); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadBundle(b, 3)
	if err != nil || len(got) != 3 || !bytes.Equal(got[0], entradas[0]) || len(got[1]) != 0 || !bytes.Equal(got[2], entradas[2]) {
		t.Fatalf("ReadBundle: %q %v", got, err)
	}
	if _, err := ReadBundle(b, 2); err == nil {
		t.Error("a bundle of 3 read as 2")
	}
	if _, err := ReadBundle(b[:len(b)-1], 3); err == nil {
		t.Error("a truncated bundle read")
	}
	// A bundle of zeros is entries of length 0: the reader stops at the
	// width asked for and refuses the rest, instead of splitting it.
	if _, err := ReadBundle(make([]byte, 1<<20), Width); err == nil || !strings.Contains(err.Error(), "after its 256 entries") {
		t.Errorf("a bundle of 1 MiB of zeros: %v", err)
	}
	if _, err := ReadBundle(append(bytes.Clone(b), 0, 0), 3); err == nil {
		t.Error("a bundle with an entry too many read")
	}
	if _, err := AppendEntry(nil, make([]byte, 1<<16)); err == nil {
		t.Error("an entry over 65535 bytes encoded")
	}
}
