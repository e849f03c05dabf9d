package colonia_test

// Spec 7.2 scenarios T19–T35, end to end: real PostgreSQL, real JetStream,
// the assembled colony. Each asserts the scenario's "Verificação" column on
// the database and on what reached the bus.

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/evento"
)

const h3noventaDias = 90 * 24 * time.Hour

// T19: five pending demands, a counsellor freed → the first (FIFO) is drawn,
// four remain.
func TestT19_FilaComCincoPendentesSorteiaAPrimeira(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	var demandas []uuid.UUID
	for range 5 {
		d, _ := c.novaDemanda(bairro)
		demandas = append(demandas, d)
	}
	must(t, c.contar(`SELECT count(*) FROM d6a.fila_pendentes`) == 5, "want 5 pending before the counsellor")

	a := c.novoConselheiro(bairro)

	must(t, c.ativa(demandas[0]) == a, "oldest demand assigned to %v, want %v", c.ativa(demandas[0]), a)
	must(t, h3tentativas(c, demandas[0]) == -1, "drawn demand still pending")
	for i, d := range demandas[1:] {
		must(t, c.ativa(d) == uuid.Nil, "demand %d got an assignment", i+1)
		must(t, h3tentativas(c, d) == 1, "demand %d: tentativas %d, want 1 (untouched)", i+1, h3tentativas(c, d))
	}
	must(t, c.contar(`SELECT count(*) FROM d6a.fila_pendentes`) == 4, "%d pending, want 4", c.contar(`SELECT count(*) FROM d6a.fila_pendentes`))
	must(t, c.statusConselheiro(a) == "ocupado", "status %s", c.statusConselheiro(a))
	pubs := c.publicados(evento.ConselheiroSorteado)
	must(t, len(pubs) == 1, "%d conselheiro.sorteado, want 1", len(pubs))
	must(t, payloadDe(pubs[0])["demanda_id"] == demandas[0].String(), "sorteado for %v", payloadDe(pubs[0])["demanda_id"])
	must(t, pubs[0]["event_id"] == h3eventoSorteio(c, a, demandas[0]), "event_id %v", pubs[0]["event_id"])
	must(t, len(c.publicados(evento.SorteioSemCandidatos)) == 5, "sem_candidatos %d, want 5 (one per demand)", len(c.publicados(evento.SorteioSemCandidatos)))
}

// T20: publishing conselheiro.sorteado fails (bus down): the state is
// persisted with the outbox row, and the event reaches the bus exactly once,
// under event_id_sorteio, once the bus is back.
func TestT20_PublicacaoDoSorteadoFalhaEstadoPersistido(t *testing.T) {
	t.Parallel()
	// The bus dies between the draw and its publication: the draw holds the
	// last base it knew (a real message of the stream), the publication
	// fails.
	base := &baseCongelada{}
	c := novaColonia(t, opcoes{base: base})
	bairro := c.novaUC()
	c.iniciar()
	a := c.novoConselheiro(bairro)
	base.congelar(t, c)

	c.pararNATS()
	demanda, corr := uuid.New(), uuid.NewString()
	r, err := c.w.Servico.Sortear(t.Context(), atribuicao.Pedido{UC: bairro, DemandaID: demanda, Dados: atribuicao.DadosDemanda{
		ScoreFinal: 50, CategoriaID: "SAUDE", NivelPrecedencia: 2, CorrelacaoID: corr, EventIDOrigem: uuid.New(),
	}})
	must(t, err == nil, "Sortear with the bus down: %v", err)
	must(t, r.Sucesso && r.ConselheiroID == a, "result %+v", r)

	// State persisted: assignment, occupied counsellor, audit, outbox row.
	must(t, c.ativa(demanda) == a, "active assignment %v", c.ativa(demanda))
	must(t, c.statusConselheiro(a) == "ocupado", "status %s", c.statusConselheiro(a))
	eventID := h3eventoSorteio(c, a, demanda)
	must(t, eventID == r.EventIDSorteio.String(), "event_id_sorteio %s, result %s", eventID, r.EventIDSorteio)
	must(t, c.contar(`SELECT count(*) FROM d6a.outbox WHERE event_id = $1 AND tipo = $2 AND publicado_em IS NULL`, eventID, string(evento.ConselheiroSorteado)) == 1,
		"no unpublished outbox row for the draw")
	must(t, c.contar(`SELECT count(*) FROM d6a.auditoria_sorteios WHERE event_id_sorteio = $1 AND NOT base_fallback AND base = $2 AND base_sequence = $3`, eventID, base.id, int64(base.seq)) == 1,
		"audit of the draw should record the last base known before the outage, never a fallback")

	c.reiniciarNATS()
	t.Cleanup(c.parar) // drain before the restarted server shuts down
	c.esperarOutboxVazio()
	// Once the row carries the stream sequence its ack gave, no relay pass
	// publishes it again: the count below is final, not a snapshot.
	c.eventually("the draw's outbox row marked with its stream sequence", func() bool {
		return c.contar(`SELECT count(*) FROM d6a.outbox WHERE event_id = $1 AND sequence IS NOT NULL`, eventID) == 1
	})
	pubs := c.publicados(evento.ConselheiroSorteado)
	must(t, len(pubs) == 1, "%d conselheiro.sorteado on the bus, want exactly 1", len(pubs))
	must(t, pubs[0]["event_id"] == eventID && pubs[0]["_h_Nats-Msg-Id"] == eventID, "event_id %v / Nats-Msg-Id %v, want %s", pubs[0]["event_id"], pubs[0]["_h_Nats-Msg-Id"], eventID)
	must(t, pubs[0]["correlacao_id"] == corr, "correlacao_id %v, want %s", pubs[0]["correlacao_id"], corr)
	p := payloadDe(pubs[0])
	must(t, p["conselheiro_id"] == a.String() && p["demanda_id"] == demanda.String() && p["seed_publico"] == r.Seed, "payload %v", p)
	c.semDLQ()
}

// T21: publishing sorteio.sem_candidatos fails: the pending row is persisted;
// a retry of the same draw (same correlacao_id) counts one more attempt but
// queues no second event; exactly one reaches the bus.
func TestT21_PublicacaoDoSemCandidatosFalhaGuardaPorCorrelacao(t *testing.T) {
	t.Parallel()
	c, vazio := coloniaNoBairro(t)

	c.pararNATS()
	demanda, corr := uuid.New(), uuid.NewString()
	pedido := atribuicao.Pedido{UC: vazio, DemandaID: demanda, Dados: atribuicao.DadosDemanda{
		ScoreFinal: 12.5, CategoriaID: "OBRAS", NivelPrecedencia: 3, CorrelacaoID: corr, EventIDOrigem: uuid.New(),
	}}
	r, err := c.w.Servico.Sortear(t.Context(), pedido)
	must(t, err == nil && !r.Sucesso && r.Motivo == "nenhum_cadastrado", "first draw: %+v, %v", r, err)
	must(t, h3tentativas(c, demanda) == 1, "tentativas %d after the first failed draw, want 1", h3tentativas(c, demanda))
	semPendentes := `SELECT count(*) FROM d6a.outbox WHERE tipo = $1 AND correlacao_id = $2`
	must(t, c.contar(semPendentes+` AND publicado_em IS NULL`, string(evento.SorteioSemCandidatos), corr) == 1, "no unpublished sem_candidatos in the outbox")

	// The retry of the same draw.
	r, err = c.w.Servico.Sortear(t.Context(), pedido)
	must(t, err == nil && !r.Sucesso, "second draw: %+v, %v", r, err)
	must(t, h3tentativas(c, demanda) == 2, "tentativas %d after the retry, want 2", h3tentativas(c, demanda))
	must(t, c.contar(semPendentes, string(evento.SorteioSemCandidatos), corr) == 1, "the retry queued a second sorteio.sem_candidatos")

	c.reiniciarNATS()
	t.Cleanup(c.parar)
	c.esperarOutboxVazio()
	c.eventually("the sem_candidatos row marked with its stream sequence", func() bool {
		return c.contar(semPendentes+` AND sequence IS NOT NULL`, string(evento.SorteioSemCandidatos), corr) == 1
	})
	pubs := c.publicados(evento.SorteioSemCandidatos)
	must(t, len(pubs) == 1, "%d sorteio.sem_candidatos on the bus, want exactly 1", len(pubs))
	must(t, pubs[0]["correlacao_id"] == corr, "correlacao_id %v", pubs[0]["correlacao_id"])
	p := payloadDe(pubs[0])
	must(t, p["demanda_id"] == demanda.String() && p["motivo"] == "nenhum_cadastrado" && p["total_elegiveis"] == float64(0), "payload %v", p)
	must(t, c.contar(`SELECT count(*) FROM d6a.fila_pendentes WHERE demanda_id = $1`, demanda) == 1, "pending row lost")
}

// T22: full cycle with 3 demands and 2 counsellors.
func TestT22_CicloCompletoTresDemandasDoisConselheiros(t *testing.T) {
	t.Parallel()
	c, bairro, a, b := coloniaComDupla(t)
	d1, s1 := c.novaDemanda(bairro)
	d2, s2 := c.novaDemanda(bairro)
	d3, _ := c.novaDemanda(bairro)

	must(t, (s1 == a && s2 == b) || (s1 == b && s2 == a), "assignments d1→%v d2→%v, want the two counsellors", s1, s2)
	must(t, c.ativa(d3) == uuid.Nil && h3tentativas(c, d3) == 1, "third demand should be pending")
	must(t, c.statusConselheiro(a) == "ocupado" && c.statusConselheiro(b) == "ocupado", "statuses %s %s", c.statusConselheiro(a), c.statusConselheiro(b))
	must(t, c.contar(`SELECT count(*) FROM d6a.atribuicoes WHERE status = 'ativa'`) == 2, "want 2 active assignments")
	sort := c.publicados(evento.ConselheiroSorteado)
	must(t, len(sort) == 2, "%d conselheiro.sorteado, want 2", len(sort))
	ids := h3porEventID(c, sort)
	for _, par := range [][2]uuid.UUID{{s1, d1}, {s2, d2}} {
		must(t, ids[h3eventoSorteio(c, par[0], par[1])] == 1, "assignment %v without its conselheiro.sorteado", par)
	}
	sem := c.publicados(evento.SorteioSemCandidatos)
	must(t, len(sem) == 1, "%d sorteio.sem_candidatos, want 1", len(sem))
	must(t, payloadDe(sem[0])["demanda_id"] == d3.String() && payloadDe(sem[0])["motivo"] == "todos_ocupados", "sem_candidatos %v", payloadDe(sem[0]))
}

// T23: refusal → re-draw → accepted → cycle concluded → the refuser is drawn
// for a new demand.
func TestT23_RecusaResorteioCicloNovoSorteio(t *testing.T) {
	t.Parallel()
	c, bairro, a, b := coloniaComDupla(t)
	d1, x := c.novaDemanda(bairro)
	y := outro(x, a, b)
	must(t, x == a || x == b, "d1 assigned to %v", x)

	recusaID := c.processar(evento.AtribuicaoRecusada, "1.1.0", recusa(x, d1, bairro, "recusa_explicita"))
	must(t, c.statusAtribuicao(x, d1) == "recusada", "first assignment %s, want recusada", c.statusAtribuicao(x, d1))
	must(t, h3linha(c, `SELECT event_id_encerramento::text FROM d6a.atribuicoes WHERE conselheiro_id = $1 AND demanda_id = $2`, x, d1) == recusaID.String(), "event_id_encerramento")
	must(t, c.contar(`SELECT count(*) FROM d6a.contador_recusas WHERE conselheiro_id = $1 AND recusas_consecutivas = 1 AND evento_id_recusa = $2`, x, recusaID) == 1, "contador should be 1")
	must(t, c.contar(`SELECT count(*) FROM d6a.contador_recusas`) == 1, "want one contador row")
	must(t, c.ativa(d1) == y, "re-draw gave d1 to %v, want the other counsellor %v", c.ativa(d1), y)
	must(t, c.statusConselheiro(x) == "disponivel", "refuser %s, want disponivel", c.statusConselheiro(x))

	c.processar(evento.CicloConcluido, "1.0.0", ciclo(y, d1, bairro))
	must(t, c.statusAtribuicao(y, d1) == "concluida", "second assignment %s, want concluida", c.statusAtribuicao(y, d1))
	must(t, c.statusConselheiro(y) == "disponivel", "y %s after the cycle", c.statusConselheiro(y))

	d2, s2 := c.novaDemanda(bairro)
	must(t, h3linha(c, `SELECT total_elegiveis::text FROM d6a.atribuicoes WHERE demanda_id = $1`, d2) == "2", "both counsellors should be eligible for d2")
	_, s3 := c.novaDemanda(bairro)
	must(t, s2 == x || s3 == x, "the refuser was not drawn for a new demand (d2→%v, d3→%v)", s2, s3)
	must(t, c.statusConselheiro(x) == "ocupado", "x %s", c.statusConselheiro(x))
	must(t, len(c.publicados(evento.ConselheiroSorteado)) == 4, "%d sorteado, want 4", len(c.publicados(evento.ConselheiroSorteado)))
	c.semDLQ()
}

// T24: the fourth consecutive refusal suspends (limit 3, strict >) for 90
// days from the service clock.
func TestT24_QuartaRecusaConsecutivaSuspende(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	x := c.novoConselheiro(bairro)
	for i := 1; i <= 4; i++ {
		d, sorteado := c.novaDemanda(bairro)
		must(t, sorteado == x, "round %d: demand assigned to %v", i, sorteado)
		antes := c.agora()
		rid := c.processar(evento.AtribuicaoRecusada, "1.1.0", recusa(x, d, bairro, "recusa_explicita"))
		depois := c.agora()
		n := c.contar(`SELECT recusas_consecutivas FROM d6a.contador_recusas WHERE evento_id_recusa = $1`, rid)
		must(t, n == i, "round %d: recusas_consecutivas %d", i, n)
		must(t, c.statusAtribuicao(x, d) == "recusada", "round %d: assignment %s", i, c.statusAtribuicao(x, d))
		var ate *time.Time
		if err := c.pool.QueryRow(t.Context(), `SELECT data_suspensao_ate FROM d6a.conselheiros WHERE id = $1`, x).Scan(&ate); err != nil {
			t.Fatal(err)
		}
		if i < 4 {
			must(t, c.statusConselheiro(x) == "disponivel" && ate == nil, "round %d: status %s, suspensão %v — no suspension before the fourth", i, c.statusConselheiro(x), ate)
			continue
		}
		must(t, c.statusConselheiro(x) == "suspenso", "fourth refusal: status %s, want suspenso", c.statusConselheiro(x))
		must(t, ate != nil, "data_suspensao_ate not set")
		lo, hi := antes.Add(h3noventaDias-10*time.Millisecond), depois.Add(h3noventaDias+10*time.Millisecond)
		must(t, !ate.Before(lo) && !ate.After(hi), "data_suspensao_ate %v, want clock + 90 days in [%v, %v]", ate, lo, hi)
	}
	// Suspended, so a new demand finds nobody eligible (spec 4.10).
	d, _ := c.novaDemanda(bairro)
	sem := porDemanda(c.publicados(evento.SorteioSemCandidatos), d)
	must(t, len(sem) == 1 && payloadDe(sem[0])["motivo"] == "todos_inativos", "sem_candidatos for the new demand: %v", sem)
}

// T25: replay after a restart — 10 events, 6 already processed: the 4 new are
// processed, the 6 old ignored; the boot repairs occupied counsellors without
// an assignment, draws the pending queue and reactivates expired suspensions.
func TestT25_ReplayAposReinicio(t *testing.T) {
	t.Parallel()
	c := novaColonia(t, opcoes{})
	u1, u2, u3, u4, u5 := c.novaUC(), c.novaUC(), c.novaUC(), c.novaUC(), c.novaUC()
	c.iniciar()
	a, b, cc, r := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	d1, d2 := uuid.New(), uuid.New()
	var ids []uuid.UUID
	ids = append(ids, c.processar(evento.ConselheiroCadastrado, "1.1.0", cadastro(a, u1)))
	ids = append(ids, c.processar(evento.ConselheiroCadastrado, "1.1.0", cadastro(b, u1)))
	ids = append(ids, c.processar(evento.ConselheiroCadastrado, "1.1.0", cadastro(cc, u2)))
	ids = append(ids, c.processar(evento.ConselheiroCadastrado, "1.1.0", cadastro(r, u3)))
	ids = append(ids, c.processar(evento.AgendaItemDisponivel, "1.0.0", agenda(d1, u1)))
	// cc occupied without an assignment (a crash between two writes, spec
	// 4.8): d2 finds nobody and waits.
	c.exec(`UPDATE d6a.conselheiros SET status = 'ocupado' WHERE id = $1`, cc)
	ids = append(ids, c.processar(evento.AgendaItemDisponivel, "1.0.0", agenda(d2, u2)))
	must(t, h3tentativas(c, d2) == 1, "d2 should be pending")
	x := c.ativa(d1)
	perdedor := outro(x, a, b)
	c.parar()

	d1Antes := h3linha(c, `SELECT t::text FROM d6a.atribuicoes t WHERE demanda_id = $1`, d1)
	msgsAntes, _ := h3stream(c)
	sortAntes, semAntes := len(c.publicados(evento.ConselheiroSorteado)), len(c.publicados(evento.SorteioSemCandidatos))
	must(t, sortAntes == 1 && semAntes == 1, "before the restart: %d sorteado, %d sem_candidatos", sortAntes, semAntes)

	// While down: r occupied without an assignment, the loser of d1
	// suspended with a date already past.
	c.exec(`UPDATE d6a.conselheiros SET status = 'ocupado' WHERE id = $1`, r)
	c.suspender(perdedor, c.agora().Add(-time.Hour))
	eventoR := h3linha(c, `SELECT event_id_ultima_alteracao::text FROM d6a.conselheiros WHERE id = $1`, r)
	eventoPerdedor := h3linha(c, `SELECT event_id_ultima_alteracao::text FROM d6a.conselheiros WHERE id = $1`, perdedor)

	// Four more events while the worker is down.
	d3, e := uuid.New(), uuid.New()
	novo := func(tipo evento.Tipo, versao string, p any) {
		id, _ := c.publicar(tipo, versao, p)
		ids = append(ids, id)
	}
	novo(evento.AgendaItemDisponivel, "1.0.0", agenda(d3, u4))
	novo(evento.ConselheiroCadastrado, "1.1.0", cadastro(e, u5))
	novo(evento.ElegibilidadeAtualizada, "1.0.0", map[string]any{"unidade_civica_id": uuid.New(), "versao_parametros": "2", "conselheiro_id": a})
	novo(evento.DuplicidadeAgregada, "1.0.0", map[string]any{
		"agregado_id": uuid.New(), "representante_demanda_id": uuid.New(), "membros": []map[string]any{{"demanda_id": uuid.New()}},
		"mecanismo": "confirmacao_coletiva", "confirmacoes_gatilho": 3, "criterios": map[string]any{},
	})
	// Rewind every consumer to the start of the bus: all 10 come again.
	h3replayTodos(c)

	c.iniciar()
	h3esperarTodos(c, ids)
	h3drenar(c)

	must(t, c.contar(`SELECT count(*) FROM d6a.eventos_processados WHERE tipo_evento NOT IN ('d6a.varredura', 'conselheiro.suspensao_expirada')`) == 10, "inbox %d, want 10", c.contar(`SELECT count(*) FROM d6a.eventos_processados WHERE tipo_evento NOT IN ('d6a.varredura', 'conselheiro.suspensao_expirada')`))
	// The 6 old ones changed nothing.
	must(t, h3linha(c, `SELECT t::text FROM d6a.atribuicoes t WHERE demanda_id = $1`, d1) == d1Antes, "d1's assignment changed on replay")
	for tb, n := range map[string]int{"conselheiros": 5, "atribuicoes": 2, "auditoria_sorteios": 2, "fila_pendentes": 1, "contador_recusas": 0, "outbox": 5} {
		q := `SELECT count(*) FROM d6a.` + tb
		if tb == "outbox" {
			q += ` WHERE tipo <> 'd6a.varredura'` // the boot's own sweep triggers
		}
		got := c.contar(q)
		must(t, got == n, "d6a.%s has %d rows, want %d", tb, got, n)
	}
	// Boot: consistency repair, the pending queue, the expired suspension.
	must(t, c.statusConselheiro(r) == "disponivel", "r %s, want repaired to disponivel", c.statusConselheiro(r))
	must(t, h3linha(c, `SELECT event_id_ultima_alteracao::text FROM d6a.conselheiros WHERE id = $1`, r) != eventoR, "repair kept the old event_id_ultima_alteracao")
	must(t, c.statusConselheiro(perdedor) == "disponivel", "expired suspension not reactivated: %s", c.statusConselheiro(perdedor))
	must(t, h3linha(c, `SELECT event_id_ultima_alteracao::text FROM d6a.conselheiros WHERE id = $1`, perdedor) != eventoPerdedor, "reactivation kept the old event_id_ultima_alteracao")
	must(t, c.ativa(d2) == cc && h3tentativas(c, d2) == -1, "pending d2 not drawn at boot (assigned to %v)", c.ativa(d2))
	must(t, c.statusConselheiro(cc) == "ocupado", "cc %s", c.statusConselheiro(cc))
	// The 4 new ones.
	must(t, h3tentativas(c, d3) == 1, "d3 should be pending")
	must(t, c.statusConselheiro(e) == "disponivel", "e %s", c.statusConselheiro(e))
	// The bus: only what the 4 new events and the boot draw published.
	sort, sem := c.publicados(evento.ConselheiroSorteado), c.publicados(evento.SorteioSemCandidatos)
	must(t, len(sort) == 2 && len(porDemanda(sort, d2)) == 1, "%d sorteado (want d1 and d2)", len(sort))
	must(t, len(sem) == 2 && len(porDemanda(sem, d3)) == 1, "%d sem_candidatos (want d2 and d3)", len(sem))
	// The boot's reactivation announces the end of the suspension (issue 13).
	exp := c.publicados(evento.SuspensaoExpirada)
	must(t, len(exp) == 1 && payloadDe(exp[0])["conselheiro_id"] == perdedor.String(), "suspensao_expirada %v", exp)
	msgsDepois, _ := h3stream(c)
	varreduras := c.lerStream(c.cfg.Stream, evento.Varredura.Subject(c.cfg.SubjectPrefix))
	must(t, len(varreduras) == 1 && payloadDe(varreduras[0])["demanda_id"] == d2.String(), "boot sweep triggers %v, want one for d2", varreduras)
	must(t, msgsDepois == msgsAntes+4+3+1, "bus grew by %d messages, want 8 (4 inputs, 3 outputs, the boot sweep's trigger)", msgsDepois-msgsAntes)
	c.semDLQ()
}

// T26: registration with a pending queue → sweep → draw → the demand leaves
// the queue.
func TestT26_CadastroComFilaSorteiaERemove(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	d, _ := c.novaDemanda(bairro)
	must(t, h3tentativas(c, d) == 1, "demand not pending")
	a := c.novoConselheiro(bairro)
	must(t, c.ativa(d) == a, "assignment %v, want %v", c.ativa(d), a)
	must(t, c.contar(`SELECT count(*) FROM d6a.fila_pendentes`) == 0, "queue not empty")
	must(t, c.statusConselheiro(a) == "ocupado", "status %s", c.statusConselheiro(a))
	pubs := c.publicados(evento.ConselheiroSorteado)
	must(t, len(pubs) == 1 && pubs[0]["event_id"] == h3eventoSorteio(c, a, d), "sorteado %v", pubs)
	must(t, pubs[0]["correlacao_id"] == d.String(), "correlacao_id %v", pubs[0]["correlacao_id"])
}

// T27: the filter excludes a counsellor holding an active assignment even
// when his status reads disponivel.
func TestT27_FiltroExcluiQuemTemAtribuicaoAtiva(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	for range 3 {
		c.novoConselheiro(bairro)
	}
	_, x := c.novaDemanda(bairro)
	must(t, x != uuid.Nil, "d1 not drawn")
	// Three counsellors disponivel, one of them with an active assignment.
	c.exec(`UPDATE d6a.conselheiros SET status = 'disponivel' WHERE id = $1`, x)

	d2, y := c.novaDemanda(bairro)
	must(t, y != uuid.Nil && y != x, "d2 assigned to %v (the busy one is %v)", y, x)
	ev := h3eventoSorteio(c, y, d2)
	p := payloadDe(porDemanda(c.publicados(evento.ConselheiroSorteado), d2)[0])
	must(t, p["total_elegiveis"] == float64(2), "published total_elegiveis %v, want 2", p["total_elegiveis"])
	must(t, h3linha(c, `SELECT total_elegiveis::text FROM d6a.atribuicoes WHERE event_id_sorteio = $1`, ev) == "2", "assignment total_elegiveis")
	must(t, c.contar(`SELECT count(*) FROM d6a.auditoria_sorteios WHERE event_id_sorteio = $1 AND cardinality(elegiveis_entrada) = 2 AND NOT ($2::text = ANY (elegiveis_entrada))`, ev, x.String()) == 1,
		"audit input list should hold the 2 free counsellors only")
}

// T28: agenda.item_disponível redelivered after a successful draw → no new
// event, one assignment.
func TestT28_AgendaReentregueAposSorteio(t *testing.T) {
	t.Parallel()
	c, bairro, _, _ := coloniaComDupla(t)
	d := uuid.New()
	id, subject, data := h3envelope(c, evento.AgendaItemDisponivel, "1.0.0", agenda(d, bairro))
	c.publicarBytes(subject, id.String(), data)
	c.esperarProcessado(id)
	x := c.ativa(d)
	must(t, x != uuid.Nil, "not drawn")

	// The same bytes under another message id: JetStream stores it again.
	c.publicarBytes(subject, uuid.NewString(), data)
	h3drenar(c)
	// And D-5 republishing the demand under a new event_id.
	c.processar(evento.AgendaItemDisponivel, "1.0.0", agenda(d, bairro))
	h3drenar(c)

	must(t, c.contar(`SELECT count(*) FROM d6a.atribuicoes WHERE demanda_id = $1`, d) == 1, "want exactly one assignment")
	must(t, c.ativa(d) == x, "assignment moved to %v", c.ativa(d))
	must(t, len(c.publicados(evento.ConselheiroSorteado)) == 1, "%d sorteado, want 1", len(c.publicados(evento.ConselheiroSorteado)))
	must(t, len(c.publicados(evento.SorteioSemCandidatos)) == 0, "sem_candidatos published")
	must(t, h3tentativas(c, d) == -1, "assigned demand entered the queue")
	c.semDLQ()
}

// T29: a refusal for risco_pessoal closes the assignment and re-draws, with
// no contador row and no suspension; the refuser is disponivel again.
func TestT29_RecusaRiscoPessoalSemContador(t *testing.T) {
	t.Parallel()
	c, bairro, a, b := coloniaComDupla(t)
	d, x := c.novaDemanda(bairro)
	y := outro(x, a, b)

	rid := c.processar(evento.AtribuicaoRecusada, "1.1.0", recusa(x, d, bairro, "risco_pessoal"))
	must(t, c.statusAtribuicao(x, d) == "recusada", "assignment %s", c.statusAtribuicao(x, d))
	must(t, c.ativa(d) == y, "re-draw gave d to %v, want %v", c.ativa(d), y)
	must(t, c.contar(`SELECT count(*) FROM d6a.contador_recusas`) == 0, "contador_recusas has rows after a risco_pessoal refusal")
	must(t, c.statusConselheiro(x) == "disponivel", "refuser %s, want disponivel", c.statusConselheiro(x))
	must(t, c.contar(`SELECT count(*) FROM d6a.conselheiros WHERE id = $1 AND data_suspensao_ate IS NULL`, x) == 1, "refuser has a suspension date")
	sort := porDemanda(c.publicados(evento.ConselheiroSorteado), d)
	must(t, len(sort) == 2, "%d sorteado for d, want 2", len(sort))
	p := payloadDe(sort[1])
	must(t, p["conselheiro_id"] == y.String() && p["total_elegiveis"] == float64(1), "re-draw payload %v", p)
	must(t, sort[1]["correlacao_id"] == d.String(), "re-draw correlacao_id %v", sort[1]["correlacao_id"])
	must(t, c.contar(`SELECT count(*) FROM d6a.auditoria_sorteios WHERE event_id_sorteio = $1 AND excluido = $2`, h3eventoSorteio(c, y, d), x) == 1, "audit of the re-draw should name the excluded refuser")
	_ = rid
}

// T30: a refusal redelivered (same envelope, another message id) is ignored:
// one contador row, no second re-draw.
func TestT30_RecusaReentregueIgnorada(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	for range 3 {
		c.novoConselheiro(bairro)
	}
	d, x := c.novaDemanda(bairro)
	id, subject, data := h3envelope(c, evento.AtribuicaoRecusada, "1.1.0", recusa(x, d, bairro, "recusa_explicita"))
	c.publicarBytes(subject, id.String(), data)
	c.esperarProcessado(id)
	y := c.ativa(d)
	must(t, y != uuid.Nil && y != x, "re-draw gave d to %v", y)
	evY := h3eventoSorteio(c, y, d)
	antes := h3hashes(c)

	c.publicarBytes(subject, uuid.NewString(), data)
	h3drenar(c)

	must(t, c.contar(`SELECT count(*) FROM d6a.contador_recusas WHERE conselheiro_id = $1`, x) == 1, "want one contador row")
	must(t, c.contar(`SELECT count(*) FROM d6a.atribuicoes WHERE demanda_id = $1`, d) == 2, "a second re-draw happened")
	must(t, c.ativa(d) == y && h3eventoSorteio(c, y, d) == evY, "active assignment changed")
	must(t, len(porDemanda(c.publicados(evento.ConselheiroSorteado), d)) == 2, "sorteado for d: want 2 (draw and one re-draw)")
	depois := h3hashes(c)
	for tb, h := range antes {
		must(t, depois[tb] == h, "d6a.%s changed on the redelivery", tb)
	}
	c.semDLQ()
}

// T31: a refusal releases the occupied refuser, who enters the filter again;
// a suspended refuser is not released.
func TestT31_RecusaLiberaRecusanteSuspensoNao(t *testing.T) {
	t.Parallel()
	c := novaColonia(t, opcoes{})
	u1, u2 := c.novaUC(), c.novaUC()
	c.iniciar()
	a, b := c.novoConselheiro(u1), c.novoConselheiro(u1)
	p, q := c.novoConselheiro(u2), c.novoConselheiro(u2)

	// Released and eligible again.
	d1, x := c.novaDemanda(u1)
	must(t, c.statusConselheiro(x) == "ocupado", "x %s", c.statusConselheiro(x))
	c.processar(evento.AtribuicaoRecusada, "1.1.0", recusa(x, d1, u1, "fora_do_territorio"))
	must(t, c.statusConselheiro(x) == "disponivel", "refuser %s, want disponivel", c.statusConselheiro(x))
	must(t, c.ativa(d1) == outro(x, a, b), "d1 re-drawn to %v", c.ativa(d1))
	d2, s2 := c.novaDemanda(u1)
	must(t, s2 == x, "d2 assigned to %v, want the released refuser %v", s2, x)
	must(t, h3linha(c, `SELECT total_elegiveis::text FROM d6a.atribuicoes WHERE demanda_id = $1`, d2) == "1", "d2 eligible count")

	// Suspended (with a future date) while still holding the assignment.
	d3, z := c.novaDemanda(u2)
	ate := c.agora().Add(30 * 24 * time.Hour).Truncate(10 * time.Millisecond)
	c.suspender(z, ate)
	c.processar(evento.AtribuicaoRecusada, "1.1.0", recusa(z, d3, u2, "recusa_explicita"))
	must(t, c.statusAtribuicao(z, d3) == "recusada", "assignment %s", c.statusAtribuicao(z, d3))
	must(t, c.statusConselheiro(z) == "suspenso", "suspended refuser became %s", c.statusConselheiro(z))
	var depois time.Time
	if err := c.pool.QueryRow(t.Context(), `SELECT data_suspensao_ate FROM d6a.conselheiros WHERE id = $1`, z).Scan(&depois); err != nil {
		t.Fatal(err)
	}
	must(t, depois.Equal(ate), "data_suspensao_ate moved from %v to %v", ate, depois)
	must(t, c.ativa(d3) == outro(z, p, q), "d3 re-drawn to %v", c.ativa(d3))
}

// T32: duplicidade.agregada removes every member from the queue; the
// representative stays.
func TestT32_DuplicidadeAgregadaRemoveMembros(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	rep, m1, m2, outra := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	for _, d := range []uuid.UUID{rep, m1, m2, outra} {
		c.processar(evento.AgendaItemDisponivel, "1.0.0", agenda(d, bairro))
	}
	foraDaFila := uuid.New()
	c.processar(evento.DuplicidadeAgregada, "1.0.0", map[string]any{
		"agregado_id": uuid.New(), "representante_demanda_id": rep,
		"membros":   []map[string]any{{"demanda_id": rep}, {"demanda_id": m1}, {"demanda_id": m2}, {"demanda_id": foraDaFila}},
		"mecanismo": "confirmacao_coletiva", "confirmacoes_gatilho": 3, "criterios": map[string]any{},
	})
	must(t, h3tentativas(c, rep) == 1, "representative left the queue")
	must(t, h3tentativas(c, outra) == 1, "unrelated demand left the queue")
	must(t, h3tentativas(c, m1) == -1 && h3tentativas(c, m2) == -1, "members still pending")
	must(t, c.contar(`SELECT count(*) FROM d6a.fila_pendentes`) == 2, "%d pending, want 2", c.contar(`SELECT count(*) FROM d6a.fila_pendentes`))
	c.semDLQ()

	// The members are not drawn when a counsellor arrives: the
	// representative (oldest) is.
	a := c.novoConselheiro(bairro)
	must(t, c.ativa(rep) == a, "representative not drawn (%v)", c.ativa(rep))
}

// T33: a suspension past its date is lifted at boot with a new
// event_id_ultima_alteracao.
func TestT33_SuspensoVencidoReativadoNoBoot(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	s := uuid.New()
	cadID := c.processar(evento.ConselheiroCadastrado, "1.1.0", cadastro(s, bairro))
	c.parar()

	c.suspender(s, c.agora().Add(time.Hour))
	antes := h3linha(c, `SELECT event_id_ultima_alteracao::text FROM d6a.conselheiros WHERE id = $1`, s)
	c.clock.Avancar(2 * time.Hour)

	c.iniciar()
	must(t, c.statusConselheiro(s) == "disponivel", "status %s after boot, want disponivel", c.statusConselheiro(s))
	depois := h3linha(c, `SELECT event_id_ultima_alteracao::text FROM d6a.conselheiros WHERE id = $1`, s)
	novo, err := uuid.Parse(depois)
	must(t, err == nil && novo != uuid.Nil, "event_id_ultima_alteracao %q", depois)
	must(t, depois != antes && depois != cadID.String(), "event_id_ultima_alteracao not renewed (%s)", depois)

	// A suspension still in force is left alone by the boot.
	f := c.novoConselheiro(bairro)
	c.parar()
	c.suspender(f, c.agora().Add(24*time.Hour))
	c.iniciar()
	must(t, c.statusConselheiro(f) == "suspenso", "suspension in force lifted at boot: %s", c.statusConselheiro(f))
}

// T34: a re-draw after a refusal that finds nobody queues the demand with the
// refused assignment's data, not placeholders.
func TestT34_ResorteioSemElegiveisGuardaSnapshot(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	x := c.novoConselheiro(bairro)
	d, grupo := uuid.New(), uuid.New()
	p := agenda(d, bairro)
	p["score_final"], p["categoria_id"], p["nivel_precedencia"], p["grupo_id"] = 42.37, "EDUCACAO", 4, grupo
	c.processar(evento.AgendaItemDisponivel, "1.0.0", p)
	must(t, c.ativa(d) == x, "not drawn")

	rid := c.processar(evento.AtribuicaoRecusada, "1.1.0", recusa(x, d, bairro, "recusa_explicita"))
	var (
		score  float64
		cat    string
		nivel  int
		g      *uuid.UUID
		origem uuid.UUID
		tent   int
	)
	err := c.pool.QueryRow(t.Context(), `SELECT score_final::float8, categoria_id, nivel_precedencia, grupo_id, event_id_origem, tentativas_sorteio
		FROM d6a.fila_pendentes WHERE demanda_id = $1`, d).Scan(&score, &cat, &nivel, &g, &origem, &tent)
	must(t, err == nil, "demand not queued after the failed re-draw: %v", err)
	must(t, math.Abs(score-42.37) < 1e-9, "score_final %v, want 42.37", score)
	must(t, cat == "EDUCACAO" && nivel == 4, "categoria %q nivel %d", cat, nivel)
	must(t, g != nil && *g == grupo, "grupo_id %v, want %v", g, grupo)
	must(t, origem == rid && tent == 1, "event_id_origem %v (want the refusal %v), tentativas %d", origem, rid, tent)
	sem := porDemanda(c.publicados(evento.SorteioSemCandidatos), d)
	must(t, len(sem) == 1, "%d sem_candidatos for d, want 1", len(sem))
	must(t, c.statusAtribuicao(x, d) == "recusada", "assignment %s", c.statusAtribuicao(x, d))
}

// T35: a pending demand's draw failing on a release sweep (registration,
// cycle, refusal) counts one attempt each time, never two.
func TestT35_FalhaDoPendenteNaVarreduraIncrementaUmaVez(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	d, _ := c.novaDemanda(bairro)
	must(t, h3tentativas(c, d) == 1, "tentativas %d after the first draw, want 1", h3tentativas(c, d))

	// Registration of an untrained counsellor: the sweep's draw fails.
	sem := cadastro(uuid.New(), bairro)
	sem["capacitacao_concluida"] = false
	c.processar(evento.ConselheiroCadastrado, "1.1.0", sem)
	must(t, h3tentativas(c, d) == 2, "after the registration sweep: tentativas %d, want 2", h3tentativas(c, d))

	// Cycle of an unknown counsellor: sweep of the payload's unit.
	c.processar(evento.CicloConcluido, "1.0.0", ciclo(uuid.New(), uuid.New(), bairro))
	must(t, h3tentativas(c, d) == 3, "after the cycle sweep: tentativas %d, want 3", h3tentativas(c, d))

	// Refusal without a matching active assignment: sweep of the payload's unit.
	c.processar(evento.AtribuicaoRecusada, "1.1.0", recusa(uuid.New(), uuid.New(), bairro, "recusa_explicita"))
	must(t, h3tentativas(c, d) == 4, "after the refusal sweep: tentativas %d, want 4", h3tentativas(c, d))
	must(t, c.ativa(d) == uuid.Nil, "drawn?")
	c.semDLQ()
}

// baseCongelada is the seed's base frozen at the stream's last message.
type baseCongelada struct {
	id  string
	seq uint64
}

func (b *baseCongelada) congelar(t *testing.T, c *harness) {
	t.Helper()
	id, seq, err := c.w.Bus.LastEventID(t.Context())
	must(t, err == nil, "last event of the bus: %v", err)
	b.id, b.seq = id, seq
}

func (b *baseCongelada) LastEventID(context.Context) (string, uint64, error) {
	if b.id == "" {
		return "", 0, errors.New("base ainda não congelada")
	}
	return b.id, b.seq, nil
}
