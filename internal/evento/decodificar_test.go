package evento

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
)

const (
	idEvento  = "6f1c2a51-6b0e-4a44-9d0b-6f2a1f3e9c10"
	idDemanda = "8d3c2a51-6b0e-4a44-9d0b-6f2a1f3e9c11"
	idUC      = "0f6e6d1a-1111-4c1b-9a6a-000000000001"
	idPessoa  = "a0000000-0000-4000-8000-000000000001"
	idOutro   = "c0000000-0000-4000-8000-000000000002"
)

// payloadsValidos holds one valid payload per consumed type.
func payloadsValidos() map[Tipo]map[string]any {
	return map[Tipo]map[string]any{
		AgendaItemDisponivel: {
			"demanda_id": idDemanda, "unidade_civica_id": idUC, "posicao_no_backlog": 1,
			"score_final": 87.5, "categoria_id": "SAU", "nivel_precedencia": 2,
			"grupo_id": nil, "timestamp": "2026-11-29T14:03:07.123Z",
		},
		ConselheiroCadastrado: {
			"conselheiro_id": idOutro, "cidadao_id": idPessoa, "unidade_civica_id": idUC,
			"nivel_atuacao": 3, "status": "disponivel", "capacitacao_concluida": true,
		},
		CicloConcluido: {
			"conselheiro_id": idPessoa, "demanda_id": idDemanda, "unidade_civica_id": idUC,
			"motivo_encerramento": "demanda_concluida", "total_atualizacoes": 4,
			"data_inicio": "2026-01-01T00:00:00Z", "data_fim": "2026-02-01T00:00:00Z",
		},
		AtribuicaoRecusada: {
			"conselheiro_id": idPessoa, "demanda_id": idDemanda, "unidade_civica_id": idUC,
			"motivo": "risco_pessoal", "timestamp": "2026-11-29T14:03:07.123Z",
		},
		ElegibilidadeAtualizada: {"unidade_civica_id": idUC, "versao_parametros": "2"},
		DuplicidadeAgregada: {
			"agregado_id": idOutro, "representante_demanda_id": idDemanda,
			"membros":   []any{map[string]any{"demanda_id": idPessoa}, map[string]any{"demanda_id": idUC}},
			"mecanismo": "confirmacao_coletiva", "confirmacoes_gatilho": 3, "criterios": map[string]any{},
		},
		DemandaIniciada: {
			"conselheiro_id": idPessoa, "demanda_id": idDemanda, "timestamp": "2026-11-29T14:03:07.123Z", "canal": "app",
		},
		SuspensaoExpirada: {
			"conselheiro_id": idPessoa, "data_suspensao_ate": "2026-11-29T14:03:07.123Z", "timestamp": "2026-11-29T14:03:07.123Z",
		},
		Varredura: {
			"demanda_id": idDemanda, "unidade_civica_id": nil, "acao": "boot", "timestamp": "2026-11-29T14:03:07.123Z",
		},
		CapacitacaoConcluida: {"conselheiro_id": idPessoa, "curso_id": "basico-1", "concluida_em": "2026-11-29T14:03:07.123Z"},
		VinculoValidado: {
			"conselheiro_id": idPessoa, "unidade_civica_id": idUC, "valido": true, "validado_em": "2026-11-29T14:03:07.123Z",
		},
		ProgressaoHabilitada: {"conselheiro_id": idPessoa, "unidade_civica_id": idUC, "nivel_atuacao": 4},
	}
}

func envelope(tipo Tipo, payload any) map[string]any {
	versao := "1.0.0"
	if tipo == ConselheiroCadastrado || tipo == AtribuicaoRecusada {
		versao = "1.1.0"
	}
	return map[string]any{
		"event_id": idEvento, "tipo": string(tipo), "origem": "D-5", "versao_schema": versao,
		"correlacao_id": nil, "timestamp": "2026-11-29T14:03:07.123Z", "payload": payload,
	}
}

func codificar(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mudar returns the valid envelope of tipo with f applied to the envelope
// and its payload.
func mudar(t testing.TB, tipo Tipo, f func(env, p map[string]any)) []byte {
	p := payloadsValidos()[tipo]
	env := envelope(tipo, p)
	f(env, p)
	return codificar(t, env)
}

func TestDecodificarValidos(t *testing.T) {
	for _, tipo := range Consumidos {
		t.Run(tipo.ASCII(), func(t *testing.T) {
			ev, err := Decodificar(tipo, mudar(t, tipo, func(env, p map[string]any) {}))
			if err != nil {
				t.Fatalf("Decodificar: %v", err)
			}
			if ev.EventID.String() != idEvento || ev.Tipo != tipo || ev.Origem != "D-5" || ev.CorrelacaoID != nil {
				t.Fatalf("envelope = %+v", ev.Envelope)
			}
			if len(ev.Envelope.Payload) == 0 || ev.Payload == nil {
				t.Fatal("payload missing")
			}
		})
	}

	ev, err := Decodificar(AgendaItemDisponivel, mudar(t, AgendaItemDisponivel, func(env, p map[string]any) {
		env["tipo"] = "agenda.item_disponivel" // without diacritics
		env["correlacao_id"] = "corr-1"
		env["extra"] = []int{1, 2}
		p["grupo_id"] = idOutro
	}))
	if err != nil {
		t.Fatal(err)
	}
	a, ok := ev.AgendaItemDisponivel()
	if !ok || a.DemandaID.String() != idDemanda || a.UnidadeCivicaID.String() != idUC ||
		a.CategoriaID != "SAU" || a.NivelPrecedencia != 2 || a.ScoreFinal != 87.5 ||
		a.GrupoID == nil || a.GrupoID.String() != idOutro || a.PosicaoNoBacklog == nil || *a.PosicaoNoBacklog != 1 {
		t.Fatalf("agenda payload = %+v", a)
	}
	if ev.Tipo != AgendaItemDisponivel || ev.CorrelacaoID == nil || *ev.CorrelacaoID != "corr-1" {
		t.Fatalf("envelope = %+v", ev.Envelope)
	}

	// Optional fields absent: defaults of spec 3.1, 3.2, 3.4 and 3.6.
	ev, err = Decodificar(AgendaItemDisponivel, mudar(t, AgendaItemDisponivel, func(env, p map[string]any) {
		delete(p, "score_final")
		delete(p, "grupo_id")
		delete(p, "posicao_no_backlog")
		delete(env, "correlacao_id")
		delete(env, "origem")
	}))
	if a, _ := ev.AgendaItemDisponivel(); err != nil || a.ScoreFinal != 0 || a.GrupoID != nil || a.PosicaoNoBacklog != nil {
		t.Fatalf("defaults: %+v, %v", a, err)
	}
	ev, err = Decodificar(ConselheiroCadastrado, mudar(t, ConselheiroCadastrado, func(env, p map[string]any) {
		env["versao_schema"] = "1.0.0"
		delete(p, "capacitacao_concluida")
		delete(p, "nivel_atuacao")
		delete(p, "status")
	}))
	c, _ := ev.ConselheiroCadastrado()
	if err != nil || !c.CapacitacaoConcluida || c.NivelAtuacao != 1 || c.Status != "disponivel" ||
		c.CidadaoID.String() != idPessoa || c.ConselheiroID.String() != idOutro {
		t.Fatalf("cadastro defaults: %+v, %v", c, err)
	}
	ev, err = Decodificar(ConselheiroCadastrado, mudar(t, ConselheiroCadastrado, func(env, p map[string]any) {
		p["capacitacao_concluida"] = false
	}))
	if c, _ := ev.ConselheiroCadastrado(); err != nil || c.CapacitacaoConcluida || c.NivelAtuacao != 3 {
		t.Fatalf("cadastro: %+v, %v", c, err)
	}
	ev, err = Decodificar(Tipo(CicloConcluido.ASCII()), mudar(t, CicloConcluido, func(env, p map[string]any) {
		env["tipo"] = "conselheiro.ciclo_concluido"
		delete(p, "unidade_civica_id")
	}))
	if cc, _ := ev.CicloConcluido(); err != nil || ev.Tipo != CicloConcluido || cc.UnidadeCivicaID != nil || cc.MotivoEncerramento != "demanda_concluida" {
		t.Fatalf("ciclo: %+v, %v", cc, err)
	}
	ev, err = Decodificar(AtribuicaoRecusada, mudar(t, AtribuicaoRecusada, func(env, p map[string]any) {
		delete(p, "motivo")
	}))
	if r, _ := ev.AtribuicaoRecusada(); err != nil || r.Motivo != RecusaExplicita || r.UnidadeCivicaID.String() != idUC {
		t.Fatalf("recusa: %+v, %v", r, err)
	}
	ev, err = Decodificar(DuplicidadeAgregada, mudar(t, DuplicidadeAgregada, func(env, p map[string]any) {}))
	if d, _ := ev.DuplicidadeAgregada(); err != nil || len(d.Membros) != 2 || d.Membros[0].String() != idPessoa ||
		d.RepresentanteDemandaID.String() != idDemanda {
		t.Fatalf("duplicidade: %+v, %v", d, err)
	}
	ev, err = Decodificar(DuplicidadeAgregada, mudar(t, DuplicidadeAgregada, func(env, p map[string]any) { delete(p, "membros") }))
	if d, _ := ev.DuplicidadeAgregada(); err != nil || d.Membros == nil || len(d.Membros) != 0 {
		t.Fatalf("duplicidade sem membros: %+v, %v", d, err)
	}
	ev, err = Decodificar(ElegibilidadeAtualizada, mudar(t, ElegibilidadeAtualizada, func(env, p map[string]any) {}))
	if e, ok := ev.ElegibilidadeAtualizada(); err != nil || !ok || e.VersaoParametros != "2" || e.UnidadeCivicaID.String() != idUC {
		t.Fatalf("elegibilidade: %+v, %v", ev.Payload, err)
	}
	ev, err = Decodificar(CapacitacaoConcluida, mudar(t, CapacitacaoConcluida, func(env, p map[string]any) { env["tipo"] = "capacitacao.concluida" }))
	if k, ok := ev.CapacitacaoConcluida(); err != nil || !ok || k.CursoID != "basico-1" || k.ConselheiroID.String() != idPessoa {
		t.Fatalf("capacitação: %+v, %v", ev.Payload, err)
	}
	ev, err = Decodificar(VinculoValidado, mudar(t, VinculoValidado, func(env, p map[string]any) { p["valido"] = false; delete(p, "validado_em") }))
	if v, ok := ev.VinculoValidado(); err != nil || !ok || v.Valido || v.UnidadeCivicaID.String() != idUC {
		t.Fatalf("vínculo: %+v, %v", ev.Payload, err)
	}
	ev, err = Decodificar(ProgressaoHabilitada, mudar(t, ProgressaoHabilitada, func(env, p map[string]any) {}))
	if g, ok := ev.ProgressaoHabilitada(); err != nil || !ok || g.NivelAtuacao != 4 {
		t.Fatalf("progressão: %+v, %v", ev.Payload, err)
	}
	// A published type decodes with its raw payload (used by tests and tools).
	ev, err = Decodificar(ConselheiroSorteado, codificar(t, envelope(ConselheiroSorteado, map[string]any{"x": 1})))
	if raw, ok := ev.Payload.(json.RawMessage); err != nil || !ok || string(raw) != `{"x":1}` {
		t.Fatalf("sorteado: %#v, %v", ev.Payload, err)
	}
}

func TestDecodificarInutilizaveis(t *testing.T) {
	type caso struct {
		nome   string
		tipo   Tipo
		data   []byte
		motivo string
	}
	var casos []caso
	add := func(nome string, tipo Tipo, motivo string, f func(env, p map[string]any)) {
		casos = append(casos, caso{nome, tipo, mudar(t, tipo, f), motivo})
	}
	raw := func(nome string, tipo Tipo, motivo, data string) {
		casos = append(casos, caso{nome, tipo, []byte(data), motivo})
	}

	// Envelope (CONTRACT §3), checked on one type: the code is shared.
	raw("vazio", AgendaItemDisponivel, "não é um objeto JSON", "")
	raw("lista", AgendaItemDisponivel, "não é um objeto JSON", `[1,2]`)
	raw("null", AgendaItemDisponivel, "não é um objeto JSON", `null`)
	raw("truncado", AgendaItemDisponivel, "não é um objeto JSON", `{"event_id":`)
	raw("lixo depois", AgendaItemDisponivel, "não é um objeto JSON", `{} x`)
	raw("utf8 inválido", AgendaItemDisponivel, "UTF-8", "{\"tipo\":\"\xff\"}")
	raw("grande", AgendaItemDisponivel, "64 KiB", `{"x":"`+strings.Repeat("a", TamanhoMaximo)+`"}`)
	raw("aninhado", AgendaItemDisponivel, "não é um objeto JSON", strings.Repeat(`{"a":`, 10001)+strings.Repeat("}", 10001))
	raw("subject desconhecido", Tipo("x.y"), "tipo do subject desconhecido", `{}`)
	add("sem tipo", AgendaItemDisponivel, "tipo ausente", func(env, p map[string]any) { delete(env, "tipo") })
	add("tipo número", AgendaItemDisponivel, "tipo não é string", func(env, p map[string]any) { env["tipo"] = 1 })
	add("tipo de outro subject", AgendaItemDisponivel, "não corresponde ao subject", func(env, p map[string]any) { env["tipo"] = string(CicloConcluido) })
	add("tipo desconhecido", AgendaItemDisponivel, "não corresponde ao subject", func(env, p map[string]any) { env["tipo"] = "agenda.outra" })
	add("sem event_id", AgendaItemDisponivel, "event_id ausente", func(env, p map[string]any) { delete(env, "event_id") })
	add("event_id null", AgendaItemDisponivel, "event_id ausente", func(env, p map[string]any) { env["event_id"] = nil })
	add("event_id não uuid", AgendaItemDisponivel, "event_id não é UUID", func(env, p map[string]any) { env["event_id"] = "abc" })
	add("event_id chaves", AgendaItemDisponivel, "event_id não é UUID", func(env, p map[string]any) { env["event_id"] = "{" + idEvento + "}" })
	add("event_id nulo", AgendaItemDisponivel, "event_id não é UUID", func(env, p map[string]any) { env["event_id"] = uuid.Nil.String() })
	add("event_id com NUL", AgendaItemDisponivel, "event_id contém NUL", func(env, p map[string]any) { env["event_id"] = idEvento[:35] + "\x00" })
	add("Event_ID maiúsculo", AgendaItemDisponivel, "event_id ausente", func(env, p map[string]any) { env["Event_ID"] = env["event_id"]; delete(env, "event_id") })
	add("sem versão", AgendaItemDisponivel, "versao_schema ausente", func(env, p map[string]any) { delete(env, "versao_schema") })
	add("versão desconhecida", AgendaItemDisponivel, "versao_schema \"1.1.0\" desconhecida", func(env, p map[string]any) { env["versao_schema"] = "1.1.0" })
	add("versão 2 cadastro", ConselheiroCadastrado, "versao_schema \"2.0.0\" desconhecida", func(env, p map[string]any) { env["versao_schema"] = "2.0.0" })
	add("correlação número", AgendaItemDisponivel, "correlacao_id não é string", func(env, p map[string]any) { env["correlacao_id"] = 7 })
	add("correlação objeto", AgendaItemDisponivel, "correlacao_id não é string", func(env, p map[string]any) { env["correlacao_id"] = map[string]any{} })
	add("sem payload", AgendaItemDisponivel, "payload ausente", func(env, p map[string]any) { delete(env, "payload") })
	add("payload lista", AgendaItemDisponivel, "payload não é objeto", func(env, p map[string]any) { env["payload"] = []any{} })
	add("payload string", AgendaItemDisponivel, "payload não é objeto", func(env, p map[string]any) { env["payload"] = "{}" })

	// CONTRACT §8, the phase-2 inputs.
	add("elegibilidade sem uc", ElegibilidadeAtualizada, "payload.unidade_civica_id ausente", func(env, p map[string]any) { delete(p, "unidade_civica_id") })
	add("elegibilidade sem versão", ElegibilidadeAtualizada, "payload.versao_parametros ausente", func(env, p map[string]any) { delete(p, "versao_parametros") })
	add("elegibilidade versão número", ElegibilidadeAtualizada, "payload.versao_parametros não é string", func(env, p map[string]any) { p["versao_parametros"] = 2 })
	add("capacitação sem id", CapacitacaoConcluida, "payload.conselheiro_id ausente", func(env, p map[string]any) { delete(p, "conselheiro_id") })
	add("capacitação id não uuid", CapacitacaoConcluida, "payload.conselheiro_id não é UUID", func(env, p map[string]any) { p["conselheiro_id"] = "x" })
	add("capacitação sem curso", CapacitacaoConcluida, "payload.curso_id ausente", func(env, p map[string]any) { delete(p, "curso_id") })
	add("capacitação sem data", CapacitacaoConcluida, "payload.concluida_em ausente", func(env, p map[string]any) { delete(p, "concluida_em") })
	add("vínculo sem id", VinculoValidado, "payload.conselheiro_id ausente", func(env, p map[string]any) { delete(p, "conselheiro_id") })
	add("vínculo sem uc", VinculoValidado, "payload.unidade_civica_id ausente", func(env, p map[string]any) { delete(p, "unidade_civica_id") })
	add("vínculo uc não uuid", VinculoValidado, "payload.unidade_civica_id não é UUID", func(env, p map[string]any) { p["unidade_civica_id"] = "uc-1" })
	add("vínculo valido string", VinculoValidado, "payload.valido não é booleano", func(env, p map[string]any) { p["valido"] = "true" })
	add("vínculo sem valido", VinculoValidado, "payload.valido ausente", func(env, p map[string]any) { delete(p, "valido") })
	add("progressão sem uc", ProgressaoHabilitada, "payload.unidade_civica_id ausente", func(env, p map[string]any) { delete(p, "unidade_civica_id") })
	add("progressão nível 0", ProgressaoHabilitada, "payload.nivel_atuacao fora de 1..7", func(env, p map[string]any) { p["nivel_atuacao"] = 0 })
	add("progressão nível 8", ProgressaoHabilitada, "payload.nivel_atuacao fora de 1..7", func(env, p map[string]any) { p["nivel_atuacao"] = 8 })
	add("progressão sem nível", ProgressaoHabilitada, "payload.nivel_atuacao ausente", func(env, p map[string]any) { delete(p, "nivel_atuacao") })

	// spec 3.1
	for _, f := range []string{"demanda_id", "unidade_civica_id", "categoria_id", "nivel_precedencia"} {
		add("agenda sem "+f, AgendaItemDisponivel, "payload."+f+" ausente", func(env, p map[string]any) { delete(p, f) })
	}
	add("agenda demanda número", AgendaItemDisponivel, "payload.demanda_id não é string", func(env, p map[string]any) { p["demanda_id"] = 12 })
	add("agenda uc não uuid", AgendaItemDisponivel, "payload.unidade_civica_id não é UUID", func(env, p map[string]any) { p["unidade_civica_id"] = "uc-1" })
	add("agenda categoria longa", AgendaItemDisponivel, "categoria_id com mais de 10", func(env, p map[string]any) { p["categoria_id"] = "ABCDEFGHIJK" })
	add("agenda categoria vazia", AgendaItemDisponivel, "payload.categoria_id ausente", func(env, p map[string]any) { p["categoria_id"] = "" })
	add("agenda categoria número", AgendaItemDisponivel, "payload.categoria_id não é string", func(env, p map[string]any) { p["categoria_id"] = 3 })
	add("agenda categoria NUL", AgendaItemDisponivel, "payload.categoria_id contém NUL", func(env, p map[string]any) { p["categoria_id"] = "a\x00b" })
	add("agenda nível string", AgendaItemDisponivel, "payload.nivel_precedencia não é número", func(env, p map[string]any) { p["nivel_precedencia"] = "2" })
	add("agenda nível fração", AgendaItemDisponivel, "payload.nivel_precedencia não é inteiro", func(env, p map[string]any) { p["nivel_precedencia"] = 2.5 })
	add("agenda nível 0", AgendaItemDisponivel, "payload.nivel_precedencia fora de 1..5", func(env, p map[string]any) { p["nivel_precedencia"] = 0 })
	add("agenda nível 6", AgendaItemDisponivel, "payload.nivel_precedencia fora de 1..5", func(env, p map[string]any) { p["nivel_precedencia"] = 6 })
	add("agenda nível enorme", AgendaItemDisponivel, "payload.nivel_precedencia fora do intervalo", func(env, p map[string]any) { p["nivel_precedencia"] = json.Number("99999999999999999999999") })
	add("agenda score string", AgendaItemDisponivel, "payload.score_final não é número", func(env, p map[string]any) { p["score_final"] = "1.5" })
	add("agenda score enorme", AgendaItemDisponivel, "payload.score_final fora do intervalo", func(env, p map[string]any) { p["score_final"] = json.Number("1e400") })
	add("agenda score grande", AgendaItemDisponivel, "NUMERIC(12,2)", func(env, p map[string]any) { p["score_final"] = 1e10 })
	add("agenda score arredonda", AgendaItemDisponivel, "NUMERIC(12,2)", func(env, p map[string]any) { p["score_final"] = 9999999999.996 })
	add("agenda grupo não uuid", AgendaItemDisponivel, "payload.grupo_id não é UUID", func(env, p map[string]any) { p["grupo_id"] = "g" })
	add("agenda posição string", AgendaItemDisponivel, "payload.posicao_no_backlog não é número", func(env, p map[string]any) { p["posicao_no_backlog"] = "1" })

	// spec 3.2
	for _, f := range []string{"conselheiro_id", "cidadao_id", "unidade_civica_id"} {
		add("cadastro sem "+f, ConselheiroCadastrado, "payload."+f+" ausente", func(env, p map[string]any) { delete(p, f) })
		add("cadastro "+f+" inválido", ConselheiroCadastrado, "payload."+f+" não é UUID", func(env, p map[string]any) { p[f] = "x" })
	}
	add("cadastro nível 8", ConselheiroCadastrado, "payload.nivel_atuacao fora de 1..7", func(env, p map[string]any) { p["nivel_atuacao"] = 8 })
	add("cadastro nível bool", ConselheiroCadastrado, "payload.nivel_atuacao não é número", func(env, p map[string]any) { p["nivel_atuacao"] = true })
	add("cadastro capacitação string", ConselheiroCadastrado, "payload.capacitacao_concluida não é booleano", func(env, p map[string]any) { p["capacitacao_concluida"] = "true" })
	add("cadastro status número", ConselheiroCadastrado, "payload.status não é string", func(env, p map[string]any) { p["status"] = 1 })
	add("cadastro status longo", ConselheiroCadastrado, "payload.status com mais de 20", func(env, p map[string]any) { p["status"] = strings.Repeat("x", 21) })

	// spec 3.3
	for _, f := range []string{"conselheiro_id", "demanda_id", "motivo_encerramento"} {
		add("ciclo sem "+f, CicloConcluido, "payload."+f+" ausente", func(env, p map[string]any) { delete(p, f) })
	}
	add("ciclo uc inválida", CicloConcluido, "payload.unidade_civica_id não é UUID", func(env, p map[string]any) { p["unidade_civica_id"] = "x" })
	add("ciclo motivo número", CicloConcluido, "payload.motivo_encerramento não é string", func(env, p map[string]any) { p["motivo_encerramento"] = 1 })

	// spec 3.4
	for _, f := range []string{"conselheiro_id", "demanda_id", "unidade_civica_id"} {
		add("recusa sem "+f, AtribuicaoRecusada, "payload."+f+" ausente", func(env, p map[string]any) { delete(p, f) })
	}
	add("recusa motivo desconhecido", AtribuicaoRecusada, "payload.motivo desconhecido", func(env, p map[string]any) { p["motivo"] = "cansaço" })
	add("recusa motivo número", AtribuicaoRecusada, "payload.motivo não é string", func(env, p map[string]any) { p["motivo"] = 1 })

	// spec 3.5: only the envelope can be wrong.
	add("elegibilidade payload lista", ElegibilidadeAtualizada, "payload não é objeto", func(env, p map[string]any) { env["payload"] = []any{} })

	// spec 3.6
	for _, f := range []string{"agregado_id", "representante_demanda_id"} {
		add("duplicidade sem "+f, DuplicidadeAgregada, "payload."+f+" ausente", func(env, p map[string]any) { delete(p, f) })
	}
	add("duplicidade membros objeto", DuplicidadeAgregada, "payload.membros não é lista", func(env, p map[string]any) { p["membros"] = map[string]any{} })
	add("duplicidade membro string", DuplicidadeAgregada, "payload.membros[0] não é objeto", func(env, p map[string]any) { p["membros"] = []any{idPessoa} })
	add("duplicidade membro sem id", DuplicidadeAgregada, "payload.membros[1].demanda_id ausente", func(env, p map[string]any) {
		p["membros"] = []any{map[string]any{"demanda_id": idPessoa}, map[string]any{}}
	})
	add("duplicidade membro id inválido", DuplicidadeAgregada, "payload.membros[0].demanda_id não é UUID", func(env, p map[string]any) {
		p["membros"] = []any{map[string]any{"demanda_id": "x"}}
	})

	for _, c := range casos {
		t.Run(c.nome, func(t *testing.T) {
			ev, err := Decodificar(c.tipo, c.data)
			if err == nil {
				t.Fatalf("accepted: %+v", ev)
			}
			var in *Inutilizavel
			if !errors.As(err, &in) || !errors.Is(err, ErrInutilizavel) {
				t.Fatalf("error %T %v is not *Inutilizavel", err, err)
			}
			if !strings.Contains(err.Error(), c.motivo) {
				t.Fatalf("reason %q does not contain %q", err, c.motivo)
			}
			if strings.ContainsAny(err.Error(), "\r\n") || len(err.Error()) > 300 {
				t.Fatalf("reason is not one short line: %q", err)
			}
		})
	}
}

func TestLerEventID(t *testing.T) {
	if id, ok := LerEventID(codificar(t, envelope(ConselheiroSorteado, map[string]any{}))); !ok || id != idEvento {
		t.Fatalf("LerEventID = %q, %v", id, ok)
	}
	for _, s := range []string{``, `null`, `{"event_id":1}`, `{"event_id":"x"}`, `{"tipo":"a"}`} {
		if id, ok := LerEventID([]byte(s)); ok {
			t.Errorf("LerEventID(%s) = %q", s, id)
		}
	}
}
