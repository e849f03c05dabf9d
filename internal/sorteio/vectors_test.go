package sorteio

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// vectors mirrors testdata/vectors.json, the published test vectors of
// CONTRACT §4 that every implementation must reproduce bit for bit.
type vectors struct {
	About string `json:"about"`
	Unit  struct {
		Seed      string `json:"seed"`
		RandomInt []struct {
			Max   uint64 `json:"max"`
			Index int    `json:"index"`
			Value uint64 `json:"value"`
		} `json:"randomInt"`
	} `json:"unit"`
	Cases []struct {
		Note        string   `json:"note"`
		Base        string   `json:"base"`
		Timestamp   string   `json:"timestamp"`
		Randomness  string   `json:"randomness"`
		Entrada     []string `json:"elegiveis_entrada"`
		Seed        string   `json:"seed"`
		Ordenados   []string `json:"ordenados"`
		Selecionado string   `json:"selecionado"`
		ListaHash   string   `json:"lista_elegiveis_hash"`
	} `json:"cases"`
}

func loadVectors(t testing.TB) vectors {
	t.Helper()
	data, err := os.ReadFile("../../testdata/vectors.json")
	if err != nil {
		t.Fatalf("reading vectors: %v", err)
	}
	// Unknown fields would mean the vectors grew a rule this test does not
	// check yet, so they fail the test instead of being skipped.
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var v vectors
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding vectors: %v", err)
	}
	comRodada := 0
	for _, c := range v.Cases {
		if c.Randomness != "" {
			comRodada++
		}
	}
	if comRodada == 0 {
		t.Fatalf("vectors.json has no case under the beacon rule (randomness)")
	}
	if len(v.Unit.RandomInt) == 0 || len(v.Cases) == 0 {
		t.Fatalf("vectors.json has no randomInt or no cases")
	}
	return v
}

func TestVectorsRandomInt(t *testing.T) {
	v := loadVectors(t)
	for _, c := range v.Unit.RandomInt {
		got := RandomInt(v.Unit.Seed, c.Max, c.Index)
		if got != c.Value {
			t.Errorf("RandomInt(%q, max=%d, index=%d) = %d, vector says %d",
				v.Unit.Seed, c.Max, c.Index, got, c.Value)
		}
	}
}

func TestVectorsCases(t *testing.T) {
	v := loadVectors(t)
	for _, c := range v.Cases {
		t.Run(c.Note, func(t *testing.T) {
			// The vectors store the canonical input; it must already be
			// lowercase and ascending, or the vector itself is wrong.
			if !slices.IsSorted(c.Entrada) {
				t.Fatalf("vector elegiveis_entrada is not ascending: %q", c.Entrada)
			}
			for _, id := range c.Entrada {
				if id != strings.ToLower(id) {
					t.Fatalf("vector elegiveis_entrada has non-lowercase id %q", id)
				}
			}

			seed := Seed(c.Base, c.Timestamp)
			if c.Randomness != "" {
				seed = SeedComRodada(c.Base, c.Timestamp, c.Randomness)
			}
			if seed != c.Seed {
				t.Errorf("seed(%q, %q, randomness %q) = %s, vector says %s", c.Base, c.Timestamp, c.Randomness, seed, c.Seed)
			}
			if got := Shuffle(c.Entrada, c.Seed); !slices.Equal(got, c.Ordenados) {
				t.Errorf("Shuffle(elegiveis_entrada, seed):\n got  %q\n want %q", got, c.Ordenados)
			}
			if got := ListHash(c.Ordenados); got != c.ListaHash {
				t.Errorf("ListHash(ordenados) = %s, vector says %s", got, c.ListaHash)
			}

			// The draw must not depend on the order or case in which the
			// ids arrive (CONTRACT §4 canonical input), so feed the vector
			// as given, reversed, and reversed in uppercase.
			reversed := slices.Clone(c.Entrada)
			slices.Reverse(reversed)
			upper := make([]string, len(reversed))
			for i, id := range reversed {
				upper[i] = strings.ToUpper(id)
			}
			inputs := map[string][]string{
				"as given":           c.Entrada,
				"reversed":           reversed,
				"reversed uppercase": upper,
			}
			for name, in := range inputs {
				before := slices.Clone(in)
				res, err := SortearComRodada(c.Base, c.Timestamp, c.Randomness, in)
				if err != nil {
					t.Errorf("%s: Sortear: %v", name, err)
					continue
				}
				if !slices.Equal(in, before) {
					t.Errorf("%s: Sortear mutated its input: %q, was %q", name, in, before)
				}
				if res.Seed != c.Seed {
					t.Errorf("%s: seed = %s, vector says %s", name, res.Seed, c.Seed)
				}
				if !slices.Equal(res.Entrada, c.Entrada) {
					t.Errorf("%s: elegiveis_entrada = %q, vector says %q", name, res.Entrada, c.Entrada)
				}
				if !slices.Equal(res.Ordenados, c.Ordenados) {
					t.Errorf("%s: ordenados:\n got  %q\n want %q", name, res.Ordenados, c.Ordenados)
				}
				if res.Selecionado != c.Selecionado {
					t.Errorf("%s: selecionado = %s, vector says %s", name, res.Selecionado, c.Selecionado)
				}
				if res.ListaHash != c.ListaHash {
					t.Errorf("%s: lista_elegiveis_hash = %s, vector says %s", name, res.ListaHash, c.ListaHash)
				}
			}

			// A third party running d6a verify with the vector as the
			// claim must get a clean bill.
			a := Alegacao{
				Base:        c.Base,
				Timestamp:   c.Timestamp,
				Elegiveis:   reversed,
				Randomness:  c.Randomness,
				Seed:        &c.Seed,
				Ordenados:   c.Ordenados,
				Selecionado: &c.Selecionado,
				ListaHash:   &c.ListaHash,
			}
			if _, err := Verificar(a); err != nil {
				t.Errorf("Verificar(vector) = %v, want nil", err)
			}
		})
	}
}
