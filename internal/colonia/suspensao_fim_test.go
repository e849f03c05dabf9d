package colonia_test

// Issue 21: every end of a suspension is published once, as
// conselheiro.suspensao_expirada, whichever path ends it: the boot, the
// periodic job, a draw that takes a counsellor still marked suspenso
// (CONTRACT §5 makes them eligible once the date has passed), or a cycle
// end that frees one. The event goes out with the change, before the draw
// that takes the counsellor.

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/evento"
)

// umFimDeSuspensao checks that the bus holds exactly one
// conselheiro.suspensao_expirada for conselheiro, for the suspension that
// ended at ate, and returns its stream sequence.
func (c *harness) umFimDeSuspensao(conselheiro uuid.UUID, ate time.Time) uint64 {
	c.t.Helper()
	c.esperarOutboxVazio()
	var achados []map[string]any
	for _, e := range c.publicados(evento.SuspensaoExpirada) {
		if payloadDe(e)["conselheiro_id"] == conselheiro.String() {
			achados = append(achados, e)
		}
	}
	must(c.t, len(achados) == 1, "%d conselheiro.suspensao_expirada for %s, want 1: %v", len(achados), conselheiro, achados)
	e := achados[0]
	id := atribuicao.IDSuspensaoExpirada(conselheiro, ate)
	must(c.t, e["event_id"] == id.String() && e["_h_Nats-Msg-Id"] == id.String(), "envelope %v, want event_id %s", e, id)
	must(c.t, payloadDe(e)["data_suspensao_ate"] == ate.UTC().Format("2006-01-02T15:04:05.000Z"), "payload %v", payloadDe(e))
	return uint64(e["_seq"].(uint64))
}

// seqSorteado is the stream sequence of the conselheiro.sorteado of demanda.
func (c *harness) seqSorteado(demanda uuid.UUID) uint64 {
	c.t.Helper()
	c.esperarOutboxVazio()
	ss := porDemanda(c.publicados(evento.ConselheiroSorteado), demanda)
	must(c.t, len(ss) == 1, "%d conselheiro.sorteado for %s, want 1", len(ss), demanda)
	return ss[0]["_seq"].(uint64)
}

// nadaMuda runs what could end the suspension again, a restart and a
// second instance included, and checks the bus still holds one end.
func (c *harness) nadaMuda(conselheiro uuid.UUID, ate time.Time) {
	c.t.Helper()
	c.w.Manutencao(c.t.Context())
	c.umFimDeSuspensao(conselheiro, ate)
	c.parar()
	c.iniciar()
	c.w.Manutencao(c.t.Context())
	c.umFimDeSuspensao(conselheiro, ate)
	w2 := c.segundaInstancia()
	w2.Manutencao(c.t.Context())
	c.umFimDeSuspensao(conselheiro, ate)
}

// While running: the suspension passes, and an agenda item draws the
// counsellor before the periodic job has run.
func TestFimDaSuspensao_SorteioPublica(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	a := c.novoConselheiro(bairro)
	ate := c.agora().Add(time.Hour).Truncate(10 * time.Millisecond) // TIMESTAMPTZ(2)
	c.suspender(a, ate)
	c.clock.Avancar(2 * time.Hour)

	d, s := c.novaDemanda(bairro)
	must(t, s == a, "the counsellor whose suspension passed was not drawn (%s)", s)
	seq := c.umFimDeSuspensao(a, ate)
	must(t, seq < c.seqSorteado(d), "suspensao_expirada at %d, after the draw at %d", seq, c.seqSorteado(d))
	c.nadaMuda(a, ate)
	c.semDLQ()
}

// At boot: the demand queued while the counsellor was suspended; d6a stops,
// the suspension passes, d6a starts. Reactivation runs before the sweep.
func TestFimDaSuspensao_BootPublica(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	a := c.novoConselheiro(bairro)
	ate := c.agora().Add(time.Hour).Truncate(10 * time.Millisecond)
	c.suspender(a, ate)
	d, s := c.novaDemanda(bairro)
	must(t, s == uuid.Nil, "a suspended counsellor was drawn")

	c.parar()
	c.clock.Avancar(2 * time.Hour)
	c.iniciar()
	c.eventually("pending demand drawn at boot", func() bool { return c.ativa(d) == a })
	seq := c.umFimDeSuspensao(a, ate)
	must(t, seq < c.seqSorteado(d), "suspensao_expirada at %d, after the boot's draw at %d", seq, c.seqSorteado(d))
	c.nadaMuda(a, ate)
	c.semDLQ()
}

// The periodic job, run by two instances at once: one end.
func TestFimDaSuspensao_PeriodicoDuasInstancias(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	a := c.novoConselheiro(bairro)
	ate := c.agora().Add(time.Hour).Truncate(10 * time.Millisecond)
	c.suspender(a, ate)
	w2 := c.segundaInstancia()
	c.clock.Avancar(2 * time.Hour)
	done := make(chan struct{})
	go func() { defer close(done); w2.Manutencao(t.Context()) }()
	c.w.Manutencao(t.Context())
	<-done
	must(t, c.statusConselheiro(a) == "disponivel", "status %s after the periodic job", c.statusConselheiro(a))
	c.umFimDeSuspensao(a, ate)
	c.nadaMuda(a, ate)
	c.semDLQ()
}

// A cycle end for a counsellor still marked suspenso, whose suspension has
// passed, frees them: that ends the suspension too.
func TestFimDaSuspensao_CicloPublica(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	a := c.novoConselheiro(bairro)
	ate := c.agora().Add(time.Hour).Truncate(10 * time.Millisecond)
	c.suspender(a, ate)
	c.clock.Avancar(2 * time.Hour)
	c.processar(evento.CicloConcluido, "1.0.0", ciclo(a, uuid.New(), bairro))
	must(t, c.statusConselheiro(a) == "disponivel", "status %s after the cycle end", c.statusConselheiro(a))
	c.umFimDeSuspensao(a, ate)
	c.nadaMuda(a, ate)
	c.semDLQ()
}
