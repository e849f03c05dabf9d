package store

import (
	"context"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The draw's rules as the log recorded them (d6a.transparencia_regras).

// RegrasDoSorteio reads where the trigger rule began and the bytes of the
// d6a.regras_sorteio record recorded last (nil: none).
func (t Tx) RegrasDoSorteio(ctx context.Context) (gatilhoDesde int64, registro []byte, err error) {
	r, err := t.q.RegrasDoSorteio(ctx)
	if err != nil || r.Registro == "" {
		return r.GatilhoDesde, nil, err
	}
	return r.GatilhoDesde, []byte(r.Registro), nil
}

// RegrasSorteioAntes reads the last d6a.regras_sorteio record before the
// leaf antes (nil: none).
func (t Tx) RegrasSorteioAntes(ctx context.Context, antes int64) ([]byte, error) {
	r, err := t.q.RegrasSorteioAntes(ctx, antes)
	if achou, err := Found(err); !achou || err != nil {
		return nil, err
	}
	return r.Registro, nil
}

// GravarRegrasDoSorteio remembers the draw rule recorded at the log's size
// desde.
func (t Tx) GravarRegrasDoSorteio(ctx context.Context, desde int64, registro []byte) error {
	s := string(registro)
	return t.q.GravarRegrasDoSorteio(ctx, dbsqlc.GravarRegrasDoSorteioParams{DesdeIndice: desde, Registro: &s})
}

// SegueGatilho reports whether the draw eventIDSorteio was logged under
// the trigger's rule (CONTRACT §4); false when it has no record in the
// log or the rule no row.
func (t Tx) SegueGatilho(ctx context.Context, eventIDSorteio uuid.UUID) (bool, error) {
	segue, err := t.q.SorteioSegueGatilho(ctx, eventIDSorteio)
	if _, err := Found(err); err != nil {
		return false, err
	}
	return segue, nil
}
