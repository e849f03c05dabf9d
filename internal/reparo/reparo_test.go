package reparo_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/atribuicaotest"
	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/reparo"
	"github.com/formigueiro/d6a/internal/sorteio"
	consistencia "github.com/formigueiro/d6a/internal/verificar/barramento"
)

func TestMain(m *testing.M) { atribuicaotest.Main(m) }

// perdido is a conselheiro.sorteado at stream sequence seq, drawing
// demanda to conselheiro, whose rows the database lost (as
// verificar/barramento reports it; the colony's failover tests make one
// with a real standby and bus).
func perdido(a *atribuicaotest.Ambiente, seq uint64, conselheiro, demanda, uc uuid.UUID) consistencia.SorteadoPerdido {
	id := uuid.New()
	corr := demanda.String()
	env, err := json.Marshal(map[string]any{"event_id": id, "tipo": "conselheiro.sorteado", "payload": map[string]any{"demanda_id": demanda}})
	if err != nil {
		a.T.Fatal(err)
	}
	return consistencia.SorteadoPerdido{
		Resultado: consistencia.Resultado{
			Seq: seq, EventID: id, Tipo: evento.ConselheiroSorteado, Subject: "eventos.conselheiro.sorteado",
			CorrelacaoID: &corr, Envelope: env,
		},
		ConselheiroID: conselheiro, DemandaID: demanda, UC: uc,
		Seed: "seed-" + corr, ListaHash: strings.Repeat("ab", 32), Timestamp: sorteio.FormatTimestamp(a.Clk.Now()),
		Total: 2, Posicao: 1,
		Agenda: &evento.AgendaItemDisponivelPayload{DemandaID: demanda, UnidadeCivicaID: uc, CategoriaID: "SAU", NivelPrecedencia: 2, ScoreFinal: 50},
	}
}

// atribuicaoLida is an assignment as the repair's tests check it against the
// published draw.
type atribuicaoLida struct {
	ID, ConselheiroID, DemandaID, UnidadeCivicaID uuid.UUID
	Status, SeedPublico, CategoriaID              string
	ListaElegiveisHash                            *string
	TotalElegiveis, PosicaoSorteada               int32
	NivelPrecedencia                              int32
	ScoreFinal                                    float64
}

// atribuicaoDoSorteio reads the assignment of the draw eventID with plain
// SQL on the pool (pgx.ErrNoRows: none).
func atribuicaoDoSorteio(a *atribuicaotest.Ambiente, eventID uuid.UUID) (atribuicaoLida, error) {
	var at atribuicaoLida
	err := a.St.Pool.QueryRow(a.Ctx, `SELECT id, conselheiro_id, demanda_id, unidade_civica_id, status, seed_publico,
		categoria_id, lista_elegiveis_hash, total_elegiveis, posicao_sorteada, nivel_precedencia, score_final
		FROM d6a.atribuicoes WHERE event_id_sorteio = $1`, eventID).Scan(&at.ID, &at.ConselheiroID, &at.DemandaID,
		&at.UnidadeCivicaID, &at.Status, &at.SeedPublico, &at.CategoriaID, &at.ListaElegiveisHash, &at.TotalElegiveis,
		&at.PosicaoSorteada, &at.NivelPrecedencia, &at.ScoreFinal)
	return at, err
}

// A lost draw is re-created from the bus as published (never drawn again):
// the assignment with the published seed and the agenda's snapshot, the
// counsellor occupied, the demand out of the queue, the outbox row
// published, the agenda item processed, the d6a.reconciliacoes row. A
// second run finds it; a draw the database cannot take (busy or unknown
// counsellor) is a conflict that writes nothing.
func TestReconciliarRecriaOSorteioDoBarramento(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	uc := a.UC(uuid.Nil)
	c := a.Conselheiro(uc)
	d := uuid.New()
	if _, err := a.St.Pool.Exec(a.Ctx, `INSERT INTO d6a.fila_pendentes (id, demanda_id, unidade_civica_id, categoria_id,
		nivel_precedencia, score_final, data_entrada, event_id_origem, tentativas_sorteio)
		VALUES (md5('d6a.fila_pendentes|' || ($1::uuid)::text)::uuid, $1::uuid, $2, 'SAU', 2, 50, $3, $4, 1)`,
		d, uc, a.Clk.Now(), uuid.New()); err != nil {
		t.Fatal(err)
	}
	p := perdido(a, 10, c, d, uc)
	p.AgendaEventID, p.AgendaSeq, p.Base, p.BaseSeq = uuid.New(), 9, "base", 8
	r := reparo.New(a.Svc, nil)

	if out, err := r.Reconciliar(a.Ctx, p); err != nil || out != reparo.Recriada {
		t.Fatalf("Reconciliar: %q, %v; want recriada", out, err)
	}
	at, err := atribuicaoDoSorteio(a, p.EventID)
	if err != nil {
		t.Fatal(err)
	}
	if at.Status != atribuicao.AtribuicaoAtiva || at.ConselheiroID != c || at.DemandaID != d || at.UnidadeCivicaID != uc ||
		at.SeedPublico != p.Seed || at.ListaElegiveisHash == nil || *at.ListaElegiveisHash != p.ListaHash ||
		at.TotalElegiveis != 2 || at.PosicaoSorteada != 1 || at.CategoriaID != "SAU" || at.NivelPrecedencia != 2 || at.ScoreFinal != 50 {
		t.Errorf("re-created assignment %+v does not match the published draw %+v", at, p)
	}
	if s := a.LinhaConselheiro(c).Status; s != elegibilidade.Ocupado {
		t.Errorf("counsellor %s after the repair, want ocupado", s)
	}
	if _, achou := a.Pendente(d); achou {
		t.Error("the demand is still pending")
	}
	if n := a.Contar(`SELECT count(*) FROM d6a.outbox WHERE event_id = $1 AND publicado_em IS NOT NULL AND sequence = 10`, p.EventID); n != 1 {
		t.Errorf("%d published outbox rows of the draw at sequence 10, want 1", n)
	}
	if n := a.Contar(`SELECT count(*) FROM d6a.eventos_processados WHERE event_id = $1`, p.AgendaEventID); n != 1 {
		t.Errorf("agenda item processed %d times, want 1", n)
	}
	if n := a.Contar(`SELECT count(*) FROM d6a.reconciliacoes WHERE event_id_sorteio = $1 AND atribuicao_id = $2
		AND sequence = 10 AND base = 'base' AND base_sequence = 8`, p.EventID, at.ID); n != 1 {
		t.Errorf("%d d6a.reconciliacoes rows naming the draw and its base, want 1", n)
	}

	if out, err := r.Reconciliar(a.Ctx, p); err != nil || out != reparo.JaExistia {
		t.Fatalf("second Reconciliar: %q, %v; want ja-existia", out, err)
	}
	for nome, q := range map[string]consistencia.SorteadoPerdido{
		"busy counsellor":    perdido(a, 11, c, uuid.New(), uc),
		"unknown counsellor": perdido(a, 12, uuid.New(), uuid.New(), uc),
		"demand assigned":    perdido(a, 13, a.Conselheiro(uc), d, uc),
	} {
		if _, err := r.Reconciliar(a.Ctx, q); !errors.Is(err, reparo.ErrConflito) {
			t.Errorf("%s: %v, want ErrConflito", nome, err)
		}
	}
	if n := a.Contar(`SELECT count(*) FROM d6a.atribuicoes`); n != 1 {
		t.Errorf("%d assignments after the conflicts, want 1 (a conflict writes nothing)", n)
	}
	if n := a.Contar(`SELECT count(*) FROM d6a.reconciliacoes`); n != 1 {
		t.Errorf("%d reconciliations after the conflicts, want 1", n)
	}
}

// A lost input is applied through its handler in the repair's unit; the
// draw the handler makes for a demand the bus shows drawn is undone before
// the commit (never published, no audit row) and the bus's draw takes its
// place. A second repair changes nothing.
func TestRepararDescartaOSorteioRefeito(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	uc := a.UC(uuid.Nil)
	x, y := a.Conselheiro(uc), a.Conselheiro(uc)
	d := uuid.New()
	ev := evento.Evento{
		Envelope: evento.Envelope{EventID: uuid.New(), Tipo: evento.AgendaItemDisponivel, Origem: "D-5", VersaoSchema: "1.0.0"},
		Payload:  evento.AgendaItemDisponivelPayload{DemandaID: d, UnidadeCivicaID: uc, CategoriaID: "SAU", NivelPrecedencia: 2, ScoreFinal: 50},
	}
	p := perdido(a, 6, x, d, uc)
	p.EntradaSeq = 5
	rel := consistencia.Relatorio{
		SemOutbox:        []consistencia.Resultado{p.Resultado},
		Perdidos:         []consistencia.SorteadoPerdido{p},
		EntradasPerdidas: []consistencia.EntradaPerdida{{Seq: 5, Evento: ev}},
	}
	conferir := func(vez string) {
		t.Helper()
		if n := a.Contar(`SELECT count(*) FROM d6a.atribuicoes WHERE demanda_id = $1`, d); n != 1 {
			t.Fatalf("%s: %d assignments of the demand, want the bus's one", vez, n)
		}
		at, achou, err := a.St.Read().AtribuicaoAtivaDaDemanda(a.Ctx, d)
		if err != nil || !achou || at.EventIDSorteio != p.EventID || at.ConselheiroID != x {
			t.Fatalf("%s: active assignment %+v (found %v), %v; want the bus's draw %s to %s", vez, at, achou, err, p.EventID, x)
		}
		if n := a.Contar(`SELECT count(*) FROM d6a.outbox WHERE tipo = 'conselheiro.sorteado' AND publicado_em IS NULL`); n != 0 {
			t.Errorf("%s: %d draws left to publish, want none", vez, n)
		}
		if n := a.Contar(`SELECT count(*) FROM d6a.auditoria_sorteios WHERE demanda_id = $1`, d); n != 0 {
			t.Errorf("%s: %d audit rows of the discarded draw", vez, n)
		}
		if n := a.Contar(`SELECT count(*) FROM d6a.eventos_processados WHERE event_id = $1`, ev.EventID); n != 1 {
			t.Errorf("%s: input processed %d times, want 1", vez, n)
		}
		if s := a.LinhaConselheiro(y).Status; s != elegibilidade.Disponivel {
			t.Errorf("%s: the other counsellor is %s, want disponivel", vez, s)
		}
		if s := a.LinhaConselheiro(x).Status; s != elegibilidade.Ocupado {
			t.Errorf("%s: the bus's counsellor is %s, want ocupado", vez, s)
		}
	}
	var saida bytes.Buffer
	if !reparo.New(a.Svc, nil).Reparar(a.Ctx, rel, &saida) {
		t.Fatalf("repair incomplete:\n%s", saida.String())
	}
	if !strings.Contains(saida.String(), "in place of the draw input seq=5 just made") {
		t.Errorf("the repair did not replace the handler's draw:\n%s", saida.String())
	}
	conferir("first repair")
	saida.Reset()
	if !reparo.New(a.Svc, nil).Reparar(a.Ctx, rel, &saida) {
		t.Fatalf("second repair incomplete:\n%s", saida.String())
	}
	conferir("second repair")
}

// The lost inputs committed in stream order (one durable), each lost draw
// with the input that made it, however late its round let it be
// published. Here an agenda item (seq 10) drew x for d1, published at 20; a
// refusal of y's d2 (seq 11) then found x busy and queued d2; x's cycle on
// d1 (seq 21) freed x, whose sweep drew d2, published at 22. Applied in
// the order of the results instead, the refusal would run before the
// agenda item, draw the free x for d2, and leave d1's draw a conflict
// (the failover scenario of internal/faults caught it so).
func TestRepararNaOrdemDoStream(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	uc := a.UC(uuid.Nil)
	y := a.Conselheiro(uc)
	d2 := uuid.New()
	p := atribuicaotest.Pedido(uc)
	p.DemandaID = d2
	p.Dados.CorrelacaoID = d2.String()
	if r := a.SortearComSucesso(p); r.ConselheiroID != y {
		t.Fatalf("d2 drawn to %s, want the only counsellor %s", r.ConselheiroID, y)
	}
	// The repair tells a unit's new results by their time: the draw above
	// is not one of them.
	a.Clk.Avancar(time.Second)
	reparoEm := a.Clk.Now()
	x := a.Conselheiro(uc)
	d1 := uuid.New()
	novo := func(tipo evento.Tipo, payload any) evento.Evento {
		return evento.Evento{Envelope: evento.Envelope{EventID: uuid.New(), Tipo: tipo, Origem: "D-5", VersaoSchema: "1.0.0"}, Payload: payload}
	}
	agenda := novo(evento.AgendaItemDisponivel, evento.AgendaItemDisponivelPayload{DemandaID: d1, UnidadeCivicaID: uc, CategoriaID: "SAU", NivelPrecedencia: 2, ScoreFinal: 50})
	recusa := novo(evento.AtribuicaoRecusada, evento.ConselheiroAtribuicaoRecusadaPayload{ConselheiroID: y, DemandaID: d2, UnidadeCivicaID: uc, Motivo: evento.RecusaExplicita})
	ciclo := novo(evento.CicloConcluido, evento.ConselheiroCicloConcluidoPayload{ConselheiroID: x, DemandaID: d1, MotivoEncerramento: "demanda_concluida", UnidadeCivicaID: &uc})
	p20, p22 := perdido(a, 20, x, d1, uc), perdido(a, 22, x, d2, uc)
	p20.EntradaSeq, p22.EntradaSeq = 10, 21
	rel := consistencia.Relatorio{
		SemOutbox: []consistencia.Resultado{p20.Resultado, p22.Resultado},
		Perdidos:  []consistencia.SorteadoPerdido{p20, p22},
		EntradasPerdidas: []consistencia.EntradaPerdida{
			{Seq: 10, Evento: agenda}, {Seq: 11, Evento: recusa}, {Seq: 21, Evento: ciclo},
		},
	}
	var saida bytes.Buffer
	if !reparo.New(a.Svc, nil).Reparar(a.Ctx, rel, &saida) {
		t.Fatalf("repair incomplete:\n%s", saida.String())
	}
	at20, err := atribuicaoDoSorteio(a, p20.EventID)
	if err != nil || at20.Status != atribuicao.AtribuicaoConcluida {
		t.Errorf("d1's draw: %+v, %v; want it concluded by x's cycle\n%s", at20, err, saida.String())
	}
	at22, err := atribuicaoDoSorteio(a, p22.EventID)
	if err != nil || at22.Status != atribuicao.AtribuicaoAtiva || at22.ConselheiroID != x {
		t.Errorf("d2's draw: %+v, %v; want x's, active\n%s", at22, err, saida.String())
	}
	if n := a.Contar(`SELECT count(*) FROM d6a.atribuicoes WHERE status = 'ativa'`); n != 1 {
		t.Errorf("%d active assignments, want only d2's\n%s", n, saida.String())
	}
	if n := a.Contar(`SELECT count(*) FROM d6a.outbox WHERE tipo = 'conselheiro.sorteado' AND publicado_em IS NULL AND criado_em >= $1`, reparoEm); n != 0 {
		t.Errorf("%d draws of the repair left to publish, want none (the bus holds both)\n%s", n, saida.String())
	}
}
