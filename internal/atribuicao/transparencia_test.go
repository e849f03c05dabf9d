package atribuicao_test

import (
	"testing"

	"github.com/google/uuid"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/transparencia"
)

// CONTRACT §7: every successful draw (a re-draw after a refusal included)
// is the next leaf, in draw order, committed with the draw, and its record
// recomputes; a draw without candidates appends nothing.
func TestSorteiosEntramNoLogDeTransparencia(t *testing.T) {
	t.Parallel()
	a := novoAmbiente(t, nil)
	uc := a.uc(uuid.Nil)
	vazia := a.uc(uuid.Nil)
	a.conselheiro(uc)
	a.conselheiro(uc)
	a.conselheiro(uc)
	p1 := pedido(uc)
	r1 := a.sortearComSucesso(p1)
	a.sortear(pedido(vazia)) // sem candidatos
	a.recusar(p1, r1.ConselheiroID)
	r2 := a.sortearComSucesso(pedido(uc))

	n, err := transparencia.Tamanho(a.ctx, a.st.Pool)
	if err != nil || n != 3 {
		t.Fatalf("log size %d, %v; want 3 (draw, re-draw, draw)", n, err)
	}
	folhas, err := transparencia.Folhas(a.ctx, a.st.Pool, 0, n, 10)
	if err != nil {
		t.Fatal(err)
	}
	if folhas[0].EventIDSorteio != r1.EventIDSorteio || folhas[2].EventIDSorteio != r2.EventIDSorteio {
		t.Errorf("leaf order %s, %s, %s; want the draw order %s, re-draw, %s",
			folhas[0].EventIDSorteio, folhas[1].EventIDSorteio, folhas[2].EventIDSorteio, r1.EventIDSorteio, r2.EventIDSorteio)
	}
	for _, f := range folhas {
		reg, err := transparencia.LerRegistro(f.Registro)
		if err != nil {
			t.Fatal(err)
		}
		if err := transparencia.Conferir(reg); err != nil {
			t.Errorf("leaf %d: %v", f.Indice, err)
		}
		if f.HashFolha != tlog.RecordHash(f.Registro) {
			t.Errorf("leaf %d: wrong leaf hash", f.Indice)
		}
		aud, err := a.st.Read().BuscarAuditoria(a.ctx, reg.EventIDSorteio)
		if err != nil {
			t.Fatal(err)
		}
		if aud.Seed != reg.Seed || aud.TimestampSorteio != reg.Timestamp || aud.Base != reg.Base || aud.Selecionado != reg.ConselheiroID {
			t.Errorf("leaf %d disagrees with the audit record", f.Indice)
		}
	}
	redraw, _ := transparencia.LerRegistro(folhas[1].Registro)
	if redraw.Excluido == nil || *redraw.Excluido != r1.ConselheiroID {
		t.Errorf("re-draw record excluido = %v, want %s", redraw.Excluido, r1.ConselheiroID)
	}
}
