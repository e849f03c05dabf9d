package replay

import (
	"testing"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/registro"
)

// The replay accepts an erasure record without a decision; an index at or
// after its own is a divergence: only earlier records can have been
// blanked.
func TestEliminacao(t *testing.T) {
	e := registro.NovaEliminacao(9, []int64{7, 2, 7})
	rp := Novo(uuid.Nil)
	rp.Aplicar(9, e)
	if len(rp.Divergencias) != 0 || rp.Decisoes != 0 {
		t.Fatalf("replay of an erasure: %+v, %d decisions", rp.Divergencias, rp.Decisoes)
	}
	rp.Aplicar(5, e)
	if len(rp.Divergencias) != 1 {
		t.Fatalf("an erasure naming a later index: %+v", rp.Divergencias)
	}
}
