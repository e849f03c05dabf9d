package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"testing"
	"time"
)

// GET /d6a/transparencia/resumo: 404 before the first signed checkpoint,
// then the latest one (by size, not by insertion) with the trigger rule's
// first index, 0 when the rule has no row.
func TestResumoDoLog(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, nil)
	ctx := context.Background()
	const rota = "/d6a/transparencia/resumo"

	s.get(t, rota).erro(t, 404)

	maior, menor := bytes.Repeat([]byte{7}, 32), bytes.Repeat([]byte{3}, 32)
	assinado := time.Date(2026, 11, 29, 11, 0, 0, 0, time.FixedZone("BRT", -3*3600))
	if _, err := s.st.Pool.Exec(ctx, `INSERT INTO d6a.transparencia_checkpoints (tamanho, raiz, nota, assinado_em)
		VALUES (7, $1, 'sete', $2), (3, $3, 'tres', $2 + interval '1 hour')`, maior, assinado, menor); err != nil {
		t.Fatal(err)
	}
	if _, err := s.st.Pool.Exec(ctx, `UPDATE d6a.transparencia_regras SET desde_indice = 5 WHERE regra = 'gatilho'`); err != nil {
		t.Fatal(err)
	}
	r := s.get(t, rota)
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	igual(t, r.json(t), map[string]any{
		"tamanho":       float64(7),
		"raiz":          base64.StdEncoding.EncodeToString(maior),
		"assinado_em":   "2026-11-29T14:00:00Z",
		"gatilho_desde": float64(5),
	})

	if _, err := s.st.Pool.Exec(ctx, `DELETE FROM d6a.transparencia_regras WHERE regra = 'gatilho'`); err != nil {
		t.Fatal(err)
	}
	if got := s.get(t, rota).json(t)["gatilho_desde"]; got != float64(0) {
		t.Fatalf("gatilho_desde without the rule = %v, want 0", got)
	}
}
