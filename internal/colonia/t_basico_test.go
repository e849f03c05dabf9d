package colonia_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/evento"
)

func TestT01_AgendaComElegiveisSorteia(t *testing.T) {
	t.Parallel()
	c, bairro, a, b := coloniaComDupla(t)
	demanda, sorteado := c.novaDemanda(bairro)

	must(t, sorteado == a || sorteado == b, "active assignment to %v, want one of the two", sorteado)
	must(t, c.statusConselheiro(sorteado) == "ocupado", "winner status %s", c.statusConselheiro(sorteado))
	pubs := c.publicados(evento.ConselheiroSorteado)
	must(t, len(pubs) == 1, "%d conselheiro.sorteado on the bus, want 1", len(pubs))
	p := payloadDe(pubs[0])
	must(t, p["conselheiro_id"] == sorteado.String(), "payload conselheiro_id %v", p["conselheiro_id"])
	must(t, p["total_elegiveis"] == float64(2) && p["posicao_sorteada"] == float64(0), "payload %v", p)
	must(t, len(p["seed_publico"].(string)) == 64 && len(p["lista_elegiveis_hash"].(string)) == 64, "seed/hash %v", p)
	var eventID string
	_ = c.pool.QueryRow(t.Context(), `SELECT event_id_sorteio::text FROM d6a.atribuicoes WHERE demanda_id = $1`, demanda).Scan(&eventID)
	must(t, pubs[0]["event_id"] == eventID && pubs[0]["_h_Nats-Msg-Id"] == eventID, "event_id %v / msg id %v, want %s", pubs[0]["event_id"], pubs[0]["_h_Nats-Msg-Id"], eventID)
	must(t, pubs[0]["correlacao_id"] == demanda.String(), "correlacao_id %v", pubs[0]["correlacao_id"])
}

func TestT06_UCSemConselheirosNenhumCadastrado(t *testing.T) {
	t.Parallel()
	c := novaColonia(t, opcoes{})
	c.iniciar()
	demanda, bairro := uuid.New(), uuid.New()
	c.processar(evento.AgendaItemDisponivel, "1.0.0", agenda(demanda, bairro))
	pubs := c.publicados(evento.SorteioSemCandidatos)
	must(t, len(pubs) == 1, "%d sem_candidatos, want 1", len(pubs))
	must(t, payloadDe(pubs[0])["motivo"] == "nenhum_cadastrado", "motivo %v", payloadDe(pubs[0])["motivo"])
	must(t, c.contar(`SELECT count(*) FROM d6a.fila_pendentes WHERE demanda_id = $1`, demanda) == 1, "demand not pending")
}

// TestMetricsMoveAfterADraw reads /metrics through the worker's real HTTP
// listener before and after a draw and a sem_candidatos.
func TestMetricsMoveAfterADraw(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	scrape := func() string {
		resp, err := http.Get("http://" + c.w.Addr.String() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	antes := scrape()
	must(t, strings.Contains(antes, "d6a_sorteios_total 0"), "d6a_sorteios_total not at 0 before any draw")
	c.novoConselheiro(bairro)
	c.novaDemanda(bairro)
	c.novaDemanda(bairro)
	depois := scrape()
	for _, linha := range []string{
		"d6a_sorteios_total 1",
		`d6a_sem_candidatos_total{motivo="todos_ocupados"} 1`,
		"d6a_fila_pendentes_size 1",
		"d6a_conselheiros_ativos 1",
		`d6a_handler_duracao_segundos_count{resultado="ok",tipo="agenda.item_disponível"} 2`,
	} {
		must(t, strings.Contains(depois, linha), "/metrics lacks %q", linha)
	}
	// Where the time went: one delivery per event (the registration and the
	// two demands), and each transaction's three parts.
	entregas := valorMetrica(t, depois, "d6a_entrega_atraso_segundos_count") - valorMetrica(t, antes, "d6a_entrega_atraso_segundos_count")
	must(t, entregas == 3, "d6a_entrega_atraso_segundos counted %v deliveries, want 3", entregas)
	for _, fase := range []string{"abertura", "decisoes", "fechamento"} {
		serie := `d6a_transacao_fase_segundos_count{fase="` + fase + `"}`
		n := valorMetrica(t, depois, serie) - valorMetrica(t, antes, serie)
		must(t, n >= 3, "%s grew by %v over three events, want at least 3", serie, n)
	}
}

// valorMetrica is the value of one series in a /metrics page.
func valorMetrica(t *testing.T, pagina, serie string) float64 {
	t.Helper()
	for _, l := range strings.Split(pagina, "\n") {
		if v, ok := strings.CutPrefix(l, serie+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			return f
		}
	}
	t.Fatalf("/metrics lacks %s", serie)
	return 0
}
