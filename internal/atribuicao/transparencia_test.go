package atribuicao_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/transparencia"
)

// CONTRACT §7: every decision is the next leaf, in decision order,
// committed with it: a draw and a re-draw after a refusal, each of which
// recomputes, and a sorteio.sem_candidatos with the counts its motive
// follows from.
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
	pv := pedido(vazia)
	a.sortear(pv) // sem candidatos
	a.recusar(p1, r1.ConselheiroID)
	r2 := a.sortearComSucesso(pedido(uc))

	n, err := transparencia.Tamanho(a.ctx, a.st.Pool)
	if err != nil || n != 4 {
		t.Fatalf("log size %d, %v; want 4 (draw, sem_candidatos, re-draw, draw)", n, err)
	}
	folhas, err := transparencia.Folhas(a.ctx, a.st.Pool, 0, n, 10)
	if err != nil {
		t.Fatal(err)
	}
	if folhas[0].EventIDSorteio != r1.EventIDSorteio || folhas[3].EventIDSorteio != r2.EventIDSorteio {
		t.Errorf("leaf order %s, …, %s; want the decision order %s, …, %s",
			folhas[0].EventIDSorteio, folhas[3].EventIDSorteio, r1.EventIDSorteio, r2.EventIDSorteio)
	}
	for _, f := range folhas {
		if f.HashFolha != tlog.RecordHash(f.Registro) {
			t.Errorf("leaf %d: wrong leaf hash", f.Indice)
		}
		r, err := transparencia.LerRegistravel(f.Registro)
		if err != nil {
			t.Fatal(err)
		}
		if err := transparencia.ConferirRegistravel(r); err != nil {
			t.Errorf("leaf %d: %v", f.Indice, err)
		}
		reg, ok := r.(transparencia.Registro)
		if !ok {
			continue
		}
		aud, err := a.st.Read().BuscarAuditoria(a.ctx, reg.EventIDSorteio)
		if err != nil {
			t.Fatal(err)
		}
		if aud.Seed != reg.Seed || aud.TimestampSorteio != reg.Timestamp || aud.Base != reg.Base || aud.Selecionado != reg.ConselheiroID {
			t.Errorf("leaf %d disagrees with the audit record", f.Indice)
		}
	}
	sc, err := transparencia.LerRegistravel(folhas[1].Registro)
	if err != nil {
		t.Fatal(err)
	}
	semc, ok := sc.(transparencia.SemCandidatos)
	if !ok || semc.Tipo != transparencia.TipoSemCandidatos || semc.DemandaID != pv.DemandaID || semc.Motivo != "nenhum_cadastrado" ||
		semc.Cadastrados != 0 || semc.Ocupados != 0 || len(semc.Cadeia) != 1 || semc.Cadeia[0] != vazia.String() {
		t.Errorf("leaf 1 %+v, want the sorteio.sem_candidatos of %s (nenhum_cadastrado, 0 of 0, chain [%s])", sc, pv.DemandaID, vazia)
	}
	if obs := a.outbox("sorteio.sem_candidatos", pv.Dados.CorrelacaoID); len(obs) != 1 || obs[0].EventID != semc.EventID {
		t.Errorf("the record's event_id %s is not the published sorteio.sem_candidatos's (%v)", semc.EventID, obs)
	}
	redraw, _ := transparencia.LerRegistro(folhas[2].Registro)
	if redraw.Excluido == nil || *redraw.Excluido != r1.ConselheiroID {
		t.Errorf("re-draw record excluido = %v, want %s", redraw.Excluido, r1.ConselheiroID)
	}
	// A sem_candidatos whose motive does not follow from its counts fails.
	semc.Motivo = "todos_ocupados"
	if err := transparencia.ConferirRegistravel(semc); err == nil || !strings.Contains(err.Error(), "registro.motivo") {
		t.Errorf("a wrong motive passed: %v", err)
	}
}
