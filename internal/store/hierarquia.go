package store

import (
	"context"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/hierarquia"
	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The units' hierarchy: as core.uc_polygons holds it, and as the log
// recorded it (d6a.hierarquia_registrada).

// CarregarHierarquia reads core.uc_polygons as the hierarchy cache's
// Loader wants it (spec 4.3, 6.4): one query per cache lifetime.
func (s *Store) CarregarHierarquia(ctx context.Context) ([]hierarquia.Par, error) {
	rows, err := s.Read().q.BuscarTodasHierarquias(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]hierarquia.Par, len(rows))
	for i, r := range rows {
		out[i] = hierarquia.Par{ID: r.ID, Parent: r.ParentUcID}
	}
	return out, nil
}

// Elo is a unit's link in the hierarchy the log recorded (CONTRACT §7
// Hierarchy): its parent (nil: a root) and how far below the root it is.
type Elo struct {
	UC     uuid.UUID
	Parent *uuid.UUID
	Nivel  int
}

// ElosRegistrados reads every recorded link.
func (t Tx) ElosRegistrados(ctx context.Context) ([]Elo, error) {
	rows, err := t.q.BuscarHierarquiaRegistrada(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Elo, len(rows))
	for i, r := range rows {
		out[i] = Elo{UC: r.UnidadeCivicaID, Parent: r.ParentUcID, Nivel: int(r.Nivel)}
	}
	return out, nil
}

// RegistrarElos upserts links in one statement.
func (t Tx) RegistrarElos(ctx context.Context, elos []Elo) error {
	p := dbsqlc.RegistrarHierarquiaParams{Ucs: make([]uuid.UUID, len(elos)), Parents: make([]uuid.UUID, len(elos)), Niveis: make([]int32, len(elos))}
	for i, e := range elos {
		p.Ucs[i] = e.UC
		if e.Parent != nil {
			p.Parents[i] = *e.Parent
		}
		p.Niveis[i] = int32(e.Nivel)
	}
	return t.q.RegistrarHierarquia(ctx, p)
}
