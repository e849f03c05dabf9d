package testemunha

import (
	"context"
	"strings"
	"time"

	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// GravarCossinatura stores a witness's cosignature of the checkpoint of
// size tamanho (once per witness key and size).
func GravarCossinatura(ctx context.Context, db transparencia.DBTX, tamanho int64, c registro.Cossinatura, agora time.Time) error {
	_, err := db.Exec(ctx, `INSERT INTO d6a.transparencia_cossinaturas (chave, tamanho, linha, cossinada_em, recebida_em)
VALUES ($1, $2, $3, $4, $5) ON CONFLICT (chave, tamanho) DO NOTHING`, c.Chave, tamanho, c.Linha, c.Em, agora)
	return err
}

// UltimaCossinatura returns the latest checkpoint size a witness key
// cosigned, and when (0 and the zero time when none).
func UltimaCossinatura(ctx context.Context, db transparencia.DBTX, chave string) (int64, time.Time, error) {
	var n int64
	var em *time.Time
	err := db.QueryRow(ctx, `SELECT coalesce(max(tamanho), 0), max(cossinada_em) FROM d6a.transparencia_cossinaturas WHERE chave = $1`, chave).Scan(&n, &em)
	if err != nil || em == nil {
		return n, time.Time{}, err
	}
	return n, *em, nil
}

// CheckpointCossinado is the latest signed checkpoint with every
// cosignature received for it appended (C2SP tlog-cosignature: more
// signature lines of the same note), and its size.
func CheckpointCossinado(ctx context.Context, db transparencia.DBTX) (string, int64, error) {
	nota, n, err := transparencia.UltimoCheckpoint(ctx, db)
	if err != nil {
		return nota, n, err
	}
	rows, err := db.Query(ctx, `SELECT linha FROM d6a.transparencia_cossinaturas WHERE tamanho = $1 ORDER BY chave`, n)
	if err != nil {
		return nota, n, err
	}
	defer rows.Close()
	var b strings.Builder
	b.WriteString(nota)
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return nota, n, err
		}
		b.WriteString(l)
	}
	return b.String(), n, rows.Err()
}
