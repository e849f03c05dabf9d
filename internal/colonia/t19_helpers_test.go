package colonia_test

// Helpers of the T19–T35 scenarios and of the replay / outage / drain tests.
// Every name starts with h3 so it cannot clash with the harness or with the
// other scenario files of this package.

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/evento"
)

// h3envelope builds the bytes of an incoming envelope, as c.publicar would,
// so a test can publish the very same bytes twice.
func h3envelope(c *harness, tipo evento.Tipo, versao string, payload any) (uuid.UUID, string, []byte) {
	c.t.Helper()
	id := uuid.New()
	e := env{EventID: id.String(), Tipo: string(tipo), Origem: "teste", VersaoSchema: versao, Timestamp: "2026-11-29T12:00:00.000Z", Payload: payload}
	data, err := json.Marshal(e)
	if err != nil {
		c.t.Fatal(err)
	}
	return id, tipo.Subject(c.cfg.SubjectPrefix), data
}

// h3drenar waits until every consumer has nothing left to deliver or to be
// acknowledged, and the outbox is published.
func h3drenar(c *harness) {
	c.t.Helper()
	c.eventually("consumers drained", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p, err := c.w.Bus.Pending(ctx)
		return err == nil && p == 0
	})
	c.esperarOutboxVazio()
}

// h3esperarTodos waits until every event id is in the inbox.
func h3esperarTodos(c *harness, ids []uuid.UUID) {
	c.t.Helper()
	h3esperarTodosEm(c, 20*time.Second, ids)
}

// h3esperarTodosEm is h3esperarTodos with its own deadline.
func h3esperarTodosEm(c *harness, d time.Duration, ids []uuid.UUID) {
	c.t.Helper()
	c.eventuallyEm(d, "all events processed", func() bool {
		var n int
		_ = c.pool.QueryRow(context.Background(), `SELECT count(*) FROM d6a.eventos_processados WHERE event_id = ANY($1::uuid[])`, ids).Scan(&n)
		return n == len(ids)
	})
}

// h3tabelas are the d6a tables a replay must leave untouched.
var h3tabelas = []string{
	"conselheiros", "atribuicoes", "fila_pendentes", "contador_recusas",
	"auditoria_sorteios", "outbox", "eventos_processados", "consumer_offset",
}

// h3hashes returns, per d6a table, the md5 of its whole contents in a fixed
// order, with its row count.
func h3hashes(c *harness) map[string]string {
	c.t.Helper()
	out := make(map[string]string, len(h3tabelas))
	for _, tb := range h3tabelas {
		var h string
		err := c.pool.QueryRow(context.Background(),
			`SELECT coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '-') || ' rows=' || count(*) FROM d6a.`+tb+` t`).Scan(&h)
		if err != nil {
			c.t.Fatalf("hash of d6a.%s: %v", tb, err)
		}
		out[tb] = h
	}
	return out
}

// h3linha returns the text of the one row of a query (for before/after
// comparisons of a single row).
func h3linha(c *harness, sql string, args ...any) string {
	c.t.Helper()
	var s string
	if err := c.pool.QueryRow(context.Background(), sql, args...).Scan(&s); err != nil {
		c.t.Fatalf("%s: %v", sql, err)
	}
	return s
}

// h3stream returns the bus stream's message count and last sequence.
func h3stream(c *harness) (msgs, last uint64) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := c.js.Stream(ctx, c.cfg.Stream)
	if err != nil {
		c.t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	return info.State.Msgs, info.State.LastSeq
}

// h3porEventID indexes published envelopes by event_id, counting copies, and
// fails when a copy's Nats-Msg-Id differs from its event_id.
func h3porEventID(c *harness, pubs []map[string]any) map[string]int {
	c.t.Helper()
	out := make(map[string]int, len(pubs))
	for _, p := range pubs {
		id, _ := p["event_id"].(string)
		must(c.t, id != "" && p["_h_Nats-Msg-Id"] == id, "published envelope event_id %v with Nats-Msg-Id %v", p["event_id"], p["_h_Nats-Msg-Id"])
		out[id]++
	}
	return out
}

// h3eventoSorteio returns the event_id_sorteio of the assignment of
// (conselheiro, demanda).
func h3eventoSorteio(c *harness, conselheiro, demanda uuid.UUID) string {
	c.t.Helper()
	return h3linha(c, `SELECT event_id_sorteio::text FROM d6a.atribuicoes WHERE conselheiro_id = $1 AND demanda_id = $2`, conselheiro, demanda)
}

// h3tentativas returns tentativas_sorteio of the pending row of demanda, or
// -1 when the demand is not pending.
func h3tentativas(c *harness, demanda uuid.UUID) int {
	c.t.Helper()
	var n int
	if err := c.pool.QueryRow(context.Background(), `SELECT tentativas_sorteio FROM d6a.fila_pendentes WHERE demanda_id = $1`, demanda).Scan(&n); err != nil {
		return -1
	}
	return n
}

// h3replayTodos rewinds every consumed type's durable to sequence 1 with a
// short-lived bus connection of its own, as `d6a replay` does.
func h3replayTodos(c *harness) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := bus.Connect(ctx, bus.Config{URL: c.cfg.NATSURL, Stream: c.cfg.Stream, Prefix: c.cfg.SubjectPrefix, MaxEntregas: c.cfg.MaxEntregas})
	if err != nil {
		c.t.Fatal(err)
	}
	defer b.Close()
	if _, _, err := b.Replay(ctx, 1); err != nil {
		c.t.Fatalf("replay: %v", err)
	}
}
