package colonia_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// CONTRACT §4, issue 22: every draw's seed comes from its trigger, the
// consumed message it follows: base is the trigger's event_id,
// base_sequence its stream sequence and T the time the bus server stored
// it. Nothing d6a does after the trigger is stored (its clock, a wait, a
// bus that stops in the middle of a burst) can change the seed. A draw
// whose T was d6a's clock or whose base was "the latest message" fails
// here: the trigger's sequence holds the agenda item of the same demand,
// stored at exactly T.
func TestSementeDoGatilho(t *testing.T) {
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
	time.Sleep(1500 * time.Millisecond)
	c.reiniciarNATS()
	for range n / 2 {
		c.publicar(evento.AgendaItemDisponivel, "1.0.0", agenda(uuid.New(), bairro))
	}
	c.eventually("every demand drawn", func() bool {
		return c.contar(`SELECT count(*) FROM d6a.atribuicoes WHERE status = 'ativa'`) == n
	})
	c.esperarOutboxVazio()

	type gatilho struct {
		eventID, demanda string
		em               time.Time
	}
	porSeq := map[int64]gatilho{}
	for _, m := range c.lerStream(c.cfg.Stream, evento.AgendaItemDisponivel.Subject(c.cfg.SubjectPrefix)) {
		id, _ := m["event_id"].(string)
		porSeq[int64(m["_seq"].(uint64))] = gatilho{id, payloadDe(m)["demanda_id"].(string), m["_em"].(time.Time)}
	}
	rows, err := c.pool.Query(t.Context(), `SELECT demanda_id::text, base, base_sequence, timestamp_sorteio FROM d6a.auditoria_sorteios`)
	must(t, err == nil, "%v", err)
	defer rows.Close()
	vistos := 0
	for rows.Next() {
		var demanda, base, ts string
		var seq *int64
		must(t, rows.Scan(&demanda, &base, &seq, &ts) == nil, "scan")
		must(t, seq != nil, "draw of %s without base_sequence", demanda)
		g, ok := porSeq[*seq]
		must(t, ok, "draw of %s: base_sequence %d is not an agenda item of the stream", demanda, *seq)
		must(t, g.demanda == demanda, "draw of %s follows the agenda item of %s", demanda, g.demanda)
		must(t, g.eventID == base, "draw of %s: base %s, but its trigger is %s", demanda, base, g.eventID)
		must(t, sorteio.FormatTimestamp(g.em) == ts, "draw of %s: T %s, but its trigger was stored at %s", demanda, ts, sorteio.FormatTimestamp(g.em))
		vistos++
	}
	must(t, rows.Err() == nil, "%v", rows.Err())
	must(t, vistos == n, "%d audit records, want %d", vistos, n)

	// verify --url with the bus: every draw's trigger checked, none failing.
	cli := &log.Cliente{Base: "http://" + c.w.Addr.String(), Barramento: c.w.Bus}
	res, _, err := cli.VerificarTudo(t.Context(), nil)
	must(t, err == nil && res.Primeira == nil, "verify --all: %v / %v", err, res.Primeira)
	must(t, res.Gatilhos == n && res.GatilhoDesde == 0, "%d triggers checked from index %d, want %d from 0", res.Gatilhos, res.GatilhoDesde, n)

	// A record whose T is 1 ms off its trigger's bus time, or whose base is
	// another message's id, is named (the recomputed seed alone would not
	// tell: the operator can recompute it for any T).
	var r registro.Registro
	var bruto []byte
	must(t, c.pool.QueryRow(t.Context(), `SELECT registro FROM d6a.transparencia_registros WHERE convert_from(registro, 'UTF8') LIKE '{"event_id_sorteio"%' ORDER BY indice LIMIT 1`).Scan(&bruto) == nil, "first draw record")
	f, err := registro.LerRegistravel(bruto)
	must(t, err == nil, "%v", err)
	r = f.(registro.Registro)
	must(t, registro.ConferirGatilho(t.Context(), c.w.Bus, r) == nil, "the real record fails")
	tt, _ := sorteio.ParseTimestamp(r.Timestamp)
	adiantado := r
	adiantado.Timestamp = sorteio.FormatTimestamp(tt.Add(time.Millisecond))
	var fa *registro.Falha
	err = registro.ConferirGatilho(t.Context(), c.w.Bus, adiantado)
	must(t, errors.As(err, &fa) && fa.Campo == "timestamp", "T 1 ms off: %v", err)
	outra := r
	*outra.BaseSequence = *r.BaseSequence + 1
	err = registro.ConferirGatilho(t.Context(), c.w.Bus, outra)
	must(t, errors.As(err, &fa) && fa.Campo == "base", "base_sequence of another message: %v", err)
	c.semDLQ()
}
