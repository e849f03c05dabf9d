package registro

import "golang.org/x/mod/sumdb/tlog"

// Fronteira is a compact range from leaf 0: the roots of the complete
// subtrees a tree of N leaves splits into, the largest first, the same
// right edge the state row keeps (FronteiraIndices). With it the verifier
// rebuilds the root leaf by leaf in O(log N) memory, keeping no hash per
// record, and a monitor goes on from where it stopped.
type Fronteira struct {
	N      int64
	Hashes []tlog.Hash
}

// Adicionar appends the leaf hash h as leaf N: every complete subtree it
// closes is merged with tlog.NodeHash (RFC 6962).
func (f *Fronteira) Adicionar(h tlog.Hash) {
	f.Hashes = append(f.Hashes, h)
	for n := f.N; n&1 == 1; n >>= 1 {
		k := len(f.Hashes)
		f.Hashes[k-2] = tlog.NodeHash(f.Hashes[k-2], f.Hashes[k-1])
		f.Hashes = f.Hashes[:k-1]
	}
	f.N++
}

// Raiz is the RFC 6962 root of the N leaves (zero for none), folded from
// the right as tlog.TreeHash does.
func (f *Fronteira) Raiz() tlog.Hash {
	if len(f.Hashes) == 0 {
		return tlog.Hash{}
	}
	h := f.Hashes[len(f.Hashes)-1]
	for i := len(f.Hashes) - 2; i >= 0; i-- {
		h = tlog.NodeHash(f.Hashes[i], h)
	}
	return h
}

// Valida says whether the hash count is the one N needs (one per set bit).
func (f *Fronteira) Valida() bool {
	k := 0
	for n := f.N; n > 0; n &= n - 1 {
		k++
	}
	return f.N >= 0 && k == len(f.Hashes)
}

// FronteiraIndices are the storage indexes of the roots of the complete
// subtrees that make up a tree of n leaves, left to right: all an append
// at leaf n and after ever reads of the existing tree.
func FronteiraIndices(n int64) []int64 {
	var out []int64
	var inicio int64
	for nivel := 62; nivel >= 0; nivel-- {
		if n&(1<<nivel) != 0 {
			out = append(out, tlog.StoredHashIndex(nivel, inicio>>nivel))
			inicio += 1 << nivel
		}
	}
	return out
}
