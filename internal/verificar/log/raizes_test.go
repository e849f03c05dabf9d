package log_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// TestCossinadoDeOutraArvore: a d6a.cossinaturas record is a checkpoint
// the witnesses cosigned; its root must be this log's at that size. A
// witness's valid cosignature of another tree of the same size (the log
// showed the witnesses something else) fails the record, whether its size
// is still in the walk's ring of recent roots or read back from the tiles.
func TestCossinadoDeOutraArvore(t *testing.T) {
	t.Parallel()
	h, err := historico.NovaCossinada(10)
	if err != nil {
		t.Fatal(err)
	}
	for _, caso := range []struct {
		nome string
		n    int // the cosigned size
		anel int // the ring of recent roots (0: the walk's own)
	}{{"in the ring", len(h.Registros), 0}, {"read back from the tiles", 4, 2}} {
		t.Run(caso.nome, func(t *testing.T) {
			t.Parallel()
			walk := func(raiz tlog.Hash) log.ResumoReplay {
				t.Helper()
				cs, err := h.Cossinar(caso.n, raiz)
				if err != nil {
					t.Fatal(err)
				}
				regs := append(append([]registro.Registravel(nil), h.Registros...), cs)
				c := log.ComAnelDeRaizes(&log.Cliente{Base: servirRegistraveis(t, regs)}, caso.anel)
				res, err := c.Reproduzir(t.Context(), uuid.Nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			if res := walk(mth(h.Folhas[:caso.n])); res.Primeira != nil || res.Falhas != 0 {
				t.Fatalf("honest log: %v / %d failures", res.Primeira, res.Falhas)
			}
			outra := append(append([]tlog.Hash(nil), h.Folhas[:caso.n-1]...), tlog.RecordHash([]byte("another record")))
			res := walk(mth(outra))
			want := fmt.Sprintf("registro %d: registro.hash", len(h.Registros))
			if res.Primeira == nil || !strings.HasPrefix(res.Primeira.Error(), want) || res.Falhas != 1 {
				t.Fatalf("a cosignature of another tree: first failure %v, %d failures; want %q…", res.Primeira, res.Falhas, want)
			}
		})
	}
}
