package colonia_test

// The worker issue's "Done means": a whole-type replay changes nothing, a bus
// outage loses no publication, and shutdown drains in time without losing or
// repeating work.

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/evento"
)

// TestReplayTipoInteiroNaoMudaNada: after a mixed run, rewinding every
// consumed type to sequence 1 redelivers everything, and nothing changes:
// no message on the bus, identical d6a tables.
func TestReplayTipoInteiroNaoMudaNada(t *testing.T) {
	t.Parallel()
	c := novaColonia(t, opcoes{})
	u1, u2 := c.novaUC(), c.novaUC()
	c.iniciar()
	a := c.novoConselheiro(u1)
	for range 2 {
		c.novoConselheiro(u1)
	}
	d1, x1 := c.novaDemanda(u1)
	d2, _ := c.novaDemanda(u1)
	d3, _ := c.novaDemanda(u2)
	d4, _ := c.novaDemanda(u2)
	c.processar(evento.AtribuicaoRecusada, "1.1.0", recusa(x1, d1, u1, "recusa_explicita"))
	c.processar(evento.AtribuicaoRecusada, "1.1.0", recusa(c.ativa(d1), d1, u1, "risco_pessoal"))
	c.processar(evento.CicloConcluido, "1.0.0", ciclo(c.ativa(d2), d2, u1))
	c.processar(evento.DuplicidadeAgregada, "1.0.0", map[string]any{
		"agregado_id": uuid.New(), "representante_demanda_id": d3,
		"membros":   []map[string]any{{"demanda_id": d3}, {"demanda_id": d4}},
		"mecanismo": "confirmacao_coletiva", "confirmacoes_gatilho": 3, "criterios": map[string]any{},
	})
	c.processar(evento.ElegibilidadeAtualizada, "1.0.0", map[string]any{"unidade_civica_id": uuid.New(), "versao_parametros": "2", "conselheiro_id": a})
	c.novoConselheiro(u2) // draws d3 from the queue
	must(t, c.ativa(d3) != uuid.Nil, "d3 not drawn by the registration sweep")
	h3drenar(c)

	antes := h3hashes(c)
	msgsAntes, lastAntes := h3stream(c)
	dlqAntes := len(c.dlq())

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, after, err := c.w.Bus.Replay(ctx, 1)
	must(t, err == nil, "replay: %v", err)
	t.Logf("replay: %s", after)
	h3drenar(c)
	time.Sleep(200 * time.Millisecond) // a few relay polls: nothing to publish

	msgsDepois, lastDepois := h3stream(c)
	must(t, msgsDepois == msgsAntes && lastDepois == lastAntes, "bus went from %d (last %d) to %d (last %d) messages", msgsAntes, lastAntes, msgsDepois, lastDepois)
	must(t, len(c.dlq()) == dlqAntes, "replay dead-lettered messages")
	depois := h3hashes(c)
	for _, tb := range h3tabelas {
		must(t, depois[tb] == antes[tb], "d6a.%s changed on replay: %s → %s", tb, antes[tb], depois[tb])
	}
}

// TestPublishOutageNaoPerdePublicacao: the bus goes down for ~2 s in the
// middle of a stream of events; every assignment ever made ends with exactly
// one conselheiro.sorteado under its event_id, and the outbox is empty.
func TestPublishOutageNaoPerdePublicacao(t *testing.T) {
	t.Parallel()
	c := novaColonia(t, opcoes{})
	bairro, cidade := uuid.New(), uuid.New()
	uc(c, cidade, uuid.Nil)
	uc(c, bairro, cidade)
	c.iniciar()
	var ids []uuid.UUID
	pub := func(tipo evento.Tipo, versao string, p any) {
		id, _ := c.publicar(tipo, versao, p)
		ids = append(ids, id)
	}
	for i := range 8 {
		u := bairro
		if i%2 == 1 {
			u = cidade
		}
		pub(evento.ConselheiroCadastrado, "1.1.0", cadastro(uuid.New(), u))
	}
	for range 20 {
		pub(evento.AgendaItemDisponivel, "1.0.0", agenda(uuid.New(), bairro))
	}

	// Outage while the worker is in the middle of those.
	c.eventually("some events applied", func() bool {
		return c.contar(`SELECT count(*) FROM d6a.eventos_processados WHERE tipo_evento NOT IN ('d6a.varredura', 'conselheiro.suspensao_expirada')`) >= 12
	})
	c.pararNATS()
	time.Sleep(2 * time.Second)
	retidos := c.contar(`SELECT count(*) FROM d6a.outbox WHERE publicado_em IS NULL`)
	c.reiniciarNATS()
	t.Cleanup(c.parar) // drain before the restarted server shuts down
	t.Logf("outbox rows held back by the outage: %d; events applied during it: %d", retidos, c.contar(`SELECT count(*) FROM d6a.eventos_processados WHERE tipo_evento NOT IN ('d6a.varredura', 'conselheiro.suspensao_expirada')`))
	c.eventually("test connection back", c.nc.IsConnected)
	// A message the server handed to a pull request that died with it is
	// delivered again only when its AckWait runs out: JetStream's rule,
	// not d6a's, so this wait outlasts it.
	volta := time.Now()
	h3esperarTodosEm(c, bus.AckWaitPadrao+20*time.Second, ids)
	t.Logf("every event processed %v after the bus came back", time.Since(volta).Round(time.Millisecond))

	// Keep going after it is back: release every busy counsellor (each
	// release draws from the queue), more demands, more counsellors.
	rows, err := c.pool.Query(t.Context(), `SELECT conselheiro_id, demanda_id FROM d6a.atribuicoes WHERE status = 'ativa'`)
	must(t, err == nil, "%v", err)
	var ativas [][2]uuid.UUID
	for rows.Next() {
		var p [2]uuid.UUID
		must(t, rows.Scan(&p[0], &p[1]) == nil, "scan")
		ativas = append(ativas, p)
	}
	rows.Close()
	for _, p := range ativas {
		pub(evento.CicloConcluido, "1.0.0", ciclo(p[0], p[1], bairro))
	}
	for range 10 {
		pub(evento.AgendaItemDisponivel, "1.0.0", agenda(uuid.New(), bairro))
	}
	for range 4 {
		pub(evento.ConselheiroCadastrado, "1.1.0", cadastro(uuid.New(), bairro))
	}
	h3esperarTodos(c, ids)
	c.esperarOutboxVazio()

	total := c.contar(`SELECT count(*) FROM d6a.atribuicoes`)
	must(t, total > len(ativas), "only %d assignments: the run did not draw after the outage", total)
	porID := h3porEventID(c, c.publicados(evento.ConselheiroSorteado))
	must(t, len(porID) == total, "%d distinct conselheiro.sorteado on the bus for %d assignments", len(porID), total)
	rows, err = c.pool.Query(t.Context(), `SELECT event_id_sorteio::text FROM d6a.atribuicoes`)
	must(t, err == nil, "%v", err)
	for rows.Next() {
		var ev string
		must(t, rows.Scan(&ev) == nil, "scan")
		must(t, porID[ev] == 1, "assignment %s has %d conselheiro.sorteado on the bus, want 1", ev, porID[ev])
	}
	rows.Close()
	sem := h3porEventID(c, c.publicados(evento.SorteioSemCandidatos))
	for ev, n := range sem {
		must(t, n == 1, "sorteio.sem_candidatos %s on the bus %d times", ev, n)
	}
	must(t, len(sem) == c.contar(`SELECT count(*) FROM d6a.outbox WHERE tipo = $1`, string(evento.SorteioSemCandidatos)), "sem_candidatos on the bus differ from the outbox")
	must(t, c.contar(`SELECT count(*) FROM d6a.outbox WHERE publicado_em IS NULL OR sequence IS NULL`) == 0, "outbox not empty")
	must(t, c.contar(`SELECT count(*) FROM d6a.eventos_processados WHERE tipo_evento NOT IN ('d6a.varredura', 'conselheiro.suspensao_expirada')`) == len(ids), "inbox %d, want %d", c.contar(`SELECT count(*) FROM d6a.eventos_processados WHERE tipo_evento NOT IN ('d6a.varredura', 'conselheiro.suspensao_expirada')`), len(ids))
	c.semDLQ()
}

// TestDrainNoShutdown: stopping with events in flight returns within 10 s,
// and after a restart every published event is processed exactly once.
func TestDrainNoShutdown(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	var ids, demandas []uuid.UUID
	for i := range 60 {
		var id uuid.UUID
		if i%6 == 0 {
			id, _ = c.publicar(evento.ConselheiroCadastrado, "1.1.0", cadastro(uuid.New(), bairro))
		} else {
			d := uuid.New()
			demandas = append(demandas, d)
			id, _ = c.publicar(evento.AgendaItemDisponivel, "1.0.0", agenda(d, bairro))
		}
		ids = append(ids, id)
	}
	// Let the worker get going, then stop it with most events still to come.
	c.eventually("some events applied", func() bool {
		return c.contar(`SELECT count(*) FROM d6a.eventos_processados WHERE tipo_evento NOT IN ('d6a.varredura', 'conselheiro.suspensao_expirada')`) >= 10
	})
	inicio := time.Now()
	c.parar()
	dur := time.Since(inicio)
	feitos := c.contar(`SELECT count(*) FROM d6a.eventos_processados WHERE tipo_evento NOT IN ('d6a.varredura', 'conselheiro.suspensao_expirada')`)
	t.Logf("shutdown took %v with %d of %d events applied", dur, feitos, len(ids))
	must(t, dur < 10*time.Second, "shutdown took %v, want < 10 s", dur)

	c.iniciar()
	h3esperarTodos(c, ids)
	h3drenar(c)

	must(t, c.contar(`SELECT count(*) FROM d6a.eventos_processados WHERE tipo_evento NOT IN ('d6a.varredura', 'conselheiro.suspensao_expirada')`) == len(ids), "inbox %d, want %d", c.contar(`SELECT count(*) FROM d6a.eventos_processados WHERE tipo_evento NOT IN ('d6a.varredura', 'conselheiro.suspensao_expirada')`), len(ids))
	for _, d := range demandas {
		n := c.contar(`SELECT count(*) FROM d6a.atribuicoes WHERE demanda_id = $1`, d)
		p := c.contar(`SELECT count(*) FROM d6a.fila_pendentes WHERE demanda_id = $1`, d)
		must(t, n+p == 1, "demand %s: %d assignments and %d pending rows, want exactly one of them", d, n, p)
	}
	porID := h3porEventID(c, c.publicados(evento.ConselheiroSorteado))
	total := c.contar(`SELECT count(*) FROM d6a.atribuicoes`)
	must(t, total == 10 && len(porID) == total, "%d assignments, %d distinct sorteado; want 10 and 10", total, len(porID))
	for ev, n := range porID {
		must(t, n == 1, "conselheiro.sorteado %s on the bus %d times", ev, n)
	}
	sem := c.publicados(evento.SorteioSemCandidatos)
	for _, d := range demandas {
		must(t, len(porDemanda(sem, d)) <= 1, "demand %s has several sem_candidatos", d)
	}
	must(t, c.contar(`SELECT count(*) FROM d6a.outbox WHERE publicado_em IS NULL`) == 0, "outbox not empty")
	c.semDLQ()
}
