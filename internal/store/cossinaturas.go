package store

import (
	"context"
	"time"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The witnesses' cosignatures of the log's checkpoints
// (d6a.transparencia_cossinaturas).

// GravarCossinatura stores the signature line a witness key returned for
// the checkpoint of size tamanho, cosigned at em and received at agora:
// once per key and size.
func (t Tx) GravarCossinatura(ctx context.Context, chave string, tamanho int64, linha string, em, agora time.Time) error {
	return t.q.InserirCossinatura(ctx, dbsqlc.InserirCossinaturaParams{
		Chave: chave, Tamanho: tamanho, Linha: linha, CossinadaEm: em, RecebidaEm: agora,
	})
}

// UltimaCossinatura is the latest checkpoint size a witness key cosigned,
// and when (0 and the zero time when none).
func (t Tx) UltimaCossinatura(ctx context.Context, chave string) (int64, time.Time, error) {
	r, err := t.q.BuscarUltimaCossinatura(ctx, chave)
	if err != nil {
		return 0, time.Time{}, err
	}
	// max() of no rows is NULL, which sqlc types as interface{}.
	em, _ := r.CossinadaEm.(time.Time)
	return r.Tamanho, em, nil
}

// LinhasCossinatura lists the signature lines received for the checkpoint
// of size tamanho, by witness key.
func (t Tx) LinhasCossinatura(ctx context.Context, tamanho int64) ([]string, error) {
	return t.q.BuscarLinhasCossinatura(ctx, tamanho)
}

// Cossinada is a stored cosignature, with the log's note of the checkpoint
// it cosigns.
type Cossinada struct {
	Chave   string
	Tamanho int64
	Linha   string
	Em      time.Time
	Nota    string
}

// CossinaturasCobrindo lists every cosignature of a checkpoint covering
// record indice (size > indice), by size then key.
func (t Tx) CossinaturasCobrindo(ctx context.Context, indice int64) ([]Cossinada, error) {
	rows, err := t.q.BuscarCossinaturasCobrindo(ctx, indice)
	if err != nil {
		return nil, err
	}
	out := make([]Cossinada, len(rows))
	for i, r := range rows {
		out[i] = Cossinada{Chave: r.Chave, Tamanho: r.Tamanho, Linha: r.Linha, Em: r.CossinadaEm.UTC(), Nota: r.Nota}
	}
	return out, nil
}
