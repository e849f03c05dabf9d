package colonia_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/reparo"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/verificar/barramento"
)

// fotografar copies every d6a table into schema foto; restaurar puts the
// copies back, as a promotion of an asynchronous standby that never got the
// commits in between would: their results stay on the bus, their inputs
// stay acknowledged.
func (c *harness) fotografar() {
	c.t.Helper()
	c.exec(`DROP SCHEMA IF EXISTS foto CASCADE; CREATE SCHEMA foto`)
	for _, tab := range c.tabelasD6a() {
		c.exec(`CREATE TABLE foto.` + tab + ` AS SELECT * FROM d6a.` + tab)
	}
}

// restaurar puts every d6a table back as fotografar saw it, as a failover
// to a standby that missed the last commits does: below the triggers (the
// append-only tables refuse a DELETE from d6a itself).
func (c *harness) restaurar() {
	c.t.Helper()
	for _, tab := range c.tabelasD6a() {
		c.exec(`SET session_replication_role = replica; DELETE FROM d6a.` + tab + `; INSERT INTO d6a.` + tab +
			` OVERRIDING SYSTEM VALUE SELECT * FROM foto.` + tab + `; RESET session_replication_role`)
	}
}

func (c *harness) tabelasD6a() []string {
	c.t.Helper()
	rows, err := c.pool.Query(context.Background(), `SELECT table_name FROM information_schema.tables WHERE table_schema = 'd6a' AND table_type = 'BASE TABLE' ORDER BY 1`)
	if err != nil {
		c.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			c.t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func (c *harness) verificarConsistencia() barramento.Relatorio {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := store.Open(ctx, c.dbURL)
	if err != nil {
		c.t.Fatal(err)
	}
	defer st.Close()
	b, err := bus.Connect(ctx, bus.Config{URL: "nats://" + c.natsAddr, Stream: c.cfg.Stream, Prefix: c.cfg.SubjectPrefix})
	if err != nil {
		c.t.Fatal(err)
	}
	defer b.Close()
	rel, err := barramento.Verificar(ctx, st.Read(), b, barramento.Config{Stream: c.cfg.Stream, DLQ: bus.DLQStream, Prefix: c.cfg.SubjectPrefix}, 0)
	if err != nil {
		c.t.Fatal(err)
	}
	return rel
}

// iniciarEReparar starts a new incarnation and runs the repair beside it,
// through its executor, until the outbox is published.
func (c *harness) iniciarEReparar(rel barramento.Relatorio) {
	c.t.Helper()
	c.iniciar()
	var saida bytes.Buffer
	if !reparo.New(c.w.Servico, nil).Reparar(context.Background(), rel, &saida) {
		c.t.Fatalf("repair incomplete:\n%s", saida.String())
	}
	c.t.Logf("repair:\n%s", saida.String())
	c.esperarOutboxVazio()
}

// TestConsistenciaAposFailoverAssincrono loses the last commits the way a
// promoted asynchronous standby does (the database goes back to a copy
// taken before them) and checks that the consistency check reports every
// divergence, that the repair re-creates the lost draws from the bus
// without drawing again and applies the lost inputs, and that the check is
// clean afterwards.
func TestConsistenciaAposFailoverAssincrono(t *testing.T) {
	c, bairro, a, b := coloniaComDupla(t)
	d1, x1 := c.novaDemanda(bairro)
	if x1 == uuid.Nil {
		t.Fatal("d1 not drawn")
	}
	// A unit with one counsellor, busy with d5, and d6 waiting for him.
	fila := c.novaUC()
	m := c.novoConselheiro(fila)
	d5, _ := c.novaDemanda(fila)
	d6, _ := c.novaDemanda(fila)
	if c.ativa(d5) != m || c.ativa(d6) != uuid.Nil {
		t.Fatalf("d5 -> %s, d6 -> %s: want d5 drawn to %s and d6 pending", c.ativa(d5), c.ativa(d6), m)
	}
	if rel := c.verificarConsistencia(); rel.Diverge() {
		t.Fatalf("divergence before any loss:\n%s", rel)
	}

	// The window the standby never received: a cycle frees x1, a draw for
	// d2, a registration in another unit and a draw there, and a demand
	// without candidates.
	c.fotografar()
	cicloID := c.processar(evento.CicloConcluido, "1.0.0", ciclo(x1, d1, bairro))
	d2, x2 := c.novaDemanda(bairro)
	if x2 == uuid.Nil {
		t.Fatal("d2 not drawn")
	}
	outra := c.novaUC()
	n := c.novoConselheiro(outra)
	d3, x3 := c.novaDemanda(outra)
	if x3 != n {
		t.Fatalf("d3 drawn to %s, want %s", x3, n)
	}
	deserto := c.novaUC()
	d4, _ := c.novaDemanda(deserto)
	// m's cycle: the sweep of the pending queue draws d6 to him.
	c.processar(evento.CicloConcluido, "1.0.0", ciclo(m, d5, fila))
	if c.ativa(d6) != m {
		t.Fatalf("d6 not drawn by the sweep after m's cycle")
	}
	sorteados := func(d uuid.UUID) []map[string]any { return porDemanda(c.publicados(evento.ConselheiroSorteado), d) }
	if len(sorteados(d2)) != 1 || len(sorteados(d3)) != 1 || len(porDemanda(c.publicados(evento.SorteioSemCandidatos), d4)) != 1 {
		t.Fatal("expected one result per demand on the bus")
	}
	c.parar()
	c.restaurar()

	rel := c.verificarConsistencia()
	t.Logf("after the loss:\n%s", rel)
	conta := map[string]int{}
	for _, d := range rel.Divergencias {
		conta[d.Tipo]++
	}
	// Results: sorteado d2, d3, d6 and sem_candidatos d4 without outbox
	// rows; three of them without assignments. Inputs: cycle, agenda d2,
	// cadastro n, agenda d3, agenda d4, m's cycle.
	if conta[barramento.ResultadoSemOutbox] != 4 || conta[barramento.SorteadoSemAtribuicao] != 3 || conta[barramento.EntradaSemInbox] != 6 {
		t.Fatalf("divergences %v, want 4 results without outbox, 3 draws without assignment, 6 inputs without inbox", conta)
	}
	if len(rel.Perdidos) != 3 || rel.ReplayMinimo() == 0 || rel.ReplayDesde[evento.CicloConcluido] == 0 {
		t.Fatalf("lost draws %d, replay from %v", len(rel.Perdidos), rel.ReplayDesde)
	}
	for _, p := range rel.Perdidos {
		if p.Base == "" || p.Agenda == nil {
			t.Errorf("lost draw %s: base %q agenda %v: both are on the bus", p.EventID, p.Base, p.Agenda)
		}
	}

	c.iniciarEReparar(rel)

	// Nothing drawn twice; the draws are the published ones. d6 was drawn
	// again by the re-applied cycle's sweep, inside the repair's unit of
	// work, and that draw was replaced by the bus's before the commit.
	if len(sorteados(d6)) != 1 || c.ativa(d6) != m {
		t.Errorf("d6: %d sorteado on the bus, active to %s: want 1, to %s", len(sorteados(d6)), c.ativa(d6), m)
	}
	if st, _ := c.atribuicao(m, d5); st != "concluida" {
		t.Errorf("d5's assignment %s, want concluida", st)
	}
	if len(sorteados(d2)) != 1 || len(sorteados(d3)) != 1 || len(porDemanda(c.publicados(evento.SorteioSemCandidatos), d4)) != 1 {
		t.Errorf("a demand got a second result: d2 %d, d3 %d sorteado, d4 %d sem_candidatos", len(sorteados(d2)), len(sorteados(d3)),
			len(porDemanda(c.publicados(evento.SorteioSemCandidatos), d4)))
	}
	if c.ativa(d2) != x2 || c.ativa(d3) != n {
		t.Errorf("active assignments d2 -> %s (want %s), d3 -> %s (want %s)", c.ativa(d2), x2, c.ativa(d3), n)
	}
	if st, enc := c.atribuicao(x1, d1); st != "concluida" || enc == nil || *enc != cicloID {
		t.Errorf("d1's assignment %s closed by %v, want concluida by the cycle %s", st, enc, cicloID)
	}
	if c.statusConselheiro(x2) != "ocupado" || c.statusConselheiro(n) != "ocupado" {
		t.Errorf("counsellors x2 %s, n %s: want both ocupado", c.statusConselheiro(x2), c.statusConselheiro(n))
	}
	if got := c.contar(`SELECT count(*) FROM d6a.fila_pendentes WHERE demanda_id = $1`, d4); got != 1 {
		t.Errorf("d4 pending rows %d, want 1", got)
	}
	if got := c.contar(`SELECT count(*) FROM d6a.reconciliacoes WHERE base IS NOT NULL`); got != 3 {
		t.Errorf("reconciliacoes with base %d, want 3", got)
	}
	if got := c.contar(`SELECT count(*) FROM d6a.auditoria_sorteios a WHERE a.demanda_id = $1`, d6); got != 0 {
		t.Errorf("the discarded draw of d6 left %d audit rows", got)
	}
	_ = outro(x1, a, b)
	if rel := c.verificarConsistencia(); rel.Diverge() {
		t.Errorf("still divergent after the repair:\n%s", rel)
	}
	// A second repair changes nothing.
	var saida bytes.Buffer
	if !reparo.New(c.w.Servico, nil).Reparar(context.Background(), rel, &saida) {
		t.Errorf("second repair:\n%s", saida.String())
	}
	if len(sorteados(d2)) != 1 || c.contar(`SELECT count(*) FROM d6a.atribuicoes WHERE demanda_id = ANY($1)`, []uuid.UUID{d2, d3}) != 2 {
		t.Errorf("the second repair changed something")
	}
}

// TestBootAdiaSorteiosAteOReparo: an instance that boots on a database
// that lost draws the bus published holds back the boot's sweep of the
// pending queue, which would decide on that database (here: give the
// counsellor the bus already gave a demand a second one), until the repair
// makes them agree; then the sweep runs.
func TestBootAdiaSorteiosAteOReparo(t *testing.T) {
	c, _ := coloniaNoBairro(t)
	fila := c.novaUC()
	m := c.novoConselheiro(fila)
	d5, _ := c.novaDemanda(fila)
	d6, _ := c.novaDemanda(fila)
	must(t, c.ativa(d5) == m && c.ativa(d6) == uuid.Nil, "d5 -> %s, d6 -> %s: want d5 drawn to %s and d6 pending", c.ativa(d5), c.ativa(d6), m)
	// m refuses d5: free again, with d5 and d6 pending. A refusal does not
	// sweep the queue; the boot does (spec 4.7).
	c.processar(evento.AtribuicaoRecusada, "1.1.0", recusa(m, d5, fila, "recusa_explicita"))
	must(t, c.statusConselheiro(m) == "disponivel" && c.ativa(d5) == uuid.Nil && c.ativa(d6) == uuid.Nil,
		"after the refusal: m %s, d5 -> %s, d6 -> %s; want m free and both pending", c.statusConselheiro(m), c.ativa(d5), c.ativa(d6))

	// The window the standby never received: a new demand drawn to m.
	c.fotografar()
	d7, x7 := c.novaDemanda(fila)
	must(t, x7 == m, "d7 drawn to %s, want %s", x7, m)
	c.parar()
	c.restaurar()

	c.iniciar()
	if !c.w.Divergente() {
		t.Fatal("the instance booted on the lost commits without noticing")
	}
	// The boot would have drawn d5 or d6 to m, whom the bus gave d7.
	if c.ativa(d5) != uuid.Nil || c.ativa(d6) != uuid.Nil {
		t.Fatalf("the boot drew on the diverging database: d5 -> %s, d6 -> %s", c.ativa(d5), c.ativa(d6))
	}
	var saida bytes.Buffer
	if !reparo.New(c.w.Servico, nil).Reparar(context.Background(), c.verificarConsistencia(), &saida) {
		t.Fatalf("repair incomplete:\n%s", saida.String())
	}
	c.esperarOutboxVazio()
	c.eventually("the held boot steps to run after the repair", func() bool { return !c.w.Divergente() })
	// The boot's sweep publishes one trigger per pending demand and draws
	// when they come back (CONTRACT §4).
	c.eventually("the boot's sweep triggers consumed back", func() bool {
		return c.contar(`SELECT count(*) FROM d6a.eventos_processados WHERE tipo_evento = 'd6a.varredura'`) == 2
	})
	c.esperarOutboxVazio()
	if c.ativa(d7) != m || c.ativa(d5) != uuid.Nil || c.ativa(d6) != uuid.Nil {
		t.Errorf("after the repair: d7 -> %s (want %s), d5 -> %s, d6 -> %s (want both pending)", c.ativa(d7), m, c.ativa(d5), c.ativa(d6))
	}
	if n := len(porDemanda(c.publicados(evento.ConselheiroSorteado), d7)); n != 1 {
		t.Errorf("d7 has %d conselheiro.sorteado on the bus, want 1", n)
	}
	if rel := c.verificarConsistencia(); rel.Diverge() {
		t.Errorf("divergence after the repair:\n%s", rel)
	}
}
