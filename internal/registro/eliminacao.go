package registro

import (
	"fmt"
	"slices"

	"github.com/google/uuid"
)

// TipoEliminacao is the record of an erasure (CONTRACT §7, spec 2.2 /
// N-0d): `d6a log-eliminar` blanks records and appends one, so mirrors and
// monitors learn which indices to blank in what they hold.
const TipoEliminacao = "d6a.eliminacao"

// Eliminacao is that record: the indices blanked, ascending, and nothing
// personal (no citizen id, no draw id: the indices are already public
// leaves). The field order is the key order and must not change.
type Eliminacao struct {
	Tipo    string    `json:"tipo"`
	EventID uuid.UUID `json:"event_id"`
	Indices []int64   `json:"indices"`
}

func (r Eliminacao) Chaves() (uuid.UUID, uuid.UUID) { return r.EventID, uuid.Nil }

// Bytes is the canonical encoding, as Registro.Bytes.
func (r Eliminacao) Bytes() ([]byte, error) {
	if r.Indices == nil {
		r.Indices = []int64{}
	}
	return codificarRapido(r)
}

// nsEliminacao is the namespace of the ids of erasure records.
var nsEliminacao = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/formigueiro/d6a/transparencia/eliminacao"))

// NovaEliminacao is the record of an erasure at leaf indice (the record's
// own index, which makes its id unique) of the indices blanked.
func NovaEliminacao(indice int64, indices []int64) Eliminacao {
	is := slices.Clone(indices)
	slices.Sort(is)
	is = slices.Compact(is)
	r := Eliminacao{Tipo: TipoEliminacao, Indices: is}
	b, _ := r.Bytes()
	r.EventID = uuid.NewSHA1(nsEliminacao, fmt.Appendf(b, "@%d", indice))
	return r
}

func conferirEliminacao(r Eliminacao) error {
	if len(r.Indices) == 0 {
		return NovaFalha("registro.indices", "[]", "at least one index blanked")
	}
	for i, x := range r.Indices {
		if x < 0 || (i > 0 && x <= r.Indices[i-1]) {
			return NovaFalha(fmt.Sprintf("registro.indices[%d]", i), x, "indices ≥ 0, strictly ascending")
		}
	}
	return nil
}
