package registro

import (
	"fmt"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

// The compact range gives tlog's root at every size, and the same frontier
// the state row keeps.
func TestFronteiraComoOTlog(t *testing.T) {
	var m memoria
	var f Fronteira
	for i := range int64(1100) {
		d := fmt.Appendf(nil, "registro %d", i)
		hs, err := tlog.StoredHashes(i, d, m)
		if err != nil {
			t.Fatal(err)
		}
		m = append(m, hs...)
		f.Adicionar(tlog.RecordHash(d))
		raiz, err := tlog.TreeHash(i+1, m)
		if err != nil || f.Raiz() != raiz || !f.Valida() {
			t.Fatalf("size %d: root differs from tlog.TreeHash (%v)", i+1, err)
		}
		for j, x := range FronteiraIndices(i + 1) {
			if m[x] != f.Hashes[j] {
				t.Fatalf("size %d: frontier hash %d differs from stored hash %d", i+1, j, x)
			}
		}
	}
}

// memoria is a tree's stored hashes in memory: tlog's reference.
type memoria []tlog.Hash

func (m memoria) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		if x < 0 || x >= int64(len(m)) {
			return nil, fmt.Errorf("hash %d not held", x)
		}
		out[i] = m[x]
	}
	return out, nil
}
