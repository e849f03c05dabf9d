package registro

import (
	"github.com/google/uuid"
)

// TipoHierarquia is the "tipo" of a hierarchy record (CONTRACT §7
// "Hierarchy"): one parent link of the civic-unit tree that a decision's
// chain climbs.
const TipoHierarquia = "hierarquia.uc"

// Hierarquia is the record of one parent link, appended before the first
// decision that climbs it, and again whenever the service's view of
// core.uc_polygons changes it. A unit that core.uc_polygons does not hold
// is a root: its record has a null parent. Units are public geography,
// never personal data. The field order is the key order and must not
// change.
type Hierarquia struct {
	Tipo string `json:"tipo"`
	// EventID is the record's own id (derived from the decision's trigger).
	EventID uuid.UUID `json:"event_id"`
	// GatilhoSequence is the stream sequence of the consumed message whose
	// decision first climbs the link (null outside any trigger).
	GatilhoSequence *int64     `json:"gatilho_sequence"`
	UnidadeCivicaID uuid.UUID  `json:"unidade_civica_id"`
	ParentUcID      *uuid.UUID `json:"parent_uc_id"`
	// Nivel is how many links the unit is below its root, as the service
	// saw it when it recorded the link (0 at a root). It is informative:
	// the replay checks the links, and a root gaining a parent re-records
	// only its own link.
	Nivel int64 `json:"nivel"`
}

func (r Hierarquia) Chaves() (uuid.UUID, uuid.UUID) { return r.EventID, uuid.Nil }

// Bytes is the canonical encoding, as Registro.Bytes.
func (r Hierarquia) Bytes() ([]byte, error) { return codificarRapido(r) }

// NovaHierarquia is the record of uc's parent link (parent nil: a root).
func NovaHierarquia(eventID uuid.UUID, gatilho *int64, uc uuid.UUID, parent *uuid.UUID, nivel int) Hierarquia {
	return Hierarquia{Tipo: TipoHierarquia, EventID: eventID, GatilhoSequence: gatilho, UnidadeCivicaID: uc, ParentUcID: parent, Nivel: int64(nivel)}
}

func conferirHierarquia(r Hierarquia) error {
	if r.ParentUcID != nil && *r.ParentUcID == r.UnidadeCivicaID {
		return NovaFalha("registro.parent_uc_id", r.ParentUcID.String(), "a unit other than the record's own")
	}
	if r.Nivel < 0 || (r.ParentUcID == nil) != (r.Nivel == 0) {
		return NovaFalha("registro.nivel", r.Nivel, "0 at a root (parent_uc_id null), above 0 below one")
	}
	return nil
}

// Elo is a recorded parent link (Parent nil: a root).
type Elo struct {
	Parent *uuid.UUID
	Nivel  int
}

// MesmoElo says whether two parent links are the same link.
func MesmoElo(a, b *uuid.UUID) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}
