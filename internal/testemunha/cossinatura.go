package testemunha

import (
	"context"
	"strings"
	"time"

	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// GravarCossinatura stores a witness's cosignature of the checkpoint of
// size tamanho (once per witness key and size).
func GravarCossinatura(ctx context.Context, db transparencia.DBTX, tamanho int64, c registro.Cossinatura, agora time.Time) error {
	return store.On(db).GravarCossinatura(ctx, c.Chave, tamanho, c.Linha, c.Em, agora)
}

// UltimaCossinatura returns the latest checkpoint size a witness key
// cosigned, and when (0 and the zero time when none).
func UltimaCossinatura(ctx context.Context, db transparencia.DBTX, chave string) (int64, time.Time, error) {
	return store.On(db).UltimaCossinatura(ctx, chave)
}

// CheckpointCossinado is the latest signed checkpoint with every
// cosignature received for it appended (C2SP tlog-cosignature: more
// signature lines of the same note), and its size.
func CheckpointCossinado(ctx context.Context, db transparencia.DBTX) (string, int64, error) {
	nota, n, err := transparencia.UltimoCheckpoint(ctx, db)
	if err != nil {
		return nota, n, err
	}
	linhas, err := store.On(db).LinhasCossinatura(ctx, n)
	if err != nil {
		return nota, n, err
	}
	var b strings.Builder
	b.WriteString(nota)
	for _, l := range linhas {
		b.WriteString(l)
	}
	return b.String(), n, nil
}
