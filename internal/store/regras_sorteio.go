package store

import (
	"context"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// RegrasDoSorteio reads where the trigger rule began and the bytes of the
// d6a.regras_sorteio record recorded last (nil: none).
func (t Tx) RegrasDoSorteio(ctx context.Context) (gatilhoDesde int64, registro []byte, err error) {
	r, err := t.q.RegrasDoSorteio(ctx)
	if err != nil || r.Registro == "" {
		return r.GatilhoDesde, nil, err
	}
	return r.GatilhoDesde, []byte(r.Registro), nil
}

// GravarRegrasDoSorteio remembers the draw rule recorded at the log's size
// desde.
func (t Tx) GravarRegrasDoSorteio(ctx context.Context, desde int64, registro []byte) error {
	s := string(registro)
	return t.q.GravarRegrasDoSorteio(ctx, dbsqlc.GravarRegrasDoSorteioParams{DesdeIndice: desde, Registro: &s})
}
