package replay

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/registro"
)

// A replay restored from its state (through JSON, as the monitor keeps
// it) goes on exactly as the one it was taken from: the same checks on
// the records after.
func TestEstadoReplayRestaurado(t *testing.T) {
	h := historico.HistoriaSintetica("estado", 300)
	// The cut is at draw 100, after the records of the trigger before it
	// (the hierarchy records of its first use, if any, come before it).
	corte, vistas := 0, 0
	for i, r := range h {
		if _, ok := r.(registro.Registro); ok {
			if vistas == 100 {
				corte = i
				break
			}
			vistas++
		}
	}
	for {
		if _, ok := h[corte-1].(registro.Hierarquia); !ok {
			break
		}
		corte--
	}
	inteiro, parcial := Novo(uuid.Nil), Novo(uuid.Nil)
	for i, r := range h[:corte] {
		inteiro.Aplicar(int64(i), r)
		parcial.Aplicar(int64(i), r)
	}
	b, err := json.Marshal(parcial.Estado())
	if err != nil {
		t.Fatal(err)
	}
	var e Estado
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	restaurado := Restaurar(e)
	if !reflect.DeepEqual(restaurado.Estado().Conselheiros, inteiro.Estado().Conselheiros) || len(restaurado.vistos) != len(inteiro.vistos) {
		t.Fatalf("restored state differs")
	}
	for i, r := range h[corte:] {
		inteiro.Aplicar(int64(corte+i), r)
		restaurado.Aplicar(int64(corte+i), r)
	}
	if inteiro.Decisoes != 300 || restaurado.Decisoes != inteiro.Decisoes || len(restaurado.Divergencias) != 0 || len(inteiro.Divergencias) != 0 {
		t.Fatalf("decisions %d/%d, divergences %v/%v", restaurado.Decisoes, inteiro.Decisoes, restaurado.Divergencias, inteiro.Divergencias)
	}
	// A divergence after the cut is caught by the restored replay too: the
	// same draw again, its winner now busy, listed.
	sorteio := corte
	for {
		if _, ok := h[sorteio].(registro.Registro); ok {
			break
		}
		sorteio++
	}
	x := Restaurar(e)
	y := Novo(uuid.Nil)
	for i, r := range h[:corte] {
		y.Aplicar(int64(i), r)
	}
	for _, rp := range []*Replay{x, y} {
		for i, r := range h[corte : sorteio+1] {
			rp.Aplicar(int64(corte+i), r)
		}
		rp.Aplicar(int64(sorteio+1), h[sorteio])
	}
	if len(x.Divergencias) == 0 || !reflect.DeepEqual(x.Divergencias, y.Divergencias) {
		t.Errorf("divergences restored %v, whole %v", x.Divergencias, y.Divergencias)
	}
}
