package colonia_test

// The administration console (issue 13, CONTRACT §6) end to end: real
// PostgreSQL, real JetStream, the assembled colony, requests over HTTP.

import (
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/evento"
)

// 401 without or with a bad token, 403 with a valid token without the
// admin role, 200 with it; the parameters start as version 1 from the
// environment.
func TestAdmin_AutenticacaoEPapel(t *testing.T) {
	t.Parallel()
	c, _ := coloniaNoBairro(t)
	rotas := []struct{ metodo, caminho string }{
		{http.MethodGet, "ocupados"}, {http.MethodGet, "fila"}, {http.MethodGet, "parametros"}, {http.MethodGet, "acoes"},
		{http.MethodPost, "parametros"}, {http.MethodPost, "atribuicoes/" + uuid.NewString() + "/timeout"},
		{http.MethodPost, "fila/" + uuid.NewString() + "/sortear"},
		{http.MethodPost, "conselheiros/" + uuid.NewString() + "/inativar"},
		{http.MethodPost, "conselheiros/" + uuid.NewString() + "/reativar"},
	}
	cidadao := c.tokenDe(uuid.NewString(), nil)
	outroPapel := c.tokenDe("alguem", map[string]any{"papel": "conselheiro"})
	for _, r := range rotas {
		p := "/d6a/admin/" + r.caminho
		esperarStatus(t, c.http(r.metodo, p, "", justificativa("x")), 401, r.metodo+" "+p+" without token")
		esperarStatus(t, c.http(r.metodo, p, "nao.e.jwt", justificativa("x")), 401, r.metodo+" "+p+" malformed token")
		esperarStatus(t, c.http(r.metodo, p, cidadao+"x", justificativa("x")), 401, r.metodo+" "+p+" bad signature")
		esperarStatus(t, c.http(r.metodo, p, cidadao, justificativa("x")), 403, r.metodo+" "+p+" citizen token")
		esperarStatus(t, c.http(r.metodo, p, outroPapel, justificativa("x")), 403, r.metodo+" "+p+" other role")
	}
	r := c.admin(http.MethodGet, "parametros", nil)
	esperarStatus(t, r, 200, "GET parametros")
	v := r.obj(t)["vigente"].(map[string]any)
	must(t, v["versao"] == 1.0 && v["n_recusas_suspensao"] == 3.0 && v["t_suspensao_dias"] == 90.0 && v["timeout_resposta_horas"] == 72.0,
		"version 1 %v, want 3/90/72 from the environment", v)
	must(t, c.contar(`SELECT count(*) FROM d6a.acoes_administrativas`) == 0, "refused requests were journaled")
}

// D6A_ADMIN=false: the routes do not exist.
func TestAdmin_DesligadoSemRotas(t *testing.T) {
	t.Parallel()
	c := novaColonia(t, opcoes{})
	c.cfg.Admin = false
	c.iniciar()
	esperarStatus(t, c.admin(http.MethodGet, "parametros", nil), 404, "GET parametros with D6A_ADMIN=false")
	esperarStatus(t, c.admin(http.MethodPost, "conselheiros/"+uuid.NewString()+"/inativar", justificativa("x")), 404, "POST inativar with D6A_ADMIN=false")
}

// A manual timeout publishes the D-6a refusal on the bus; d6a consumes it
// back and re-draws the demand to the other counsellor (spec 3.12). A
// second timeout of the same assignment is 409; the journal names who, why
// and the event.
func TestAdmin_TimeoutResorteiaParaOutro(t *testing.T) {
	t.Parallel()
	c, bairro, a, b := coloniaComDupla(t)
	d, x := c.novaDemanda(bairro)
	must(t, x == a || x == b, "demand drawn to %v", x)
	sorteio := uuid.MustParse(h3eventoSorteio(c, x, d))

	c.clock.Avancar(80 * time.Hour)
	r := c.admin(http.MethodGet, "ocupados?mais_de=72h", nil)
	esperarStatus(t, r, 200, "GET ocupados")
	oc := r.obj(t)["ocupados"].([]any)
	must(t, len(oc) == 1, "ocupados %v, want the one assignment", oc)
	o := oc[0].(map[string]any)
	must(t, o["conselheiro_id"] == x.String() && o["event_id_sorteio"] == sorteio.String() && o["iniciada"] == false &&
		o["idade_horas"].(float64) >= 80, "ocupado %v", o)
	r = c.admin(http.MethodGet, "ocupados?mais_de=100h", nil)
	must(t, len(r.obj(t)["ocupados"].([]any)) == 0, "an 80 h assignment listed as older than 100 h")

	r = c.admin(http.MethodPost, "atribuicoes/"+sorteio.String()+"/timeout", justificativa("conselheiro não responde há 80 h"))
	esperarStatus(t, r, 202, "POST timeout")
	ev := uuidDe(t, r.obj(t)["event_id"])
	must(t, ev == atribuicao.IDTimeout(sorteio), "event_id %s, want the UUIDv5 of the assignment %s", ev, atribuicao.IDTimeout(sorteio))
	c.esperarProcessado(ev)

	st, enc := c.atribuicao(x, d)
	must(t, st == "recusada" && enc != nil && *enc == ev, "assignment %s closed by %v", st, enc)
	y := outro(x, a, b)
	must(t, c.ativa(d) == y, "demand re-drawn to %v, want %v", c.ativa(d), y)
	must(t, c.statusConselheiro(x) == "disponivel", "refuser %s", c.statusConselheiro(x))
	must(t, c.contar(`SELECT count(*) FROM d6a.contador_recusas WHERE evento_id_recusa = $1 AND conselheiro_id = $2`, ev, x) == 1,
		"timeout refusal not counted")

	pubs := porDemanda(c.publicados(evento.AtribuicaoRecusada), d)
	must(t, len(pubs) == 1, "%d refusals on the bus, want 1", len(pubs))
	p := pubs[0]
	must(t, p["event_id"] == ev.String() && p["_h_Nats-Msg-Id"] == ev.String() && p["origem"] == "D-6a" && p["versao_schema"] == "1.0.0",
		"refusal envelope %v", p)
	pl := payloadDe(p)
	must(t, pl["motivo"] == "timeout_resposta" && pl["conselheiro_id"] == x.String() && pl["unidade_civica_id"] == bairro.String(), "payload %v", pl)

	esperarStatus(t, c.admin(http.MethodPost, "atribuicoes/"+sorteio.String()+"/timeout", justificativa("de novo")), 409, "second timeout")
	esperarStatus(t, c.admin(http.MethodPost, "atribuicoes/"+uuid.NewString()+"/timeout", justificativa("x")), 404, "unknown assignment")

	r = c.admin(http.MethodGet, "acoes", nil)
	esperarStatus(t, r, 200, "GET acoes")
	acoes := r.obj(t)["acoes"].([]any)
	must(t, len(acoes) == 1, "journal %v, want the one timeout", acoes)
	ac := acoes[0].(map[string]any)
	must(t, ac["sub"] == "operador-1" && ac["acao"] == "timeout" && ac["alvo"] == sorteio.String() &&
		ac["justificativa"] == "conselheiro não responde há 80 h" && ac["event_id"] == ev.String() && ac["criado_em"] != nil, "journal row %v", ac)
	c.semDLQ()
}

// The timeout refusal counts toward suspension exactly as spec 3.12 says:
// the fourth consecutive one suspends for 90 days (N = 3, strict >); the
// suspension records the parameter version.
func TestAdmin_TimeoutContaParaSuspensao(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	a := c.novoConselheiro(bairro)
	for i := 1; i <= 4; i++ {
		d, s := c.novaDemanda(bairro)
		must(t, s == a, "demand %d drawn to %v", i, s)
		r := c.admin(http.MethodPost, "atribuicoes/"+h3eventoSorteio(c, a, d)+"/timeout", justificativa(fmt.Sprintf("timeout %d", i)))
		esperarStatus(t, r, 202, "timeout")
		c.esperarProcessado(uuidDe(t, r.obj(t)["event_id"]))
		must(t, h2Pendente(c, d), "demand %d not pending after the re-draw found nobody", i)
		want := "disponivel"
		if i == 4 {
			want = "suspenso"
		}
		must(t, c.statusConselheiro(a) == want, "after timeout %d: %s, want %s", i, c.statusConselheiro(a), want)
	}
	var n, versao int
	var ate time.Time
	_ = c.pool.QueryRow(t.Context(), `SELECT recusas_consecutivas, versao_parametros, data_suspensao_ate FROM d6a.suspensoes WHERE conselheiro_id = $1`, a).Scan(&n, &versao, &ate)
	must(t, n == 4 && versao == 1, "suspension row: %d refusals, version %d", n, versao)
	want := c.agora().Add(90 * 24 * time.Hour)
	must(t, ate.Sub(want).Abs() < time.Minute, "suspended until %s, want ≈ %s", ate, want)
	must(t, c.contar(`SELECT max(recusas_consecutivas) FROM d6a.contador_recusas WHERE conselheiro_id = $1`, a) == 4, "counter")
}

// A new parameter version applies from the next refusal on; the history
// keeps the old version and the earlier suspension keeps its version; draw
// audit records carry the version in force.
func TestAdmin_ParametrosValemDaProximaRecusa(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	a := c.novoConselheiro(bairro)
	d1, _ := c.novaDemanda(bairro)
	c.processar(evento.AtribuicaoRecusada, "1.1.0", recusa(a, d1, bairro, "recusa_explicita"))
	must(t, c.statusConselheiro(a) == "disponivel", "one refusal under N=3 suspended")
	must(t, c.contar(`SELECT count(*) FROM d6a.auditoria_sorteios WHERE versao_parametros = 1`) == 1, "draw audit without version 1")

	r := c.admin(http.MethodPost, "parametros", map[string]any{
		"n_recusas_suspensao": 1, "t_suspensao_dias": 10, "timeout_resposta_horas": 24, "justificativa": "piloto com regra mais dura",
	})
	esperarStatus(t, r, 201, "POST parametros")
	must(t, r.obj(t)["versao"] == 2.0, "new version %v", r.obj(t))

	// Second refusal: 2 > 1 under version 2.
	d2, s2 := c.novaDemanda(bairro)
	must(t, s2 == a, "d2 drawn to %v", s2)
	must(t, c.contar(`SELECT count(*) FROM d6a.auditoria_sorteios WHERE versao_parametros = 2`) == 1, "draw after the change not audited with version 2")
	antes := c.agora()
	c.processar(evento.AtribuicaoRecusada, "1.1.0", recusa(a, d2, bairro, "recusa_explicita"))
	must(t, c.statusConselheiro(a) == "suspenso", "second refusal under N=1: %s", c.statusConselheiro(a))
	var versao int
	var ate time.Time
	_ = c.pool.QueryRow(t.Context(), `SELECT versao_parametros, data_suspensao_ate FROM d6a.suspensoes WHERE conselheiro_id = $1`, a).Scan(&versao, &ate)
	must(t, versao == 2, "suspension under version %d, want 2", versao)
	must(t, ate.Sub(antes.Add(10*24*time.Hour)).Abs() < time.Minute, "suspended until %s, want 10 days", ate)

	r = c.admin(http.MethodGet, "parametros", nil)
	hist := r.obj(t)["historico"].([]any)
	must(t, len(hist) == 2, "history %v", hist)
	v1, v2 := hist[0].(map[string]any), hist[1].(map[string]any)
	must(t, v1["versao"] == 1.0 && v1["n_recusas_suspensao"] == 3.0 && v1["t_suspensao_dias"] == 90.0 && v1["sub"] == "ambiente", "version 1 changed: %v", v1)
	must(t, v2["versao"] == 2.0 && v2["sub"] == "operador-1" && v2["justificativa"] == "piloto com regra mais dura", "version 2 %v", v2)
	must(t, r.obj(t)["vigente"].(map[string]any)["versao"] == 2.0, "in force %v", r.obj(t)["vigente"])
	must(t, c.contar(`SELECT count(*) FROM d6a.acoes_administrativas WHERE acao = 'parametros'`) == 1, "parameter change not journaled")
}

// inativo → reactivation → eligible again (spec 4.6: administrative, the
// only way in and out).
func TestAdmin_InativoReativacaoElegivel(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	a := c.novoConselheiro(bairro)

	r := c.admin(http.MethodPost, "conselheiros/"+a.String()+"/inativar", justificativa("afastado a pedido"))
	esperarStatus(t, r, 200, "inativar")
	must(t, r.obj(t)["status"] == "inativo" && r.obj(t)["status_anterior"] == "disponivel", "answer %s", r.body)
	must(t, c.statusConselheiro(a) == "inativo", "status %s", c.statusConselheiro(a))
	esperarStatus(t, c.admin(http.MethodPost, "conselheiros/"+a.String()+"/inativar", justificativa("de novo")), 409, "inativar twice")

	d, s := c.novaDemanda(bairro)
	must(t, s == uuid.Nil && h2Pendente(c, d), "an inativo counsellor was drawn")
	// No event moves him out of inativo (spec 4.6).
	c.processar(evento.CicloConcluido, "1.0.0", ciclo(a, uuid.New(), bairro))
	must(t, c.statusConselheiro(a) == "inativo", "a cycle moved inativo to %s", c.statusConselheiro(a))

	r = c.admin(http.MethodGet, "fila?uc="+bairro.String(), nil)
	esperarStatus(t, r, 200, "GET fila")
	fila := r.obj(t)["pendentes"].([]any)
	must(t, len(fila) >= 1 && fila[0].(map[string]any)["demanda_id"] == d.String() && fila[0].(map[string]any)["tentativas_sorteio"].(float64) >= 1, "fila %v", fila)
	must(t, len(c.admin(http.MethodGet, "fila?uc="+uuid.NewString(), nil).obj(t)["pendentes"].([]any)) == 0, "fila of another unit not empty")

	r = c.admin(http.MethodPost, "conselheiros/"+a.String()+"/reativar", justificativa("voltou"))
	esperarStatus(t, r, 200, "reativar")
	must(t, r.obj(t)["status"] == "disponivel", "answer %s", r.body)
	// The sweep draws when its trigger comes back from the bus.
	c.eventually("the pending demand drawn to the reactivated counsellor", func() bool { return c.ativa(d) == a })
	c.esperarOutboxVazio()
	esperarStatus(t, c.admin(http.MethodPost, "conselheiros/"+a.String()+"/reativar", justificativa("de novo")), 409, "reativar a non-inativo")
	// Occupied: the operator times the assignment out first.
	esperarStatus(t, c.admin(http.MethodPost, "conselheiros/"+a.String()+"/inativar", justificativa("x")), 409, "inativar an occupied counsellor")
	esperarStatus(t, c.admin(http.MethodPost, "conselheiros/"+uuid.NewString()+"/inativar", justificativa("x")), 404, "unknown counsellor")
	must(t, c.contar(`SELECT count(*) FROM d6a.acoes_administrativas`) == 2, "journal: want inativar and reativar only")
}

// "Draw now" runs the sweep's draw for one pending demand.
func TestAdmin_SortearPendente(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	d, _ := c.novaDemanda(bairro)
	r := c.admin(http.MethodPost, "fila/"+d.String()+"/sortear", justificativa("tentar de novo"))
	esperarStatus(t, r, 200, "sortear with nobody")
	must(t, r.obj(t)["sorteado"] == false && r.obj(t)["tentativas_sorteio"] == 2.0, "answer %s", r.body)

	// A counsellor the sweeps did not see (written by hand, as a repair
	// would leave it).
	a := uuid.New()
	c.exec(`INSERT INTO d6a.conselheiros (id, cidadao_id, unidade_civica_id, status, capacitacao_concluida, event_id_cadastro, event_id_ultima_alteracao)
	        VALUES ($1, $1, $2, 'disponivel', true, $3, $3)`, a, bairro, uuid.New())
	r = c.admin(http.MethodPost, "fila/"+d.String()+"/sortear", justificativa("conselheiro disponível"))
	esperarStatus(t, r, 200, "sortear")
	o := r.obj(t)
	must(t, o["sorteado"] == true && o["conselheiro_id"] == a.String(), "answer %s", r.body)
	c.esperarOutboxVazio()
	must(t, c.ativa(d) == a && !h2Pendente(c, d), "demand not assigned or still pending")
	must(t, len(porDemanda(c.publicados(evento.ConselheiroSorteado), d)) == 1, "conselheiro.sorteado not published once")
	esperarStatus(t, c.admin(http.MethodPost, "fila/"+d.String()+"/sortear", justificativa("x")), 404, "sortear a demand not pending")
	var ev string
	_ = c.pool.QueryRow(t.Context(), `SELECT event_id::text FROM d6a.acoes_administrativas WHERE acao = 'sortear' AND event_id IS NOT NULL ORDER BY id DESC LIMIT 1`).Scan(&ev)
	// The journal names the draw's trigger, the d6a.varredura the console
	// published; the draw's seed follows it (CONTRACT §4).
	var base string
	_ = c.pool.QueryRow(t.Context(), `SELECT base FROM d6a.auditoria_sorteios WHERE event_id_sorteio::text = $1`, o["event_id_sorteio"]).Scan(&base)
	must(t, ev != "" && ev == base, "journal event %q, want the draw's trigger %q", ev, base)
	must(t, len(c.lerStream(c.cfg.Stream, evento.Varredura.Subject(c.cfg.SubjectPrefix))) >= 2, "the console's triggers are not on the bus")
}

// Bad input gets a 4xx with {"erro"} and changes nothing.
func TestAdmin_EntradaRuimNaoMudaNada(t *testing.T) {
	t.Parallel()
	c, bairro, a, _ := coloniaComDupla(t)
	d, x := c.novaDemanda(bairro)
	sorteio := h3eventoSorteio(c, x, d)
	antes := admHashes(c)
	casos := []struct {
		metodo, caminho string
		corpo           any
		status          int
	}{
		{http.MethodPost, "atribuicoes/nao-uuid/timeout", justificativa("x"), 400},
		{http.MethodPost, "atribuicoes/" + strings.ToUpper(sorteio)[:35] + "/timeout", justificativa("x"), 400},
		{http.MethodPost, "atribuicoes/" + sorteio + "/timeout", justificativa(""), 400},
		{http.MethodPost, "atribuicoes/" + sorteio + "/timeout", justificativa("   "), 400},
		{http.MethodPost, "atribuicoes/" + sorteio + "/timeout", nil, 400},
		{http.MethodPost, "atribuicoes/" + sorteio + "/timeout", `{"justificativa": "x"`, 400},
		{http.MethodPost, "atribuicoes/" + sorteio + "/timeout", `["x"]`, 400},
		{http.MethodPost, "atribuicoes/" + sorteio + "/timeout", `{"justificativa": 7}`, 400},
		{http.MethodPost, "atribuicoes/" + sorteio + "/timeout", `{"justificativa": "x", "extra": 1}`, 400},
		{http.MethodPost, "atribuicoes/" + sorteio + "/timeout", `{"justificativa": "x"} {}`, 400},
		{http.MethodPost, "atribuicoes/" + uuid.NewString() + "/timeout", justificativa("x"), 404},
		{http.MethodPost, "conselheiros/" + a.String() + "x/inativar", justificativa("x"), 400},
		{http.MethodPost, "conselheiros/" + a.String() + "/inativar", justificativa(""), 400},
		{http.MethodPost, "conselheiros/" + uuid.NewString() + "/reativar", justificativa("x"), 404},
		{http.MethodPost, "fila/zzz/sortear", justificativa("x"), 400},
		{http.MethodPost, "fila/" + uuid.NewString() + "/sortear", justificativa("x"), 404},
		{http.MethodPost, "parametros", map[string]any{"n_recusas_suspensao": 1, "t_suspensao_dias": 10, "timeout_resposta_horas": 24, "justificativa": ""}, 400},
		{http.MethodPost, "parametros", map[string]any{"n_recusas_suspensao": 1, "t_suspensao_dias": 10, "justificativa": "x"}, 400},
		{http.MethodPost, "parametros", map[string]any{"n_recusas_suspensao": -1, "t_suspensao_dias": 10, "timeout_resposta_horas": 24, "justificativa": "x"}, 400},
		{http.MethodPost, "parametros", map[string]any{"n_recusas_suspensao": 1, "t_suspensao_dias": 0, "timeout_resposta_horas": 24, "justificativa": "x"}, 400},
		{http.MethodPost, "parametros", map[string]any{"n_recusas_suspensao": 1, "t_suspensao_dias": 10, "timeout_resposta_horas": 0, "justificativa": "x"}, 400},
		{http.MethodPost, "parametros", map[string]any{"n_recusas_suspensao": 1.5, "t_suspensao_dias": 10, "timeout_resposta_horas": 24, "justificativa": "x"}, 400},
		{http.MethodGet, "ocupados?mais_de=ontem", nil, 400},
		{http.MethodGet, "ocupados?mais_de=-3h", nil, 400},
		{http.MethodGet, "fila?uc=123", nil, 400},
		{http.MethodGet, "acoes?limite=0", nil, 400},
		{http.MethodGet, "acoes?depois_de=x", nil, 400},
	}
	for _, k := range casos {
		r := c.admin(k.metodo, k.caminho, k.corpo)
		esperarStatus(t, r, k.status, fmt.Sprintf("%s %s %.60v", k.metodo, k.caminho, k.corpo))
	}
	// Over 1 MiB: 413 from the declared length, before the body is read.
	esperarStatus(t, c.corpoGrande("/d6a/admin/atribuicoes/"+sorteio+"/timeout", 1<<20+1), 413, "body over 1 MiB")
	depois := admHashes(c)
	must(t, maps.Equal(antes, depois), "bad input changed the database:\nbefore %v\nafter  %v", antes, depois)
	must(t, c.ativa(d) == x, "assignment moved")
}
