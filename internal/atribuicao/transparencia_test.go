package atribuicao_test

import (
	"github.com/formigueiro/d6a/internal/atribuicaotest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// CONTRACT §7: every decision is the next leaf, in decision order,
// committed with it: a draw and a re-draw after a refusal, each of which
// recomputes, and a sorteio.sem_candidatos with the counts its motive
// follows from.
func TestSorteiosEntramNoLogDeTransparencia(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	uc := a.UC(uuid.Nil)
	vazia := a.UC(uuid.Nil)
	a.Conselheiro(uc)
	a.Conselheiro(uc)
	a.Conselheiro(uc)
	p1 := atribuicaotest.Pedido(uc)
	r1 := a.SortearComSucesso(p1)
	pv := atribuicaotest.Pedido(vazia)
	a.Sortear(pv) // sem candidatos
	recusar(a, p1, r1.ConselheiroID)
	r2 := a.SortearComSucesso(atribuicaotest.Pedido(uc))

	// Each unit is a root here: the first decision in each records its
	// link (CONTRACT §7 "Hierarchy") just before it.
	n, err := transparencia.Tamanho(a.Ctx, a.St.Pool)
	if err != nil || n != 7 {
		t.Fatalf("log size %d, %v; want 7 (hierarchy, draw, hierarchy, sem_candidatos, refusal, re-draw, draw)", n, err)
	}
	folhas, err := transparencia.Folhas(a.Ctx, a.St.Pool, 0, n, 10)
	if err != nil {
		t.Fatal(err)
	}
	if folhas[1].EventIDSorteio != r1.EventIDSorteio || folhas[6].EventIDSorteio != r2.EventIDSorteio {
		t.Errorf("leaf order %s, …, %s; want the decision order %s, …, %s",
			folhas[1].EventIDSorteio, folhas[6].EventIDSorteio, r1.EventIDSorteio, r2.EventIDSorteio)
	}
	for _, k := range []int{0, 2} {
		h, err := registro.LerRegistravel(folhas[k].Registro)
		if hi, ok := h.(registro.Hierarquia); err != nil || !ok || hi.ParentUcID != nil {
			t.Errorf("leaf %d: %v %v, want the root record of the next decision's unit", k, h, err)
		}
	}
	for _, f := range folhas {
		if f.HashFolha != tlog.RecordHash(f.Registro) {
			t.Errorf("leaf %d: wrong leaf hash", f.Indice)
		}
		r, err := registro.LerRegistravel(f.Registro)
		if err != nil {
			t.Fatal(err)
		}
		if err := registro.ConferirRegistravel(r); err != nil {
			t.Errorf("leaf %d: %v", f.Indice, err)
		}
		reg, ok := r.(registro.Registro)
		if !ok {
			continue
		}
		aud := a.Auditoria(reg.EventIDSorteio)
		if aud.Seed != reg.Seed || aud.TimestampSorteio != reg.Timestamp || aud.Base != reg.Base || aud.Selecionado != reg.ConselheiroID {
			t.Errorf("leaf %d disagrees with the audit record", f.Indice)
		}
	}
	sc, err := registro.LerRegistravel(folhas[3].Registro)
	if err != nil {
		t.Fatal(err)
	}
	semc, ok := sc.(registro.SemCandidatos)
	if !ok || semc.Tipo != registro.TipoSemCandidatos || semc.DemandaID != pv.DemandaID || semc.Motivo != "nenhum_cadastrado" ||
		semc.Cadastrados != 0 || semc.Ocupados != 0 || len(semc.Cadeia) != 1 || semc.Cadeia[0] != vazia.String() {
		t.Errorf("leaf 3 %+v, want the sorteio.sem_candidatos of %s (nenhum_cadastrado, 0 of 0, chain [%s])", sc, pv.DemandaID, vazia)
	}
	if obs := a.Outbox("sorteio.sem_candidatos", pv.Dados.CorrelacaoID); len(obs) != 1 || obs[0].EventID != semc.EventID {
		t.Errorf("the record's event_id %s is not the published sorteio.sem_candidatos's (%v)", semc.EventID, obs)
	}
	// The refusal is an input record, before the re-draw it leads to, and
	// says nothing of its motive (spec 3.12).
	rec, err := registro.LerRegistravel(folhas[4].Registro)
	if e, ok := rec.(registro.Entrada); err != nil || !ok || e.Tipo != registro.TipoRecusa || *e.ConselheiroID != r1.ConselheiroID ||
		*e.DemandaID != p1.DemandaID || strings.Contains(string(folhas[4].Registro), "motivo") {
		t.Errorf("leaf 4 %s (%v), want the refusal of %s for %s, without a motive", folhas[4].Registro, err, r1.ConselheiroID, p1.DemandaID)
	}
	redraw, _ := registro.LerRegistro(folhas[5].Registro)
	if redraw.Excluido == nil || *redraw.Excluido != r1.ConselheiroID {
		t.Errorf("re-draw record excluido = %v, want %s", redraw.Excluido, r1.ConselheiroID)
	}
	// A sem_candidatos whose motive does not follow from its counts fails.
	semc.Motivo = "todos_ocupados"
	if err := registro.ConferirRegistravel(semc); err == nil || !strings.Contains(err.Error(), "registro.motivo") {
		t.Errorf("a wrong motive passed: %v", err)
	}
}

// Spec 3.12, CONTRACT §7: no public record reveals that a refusal was for
// personal risk. Two refusals, one for personal risk and one explicit,
// leave records that differ only in their ids.
func TestRecusaPorRiscoPessoalNaoApareceNoLog(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	uc := a.UC(uuid.Nil)
	a.Conselheiro(uc)
	a.Conselheiro(uc)
	p1, p2 := atribuicaotest.Pedido(uc), atribuicaotest.Pedido(uc)
	r1, r2 := a.SortearComSucesso(p1), a.SortearComSucesso(p2)
	e1 := recusarPor(a, p1, r1.ConselheiroID, "risco_pessoal")
	e2 := recusarPor(a, p2, r2.ConselheiroID, "recusa_explicita")
	n, err := transparencia.Tamanho(a.Ctx, a.St.Pool)
	if err != nil {
		t.Fatal(err)
	}
	folhas, err := transparencia.Folhas(a.Ctx, a.St.Pool, 0, n, 100)
	if err != nil {
		t.Fatal(err)
	}
	semIDs := map[uuid.UUID]string{}
	for _, f := range folhas {
		if strings.Contains(string(f.Registro), "risco") || strings.Contains(string(f.Registro), "motivo\":\"recusa") {
			t.Errorf("leaf %d tells a refusal's motive: %s", f.Indice, f.Registro)
		}
		r, err := registro.LerRegistravel(f.Registro)
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := r.(registro.Entrada); ok && e.Tipo == registro.TipoRecusa {
			txt := string(f.Registro)
			for _, id := range []uuid.UUID{e.EventID, *e.ConselheiroID, *e.DemandaID} {
				txt = strings.ReplaceAll(txt, id.String(), "ID")
			}
			semIDs[e.EventID] = txt
		}
	}
	if len(semIDs) != 2 || semIDs[e1] == "" || semIDs[e1] != semIDs[e2] {
		t.Errorf("refusal records %v: want two, alike but for their ids", semIDs)
	}
}
