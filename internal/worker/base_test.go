package worker_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/evento"
)

// CONTRACT §4, issue 11: the seed's base comes from bus.Base, which knows the
// stream's messages, never from d6a. A bus that stops in the middle of a burst (the
// single-node stand-in for a leader election) makes draws wait: every draw
// of the burst happens once, none on a fallback base, and every base is a
// message of the stream below its own result.
func TestBaseSemFallbackComBarramentoParado(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	const n = 60
	c.exec(`INSERT INTO d6a.conselheiros (id, cidadao_id, unidade_civica_id, nivel_atuacao, status, capacitacao_concluida, data_cadastro, event_id_cadastro, event_id_ultima_alteracao, atualizado_em)
		SELECT g, g, $1, 1, 'disponivel', true, now(), gen_random_uuid(), gen_random_uuid(), now()
		FROM (SELECT gen_random_uuid() AS g FROM generate_series(1, $2)) s`, bairro, n)

	for range n / 2 {
		c.publicar(evento.AgendaItemDisponivel, "1.0.0", agenda(uuid.New(), bairro))
	}
	c.pararNATS()
	time.Sleep(1500 * time.Millisecond) // longer than the base may lag
	c.reiniciarNATS()
	for range n / 2 {
		c.publicar(evento.AgendaItemDisponivel, "1.0.0", agenda(uuid.New(), bairro))
	}
	c.eventually("every demand drawn", func() bool {
		return c.contar(`SELECT count(*) FROM d6a.atribuicoes WHERE status = 'ativa'`) == n
	})
	c.esperarOutboxVazio()

	must(t, c.contar(`SELECT count(*) FROM d6a.auditoria_sorteios`) == n, "%d audit records, want %d", c.contar(`SELECT count(*) FROM d6a.auditoria_sorteios`), n)
	must(t, c.contar(`SELECT count(*) FROM d6a.auditoria_sorteios WHERE base_fallback OR base_sequence IS NULL`) == 0,
		"draws on a fallback base or without a base sequence")
	acima := c.contar(`SELECT count(*) FROM d6a.auditoria_sorteios a JOIN d6a.outbox o ON o.event_id = a.event_id_sorteio
		WHERE o.sequence IS NULL OR a.base_sequence >= o.sequence`)
	must(t, acima == 0, "%d draws whose base is not below their result on the bus", acima)
	pubs := c.publicados(evento.ConselheiroSorteado)
	demandas := map[any]bool{}
	for _, p := range pubs {
		demandas[payloadDe(p)["demanda_id"]] = true
	}
	must(t, len(pubs) == n && len(demandas) == n, "%d conselheiro.sorteado for %d demands on the bus, want %d each", len(pubs), len(demandas), n)
	// Each base is the event id of the message stored at its sequence.
	bases := c.contar(`SELECT count(DISTINCT base_sequence) FROM d6a.auditoria_sorteios`)
	must(t, bases >= 1, "no base sequence")
	porSeq := map[uint64]string{}
	for _, m := range c.lerStream(c.cfg.Stream, "") {
		if id, ok := m["event_id"].(string); ok {
			porSeq[m["_seq"].(uint64)] = id
		}
	}
	rows, err := c.pool.Query(t.Context(), `SELECT base, base_sequence FROM d6a.auditoria_sorteios`)
	must(t, err == nil, "%v", err)
	defer rows.Close()
	for rows.Next() {
		var base string
		var seq int64
		must(t, rows.Scan(&base, &seq) == nil, "scan")
		must(t, porSeq[uint64(seq)] == base, "base %s at sequence %d, but the stream holds %q there", base, seq, porSeq[uint64(seq)])
	}
	c.semDLQ()
}
