package registro

import (
	"encoding/base64"
	"fmt"

	"golang.org/x/mod/sumdb/tlog"
)

// RaizesRecentes keeps the frontier of the tree at each of the last few
// thousand sizes a walk passed, so a d6a.cossinaturas record's checkpoint
// (a size a little below the record's own index) is held to the log's own
// tree as the walk goes (ConferirCossinado), keeping no hash per record.
// The ring is allocated at the walk's first d6a.compromisso record (Ver):
// cosigned checkpoints are recorded only under a rule with witnesses, whose
// checkpoints cover that record, so a log without witnesses costs nothing.
type RaizesRecentes struct {
	n    int
	anel []fronteiraFixa
}

// fronteiraFixa is a Fronteira copied into fixed storage: keeping one per
// leaf allocates nothing.
type fronteiraFixa struct {
	n      int64
	k      int
	hashes [64]tlog.Hash
}

// RaizesNoAnel is the usual ring: 8 MiB of frontiers, far more records
// than a colony appends between signing a checkpoint and recording its
// cosignatures.
const RaizesNoAnel = 4096

// NovasRaizes is a ring of the frontiers of the last n sizes
// (RaizesNoAnel when n ≤ 0), allocated by Ver.
func NovasRaizes(n int) *RaizesRecentes {
	if n <= 0 {
		n = RaizesNoAnel
	}
	return &RaizesRecentes{n: n}
}

// Ver is told each record the walk reads, before its leaf is kept: the
// first d6a.compromisso allocates the ring.
func (r *RaizesRecentes) Ver(reg Registravel) {
	if _, ok := reg.(Compromisso); !ok || r.anel != nil {
		return
	}
	r.anel = make([]fronteiraFixa, r.n)
	for i := range r.anel {
		r.anel[i].n = -1
	}
}

// Guardar keeps fr's frontier, the tree of fr.N leaves (once Ver has
// allocated the ring).
func (r *RaizesRecentes) Guardar(fr *Fronteira) {
	if r.anel == nil {
		return
	}
	f := &r.anel[fr.N%int64(len(r.anel))]
	f.n, f.k = fr.N, copy(f.hashes[:], fr.Hashes)
}

// Raiz is the root of the tree of n leaves, if the ring still holds it.
func (r *RaizesRecentes) Raiz(n int64) (tlog.Hash, bool) {
	if r.anel == nil {
		return tlog.Hash{}, false
	}
	f := &r.anel[n%int64(len(r.anel))]
	if f.n != n {
		return tlog.Hash{}, false
	}
	fr := Fronteira{N: f.n, Hashes: f.hashes[:f.k]}
	return fr.Raiz(), true
}

// ConferirCossinado holds a cosigned checkpoint recorded in the log to the
// log's own root at its size: otherwise the log showed the witnesses
// another tree, and the times they cosigned it say nothing of these
// records (CONTRACT §4a: C comes from cosignatures of this log).
func ConferirCossinado(r CossinaturasRegistro, raiz tlog.Hash) error {
	if want := base64.StdEncoding.EncodeToString(raiz[:]); r.Hash != want {
		return NovaFalha("registro.hash", r.Hash, want+fmt.Sprintf(" (this log's root at size %d)", r.Tamanho))
	}
	return nil
}
