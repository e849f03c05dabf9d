package store

import (
	"context"

	"github.com/formigueiro/d6a/internal/hierarquia"
)

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
