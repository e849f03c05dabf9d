package colonia_test

// The periodic jobs of issue 13: the automatic response timeout (two
// instances, one refusal per assignment), conselheiro.demanda_iniciada, and
// the reactivation of expired suspensions with conselheiro.suspensao_expirada.

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/colonia"
	"github.com/formigueiro/d6a/internal/evento"
)

// segundaInstancia runs another worker on the colony's database and bus.
func (c *harness) segundaInstancia() *colonia.Instancia {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := colonia.New(ctx, c.cfg, colonia.Options{Now: c.clock.Now, Backoff: []time.Duration{20 * time.Millisecond}})
	if err != nil {
		cancel()
		c.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	c.t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			c.t.Errorf("second instance did not stop")
		}
	})
	c.eventually("second instance ready", func() bool { return w.Ready(context.Background()) == nil })
	return w
}

// Two instances with D6A_TIMEOUT_AUTOMATICO on publish one refusal per
// assignment not started within the timeout, and none for a started one.
func TestTimeoutAutomatico_DuasInstanciasUmaRecusa(t *testing.T) {
	t.Parallel()
	c := novaColonia(t, opcoes{})
	c.cfg.TimeoutAutomatico = true
	c.cfg.Manutencao = 30 * time.Millisecond
	b1, b2 := c.novaUC(), c.novaUC()
	c.iniciar()
	w2 := c.segundaInstancia()
	c.novoConselheiro(b1)
	c.novoConselheiro(b1)
	c1, c2 := c.novoConselheiro(b2), c.novoConselheiro(b2)
	iniciada, x := c.novaDemanda(b1)
	parada, y := c.novaDemanda(b2)
	must(t, x != uuid.Nil && y != uuid.Nil, "demands not drawn")

	// x started his demand; y never did.
	inicio := c.processar(evento.DemandaIniciada, "1.0.0", map[string]any{
		"conselheiro_id": x, "demanda_id": iniciada, "timestamp": "2026-11-29T13:00:00.000Z", "canal": "app",
	})
	must(t, c.contar(`SELECT count(*) FROM d6a.atribuicoes_iniciadas WHERE conselheiro_id = $1 AND demanda_id = $2 AND event_id = $3`, x, iniciada, inicio) == 1,
		"start not recorded")
	r := c.admin(http.MethodGet, "ocupados?mais_de=0h", nil)
	esperarStatus(t, r, 200, "GET ocupados")
	for _, o := range r.obj(t)["ocupados"].([]any) {
		m := o.(map[string]any)
		want := m["demanda_id"] == iniciada.String()
		must(t, m["iniciada"] == want, "ocupado %v: iniciada should be %v", m, want)
	}

	sorteioParado := uuid.MustParse(h3eventoSorteio(c, y, parada))
	c.clock.Avancar(73 * time.Hour)
	// Both instances' tickers run; two more passes released together.
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, w := range []*colonia.Instancia{c.w, w2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			w.Manutencao(context.Background())
		}()
	}
	close(start)
	wg.Wait()

	ev := atribuicao.IDTimeout(sorteioParado)
	c.esperarProcessado(ev)
	must(t, c.ativa(parada) == outro(y, c1, c2), "stuck demand re-drawn to %v", c.ativa(parada))
	time.Sleep(300 * time.Millisecond) // several more passes of both tickers
	c.esperarOutboxVazio()
	recusas := c.publicados(evento.AtribuicaoRecusada)
	must(t, len(porDemanda(recusas, parada)) == 1, "%d refusals for the stuck assignment, want 1", len(porDemanda(recusas, parada)))
	must(t, len(porDemanda(recusas, iniciada)) == 0, "a started assignment was timed out")
	must(t, c.contar(`SELECT count(*) FROM d6a.outbox WHERE tipo = 'conselheiro.atribuicao_recusada'`) == 1, "outbox rows of refusals")
	must(t, c.ativa(iniciada) == x, "started assignment closed")
	c.semDLQ()
}

// conselheiro.demanda_iniciada without a matching assignment is
// acknowledged and changes nothing; a payload without ids is a dead letter.
func TestDemandaIniciada_SemAtribuicaoEInvalida(t *testing.T) {
	t.Parallel()
	c, _ := coloniaNoBairro(t)
	c.processar(evento.DemandaIniciada, "1.0.0", map[string]any{"conselheiro_id": uuid.New(), "demanda_id": uuid.New()})
	must(t, c.contar(`SELECT count(*) FROM d6a.atribuicoes_iniciadas`) == 0, "start recorded without an assignment")
	c.publicar(evento.DemandaIniciada, "1.0.0", map[string]any{"conselheiro_id": "x", "demanda_id": uuid.New()})
	c.eventually("dead letter", func() bool { return len(c.dlq()) == 1 })
}

// Reactivation runs periodically, not only at boot, and each reactivation
// publishes conselheiro.suspensao_expirada once; the reactivated counsellor
// gets the pending demand of the unit.
func TestReativacaoPeriodica_PublicaSuspensaoExpirada(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	a := c.novoConselheiro(bairro)
	ate := c.agora().Add(time.Hour).Truncate(10 * time.Millisecond) // TIMESTAMPTZ(2)
	c.suspender(a, ate)
	d, s := c.novaDemanda(bairro)
	must(t, s == uuid.Nil, "a suspended counsellor was drawn")

	c.w.Manutencao(t.Context())
	must(t, c.statusConselheiro(a) == "suspenso", "reactivated before the date")

	c.clock.Avancar(2 * time.Hour)
	c.w.Manutencao(t.Context())
	c.w.Manutencao(t.Context())
	// The sweep draws when the end comes back from the bus (CONTRACT §4),
	// its seed following conselheiro.suspensao_expirada.
	c.eventually("the reactivated counsellor gets the pending demand", func() bool { return c.ativa(d) == a })
	c.esperarOutboxVazio()
	must(t, c.statusConselheiro(a) == "ocupado", "reactivated counsellor %s", c.statusConselheiro(a))
	must(t, c.contar(`SELECT count(*) FROM d6a.auditoria_sorteios WHERE demanda_id = $1 AND base = $2`, d, atribuicao.IDSuspensaoExpirada(a, ate).String()) == 1,
		"the draw does not follow the suspension's end")
	exp := c.publicados(evento.SuspensaoExpirada)
	must(t, len(exp) == 1, "%d suspensao_expirada, want 1", len(exp))
	e := exp[0]
	id := atribuicao.IDSuspensaoExpirada(a, ate)
	must(t, e["event_id"] == id.String() && e["_h_Nats-Msg-Id"] == id.String() && e["origem"] == "D-6a", "envelope %v", e)
	p := payloadDe(e)
	must(t, p["conselheiro_id"] == a.String() && p["data_suspensao_ate"] == ate.UTC().Format("2006-01-02T15:04:05.000Z") && p["timestamp"] != nil, "payload %v", p)
	c.semDLQ()
}

// The operation metrics of issue 13 on /metrics: the oldest pending
// demand's age, pending by age bucket, occupied without a start past the
// timeout, administrative actions by kind, the parameter version in force.
func TestMetricasDeOperacao(t *testing.T) {
	t.Parallel()
	c := novaColonia(t, opcoes{})
	vazia, bairro := c.novaUC(), c.novaUC()
	c.iniciar()
	c.novaDemanda(vazia)
	c.novoConselheiro(bairro)
	_, x := c.novaDemanda(bairro)
	must(t, x != uuid.Nil, "demand not drawn")
	c.clock.Avancar(80 * time.Hour)
	esperarStatus(t, c.admin(http.MethodPost, "parametros", map[string]any{
		"n_recusas_suspensao": 3, "t_suspensao_dias": 90, "timeout_resposta_horas": 48, "justificativa": "teste",
	}), 201, "POST parametros")

	r := c.http(http.MethodGet, "/metrics", "", nil)
	esperarStatus(t, r, 200, "GET /metrics")
	pagina := string(r.body)
	for _, linha := range []string{
		`d6a_fila_pendentes_por_idade{faixa="72h_7d"} 1`,
		`d6a_fila_pendentes_por_idade{faixa="ate_1h"} 0`,
		`d6a_ocupados_sem_inicio 1`,
		`d6a_acoes_administrativas_total{acao="parametros"} 1`,
		`d6a_acoes_administrativas_total{acao="timeout"} 0`,
		`d6a_parametros_versao 2`,
	} {
		must(t, strings.Contains(pagina, linha+"\n"), "/metrics lacks %q", linha)
	}
	var idade float64
	for _, l := range strings.Split(pagina, "\n") {
		if v, ok := strings.CutPrefix(l, "d6a_fila_pendente_mais_antiga_segundos "); ok {
			idade, _ = strconv.ParseFloat(v, 64)
		}
	}
	must(t, idade >= 80*3600 && idade < 81*3600, "oldest pending age %v s, want ≈ 80 h", idade)
}
