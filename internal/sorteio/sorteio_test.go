package sorteio

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// naiveRandomInt is a deliberately different transcription of RandomInt
// from CONTRACT §4: hex via fmt, first 8 digits parsed with strconv.
func naiveRandomInt(t *testing.T, seed string, max, index int) int {
	t.Helper()
	h := fmt.Sprintf("%x", sha256.Sum256([]byte(seed+":"+strconv.Itoa(index))))
	v, err := strconv.ParseUint(h[:8], 16, 32)
	if err != nil {
		t.Fatalf("parsing %q: %v", h[:8], err)
	}
	return int(v % uint64(max))
}

// naiveShuffle is a reference Fisher-Yates written with an ascending step
// counter instead of a descending position, over a map copy of the input, so
// that it shares no loop shape with Shuffle.
func naiveShuffle(t *testing.T, ids []string, seed string) []string {
	t.Helper()
	n := len(ids)
	pos := make(map[int]string, n)
	for k, id := range ids {
		pos[k] = id
	}
	for step := 0; step < n-1; step++ {
		i := n - 1 - step
		j := naiveRandomInt(t, seed, i+1, step)
		pos[i], pos[j] = pos[j], pos[i]
	}
	var out []string
	for k := 0; k < n; k++ {
		out = append(out, pos[k])
	}
	return out
}

func randomID(r *rand.Rand) string {
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x",
		r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xfff, 0x8000|r.Uint32()&0x3fff, r.Uint64()&0xffffffffffff)
}

func TestShuffleProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(20261129, 1))
	for iter := 0; iter < 2000; iter++ {
		n := r.IntN(61)
		ids := make([]string, n)
		for k := range ids {
			ids[k] = randomID(r)
		}
		seed := Seed(randomID(r), FormatTimestamp(timeFromMillis(r.Int64N(1<<42))))
		before := slices.Clone(ids)

		got := Shuffle(ids, seed)

		if !slices.Equal(ids, before) {
			t.Fatalf("iter %d: Shuffle mutated its input", iter)
		}
		if got == nil {
			t.Fatalf("iter %d: Shuffle returned nil for %d ids", iter, n)
		}
		a, b := slices.Clone(got), slices.Clone(ids)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			t.Fatalf("iter %d: Shuffle output is not a permutation of the input\n in  %q\n out %q", iter, ids, got)
		}
		if want := naiveShuffle(t, ids, seed); !slices.Equal(got, want) {
			t.Fatalf("iter %d (n=%d, seed %s): Shuffle disagrees with the reference\n got  %q\n want %q", iter, n, seed, got, want)
		}
	}
}

func TestRandomIntMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for iter := 0; iter < 1000; iter++ {
		seed := Seed(randomID(r), "2026-01-01T00:00:00.000Z")
		max := 1 + r.IntN(1000)
		index := r.IntN(100)
		if got, want := RandomInt(seed, uint64(max), index), naiveRandomInt(t, seed, max, index); got != uint64(want) {
			t.Fatalf("RandomInt(%s, %d, %d) = %d, reference %d", seed, max, index, got, want)
		}
	}
}

func TestRandomIntZeroMaxPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("RandomInt with max 0 did not panic")
		}
	}()
	RandomInt("seed", 0, 0)
}

func TestListHash(t *testing.T) {
	emptyHash := fmt.Sprintf("%x", sha256.Sum256([]byte("[]")))
	if got := ListHash(nil); got != emptyHash {
		t.Errorf("ListHash(nil) = %s, want sha256(\"[]\") = %s", got, emptyHash)
	}
	if got := ListHash([]string{}); got != emptyHash {
		t.Errorf("ListHash([]) = %s, want %s", got, emptyHash)
	}
	// No HTML escaping and no spaces: the bytes hashed are exactly these.
	ids := []string{"a<b", "c&d", "e>f"}
	want := fmt.Sprintf("%x", sha256.Sum256([]byte(`["a<b","c&d","e>f"]`)))
	if got := ListHash(ids); got != want {
		t.Errorf("ListHash(%q) = %s, want hash of the compact unescaped array %s", ids, got, want)
	}
}

func TestSortearErrors(t *testing.T) {
	const ts = "2026-11-29T14:03:07.123Z"
	tests := []struct {
		name      string
		base, ts  string
		elegiveis []string
		wantInErr string
	}{
		{"nil list", "b", ts, nil, "empty list"},
		{"empty list", "b", ts, []string{}, "empty list"},
		{"duplicate", "b", ts, []string{"x", "y", "x"}, `duplicate id "x"`},
		{"duplicate differing in case", "b", ts, []string{"ABC", "abc"}, `duplicate id "abc"`},
		{"empty id", "b", ts, []string{"x", ""}, "elegiveis[1] is empty"},
		{"empty base", "", ts, []string{"x"}, "empty base"},
		{"timestamp without millis", "b", "2026-11-29T14:03:07Z", []string{"x"}, "timestamp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Sortear(tt.base, tt.ts, tt.elegiveis)
			if err == nil {
				t.Fatalf("Sortear = %+v, want error containing %q", res, tt.wantInErr)
			}
			if !strings.Contains(err.Error(), tt.wantInErr) {
				t.Errorf("Sortear error = %q, want it to contain %q", err, tt.wantInErr)
			}
		})
	}
}

func TestSortearSelecionadoIsFirst(t *testing.T) {
	res, err := Sortear("base", "2026-11-29T14:03:07.123Z", []string{"c", "a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Selecionado != res.Ordenados[PosicaoSorteada] {
		t.Errorf("selecionado %q is not ordenados[%d] of %q", res.Selecionado, PosicaoSorteada, res.Ordenados)
	}
	if !slices.Equal(res.Entrada, []string{"a", "b", "c"}) {
		t.Errorf("elegiveis_entrada = %q, want ascending [a b c]", res.Entrada)
	}
	if res.ListaHash != ListHash(res.Ordenados) {
		t.Errorf("lista_elegiveis_hash does not hash ordenados")
	}
}

func BenchmarkSortear50(b *testing.B) {
	r := rand.New(rand.NewPCG(50, 50))
	ids := make([]string, 50)
	for k := range ids {
		ids[k] = randomID(r)
	}
	for b.Loop() {
		if _, err := Sortear("3e1f9b2c-77aa-4f0e-8c1d-2b9a0c4d5e6f", "2026-12-01T00:00:00.000Z", ids); err != nil {
			b.Fatal(err)
		}
	}
}
