//go:build faults

package faults

import (
	"bytes"
	"strings"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/evento"
)

// Sizes of the oversized messages: NATS refuses a message above its
// max_payload (1 MiB by default, headers included), so "huge" is just under
// it; 100 KiB is above d6a's own 64 KiB limit (CONTRACT §3).
const (
	tamanhoEnorme = 1<<20 - 8<<10
	tamanhoGrande = 100 << 10
	// profundidade exceeds encoding/json's nesting limit (10,000) while the
	// message stays under 64 KiB, so it is the nesting that is refused.
	profundidade = 30000
)

// payloadValido returns a usable payload of tipo about entities nobody
// knows, the base the mutations start from.
func payloadValido(tipo evento.Tipo, uc uuid.UUID) map[string]any {
	switch tipo {
	case evento.AgendaItemDisponivel:
		return map[string]any{
			"demanda_id": uuid.New(), "unidade_civica_id": uc, "posicao_no_backlog": 3, "score_final": 50.5,
			"categoria_id": "SAUDE", "nivel_precedencia": 3, "grupo_id": nil, "timestamp": agora(),
		}
	case evento.ConselheiroCadastrado:
		return pCadastro(uuid.New(), uc, ptr(true))
	case evento.CicloConcluido:
		return pCiclo(uuid.New(), uuid.New(), &uc)
	case evento.AtribuicaoRecusada:
		return pRecusa(uuid.New(), uuid.New(), uc, "recusa_explicita")
	case evento.DuplicidadeAgregada:
		return pAgregada(uuid.New(), []uuid.UUID{uuid.New(), uuid.New()})
	case evento.SuspensaoExpirada:
		return map[string]any{"conselheiro_id": uuid.New(), "data_suspensao_ate": agora(), "timestamp": agora()}
	case evento.Varredura:
		return map[string]any{"demanda_id": uuid.New(), "unidade_civica_id": nil, "acao": "console", "timestamp": agora()}
	case evento.CapacitacaoConcluida:
		return map[string]any{"conselheiro_id": uuid.New(), "curso_id": "basico", "concluida_em": agora()}
	case evento.VinculoValidado:
		return map[string]any{"conselheiro_id": uuid.New(), "unidade_civica_id": uc, "valido": true, "validado_em": agora()}
	case evento.ProgressaoHabilitada:
		return map[string]any{"conselheiro_id": uuid.New(), "unidade_civica_id": uc, "nivel_atuacao": 3}
	default:
		return map[string]any{"unidade_civica_id": uc, "versao_parametros": "2026.2"}
	}
}

func versaoDe(tipo evento.Tipo) string {
	if tipo == evento.ConselheiroCadastrado || tipo == evento.AtribuicaoRecusada {
		return "1.1.0"
	}
	return "1.0.0"
}

// envelopeMapa is an envelope as a map, so a case can break any field.
func envelopeMapa(tipo evento.Tipo, payload any) (uuid.UUID, map[string]any) {
	id := uuid.New()
	return id, map[string]any{
		"event_id": id.String(), "tipo": string(tipo), "origem": "faults-hostil", "versao_schema": versaoDe(tipo),
		"correlacao_id": nil, "timestamp": agora(), "payload": payload,
	}
}

// hostis returns the unusable messages of every consumed subject: each must
// end in D6A_DLQ with a D6a-Erro reason, and none may change anything.
func hostis(uc uuid.UUID) []mensagem {
	var out []mensagem
	for _, tipo := range evento.Consumidos {
		subject := tipo.Subject(prefixo)
		add := func(nome string, data []byte) {
			out = append(out, mensagem{subject: subject, msgID: uuid.NewString(), data: data, tipo: tipo, dlq: true, nome: tipo.ASCII() + "/" + nome})
		}
		env := func(muda func(e map[string]any, p map[string]any)) []byte {
			p := payloadValido(tipo, uc)
			_, e := envelopeMapa(tipo, p)
			muda(e, p)
			return corpo(e)
		}
		valido := env(func(map[string]any, map[string]any) {})

		// Not JSON, or not an object.
		add("json-truncado", valido[:len(valido)/2])
		add("json-lixo", []byte(`{"event_id": "`+uuid.NewString()+`", "tipo": }}}`))
		add("nao-objeto-lista", []byte(`[`+string(valido)+`]`))
		add("nao-objeto-string", []byte(`"`+tipo.ASCII()+`"`))
		add("null", []byte(`null`))
		add("vazio", nil)
		add("utf8-invalido", bytes.Replace(valido, []byte(`faults-hostil`), []byte("faults-\xff\xfe-hostil"), 1))
		add("nul-cru", bytes.Replace(valido, []byte(`faults-hostil`), []byte("faults-\x00-hostil"), 1))
		add("nul-escapado", env(func(e, p map[string]any) { e["origem"] = "D-\u0000-hostil" }))
		// Envelope fields.
		add("event-id-numero", env(func(e, p map[string]any) { e["event_id"] = 12345 }))
		add("event-id-invalido", env(func(e, p map[string]any) { e["event_id"] = "{" + uuid.NewString() + "}" }))
		add("event-id-nulo", env(func(e, p map[string]any) { e["event_id"] = uuid.Nil.String() }))
		add("event-id-ausente", env(func(e, p map[string]any) { delete(e, "event_id") }))
		add("versao-desconhecida", env(func(e, p map[string]any) { e["versao_schema"] = "9.9.9" }))
		add("tipo-de-outro-subject", env(func(e, p map[string]any) {
			outro := evento.AgendaItemDisponivel
			if tipo == outro {
				outro = evento.ConselheiroCadastrado
			}
			e["tipo"] = string(outro)
		}))
		add("tipo-publicado", env(func(e, p map[string]any) { e["tipo"] = string(evento.ConselheiroSorteado) }))
		add("payload-lista", env(func(e, p map[string]any) { e["payload"] = []any{p} }))
		add("payload-ausente", env(func(e, p map[string]any) { delete(e, "payload") }))
		// Size and shape.
		add("grande-100k", env(func(e, p map[string]any) { e["enchimento"] = strings.Repeat("x", tamanhoGrande) }))
		enorme := env(func(e, p map[string]any) { e["enchimento"] = "" })
		enorme = bytes.Replace(enorme, []byte(`"enchimento":""`), []byte(`"enchimento":"`+strings.Repeat("y", tamanhoEnorme-len(enorme))+`"`), 1)
		add("enorme-1mib", enorme)
		fundo := strings.Repeat("[", profundidade) + strings.Repeat("]", profundidade)
		profundo := env(func(e, p map[string]any) { e["aninhado"] = "" })
		add("aninhamento-profundo", bytes.Replace(profundo, []byte(`"aninhado":""`), []byte(`"aninhado":`+fundo), 1))

		// Payload fields the handler needs (spec 3.9–3.12, 3.6, CONTRACT §8).
		campo := map[evento.Tipo][5]func(p map[string]any){
			evento.ElegibilidadeAtualizada: {
				func(p map[string]any) { delete(p, "unidade_civica_id") },
				func(p map[string]any) { p["versao_parametros"] = []any{true} },
				func(p map[string]any) { p["unidade_civica_id"] = "uc-1" },
				func(p map[string]any) { p["unidade_civica_id"] = uuid.Nil.String() },
				func(p map[string]any) { p["versao_parametros"] = "v\u00002" },
			},
			evento.CapacitacaoConcluida: {
				func(p map[string]any) { delete(p, "conselheiro_id") },
				func(p map[string]any) { p["curso_id"] = 7 },
				func(p map[string]any) { p["conselheiro_id"] = "abc" },
				func(p map[string]any) { p["conselheiro_id"] = uuid.Nil.String() },
				func(p map[string]any) { p["curso_id"] = "b\u0000" },
			},
			evento.VinculoValidado: {
				func(p map[string]any) { delete(p, "valido") },
				func(p map[string]any) { p["valido"] = "true" },
				func(p map[string]any) { p["unidade_civica_id"] = "uc-centro" },
				func(p map[string]any) { p["conselheiro_id"] = uuid.Nil.String() },
				func(p map[string]any) { p["validado_em"] = "2026\u0000" },
			},
			evento.ProgressaoHabilitada: {
				func(p map[string]any) { delete(p, "unidade_civica_id") },
				func(p map[string]any) { p["nivel_atuacao"] = 8 },
				func(p map[string]any) { p["conselheiro_id"] = "x" },
				func(p map[string]any) { p["unidade_civica_id"] = uuid.Nil.String() },
				func(p map[string]any) { p["nivel_atuacao"] = 0 },
			},
			evento.AgendaItemDisponivel: {
				func(p map[string]any) { delete(p, "demanda_id") },
				func(p map[string]any) { p["nivel_precedencia"] = "2" },
				func(p map[string]any) { p["unidade_civica_id"] = "uc-centro" },
				func(p map[string]any) { p["demanda_id"] = uuid.Nil.String() },
				func(p map[string]any) { p["categoria_id"] = "SA\u0000DE" },
			},
			evento.ConselheiroCadastrado: {
				func(p map[string]any) { delete(p, "cidadao_id") },
				func(p map[string]any) { p["capacitacao_concluida"] = "sim" },
				func(p map[string]any) { p["conselheiro_id"] = "{" + uuid.NewString() + "}" },
				func(p map[string]any) { p["cidadao_id"] = uuid.Nil.String() },
				func(p map[string]any) { p["status"] = "dispon\u0000ivel" },
			},
			evento.CicloConcluido: {
				func(p map[string]any) { delete(p, "motivo_encerramento") },
				func(p map[string]any) { p["conselheiro_id"] = 12345 },
				func(p map[string]any) { p["demanda_id"] = "urn:uuid:" + uuid.NewString() },
				func(p map[string]any) { p["conselheiro_id"] = uuid.Nil.String() },
				func(p map[string]any) { p["motivo_encerramento"] = "fim\u0000" },
			},
			evento.AtribuicaoRecusada: {
				func(p map[string]any) { delete(p, "unidade_civica_id") },
				func(p map[string]any) { p["motivo"] = 7 },
				func(p map[string]any) { p["conselheiro_id"] = "12345678-1234-1234-1234-12345678901g" },
				func(p map[string]any) { p["demanda_id"] = uuid.Nil.String() },
				func(p map[string]any) { p["motivo"] = "recusa\u0000explicita" },
			},
			evento.DuplicidadeAgregada: {
				func(p map[string]any) { delete(p, "representante_demanda_id") },
				func(p map[string]any) { p["membros"] = "todos" },
				func(p map[string]any) { p["membros"] = []any{map[string]any{"demanda_id": "x"}} },
				func(p map[string]any) { p["agregado_id"] = uuid.Nil.String() },
				func(p map[string]any) { p["agregado_id"] = "\u0000" + uuid.NewString()[1:] },
			},
		}
		if fs, ok := campo[tipo]; ok {
			for i, nome := range []string{"campo-ausente", "campo-tipo-errado", "uuid-invalido", "uuid-nulo", "nul-em-campo"} {
				f := fs[i]
				add(nome, env(func(e, p map[string]any) { f(p) }))
			}
		} else {
			add("payload-string", env(func(e, p map[string]any) { e["payload"] = "texto" }))
		}
	}
	return out
}

// validosDesconhecidos returns usable events about entities d6a does not
// know, or arriving out of order: each must be processed (logged, acked,
// recorded in eventos_processados) and must NOT be dead-lettered. Partners
// Out-of-order pairs come in pares: the second of each is to be published
// some steps after the first.
func (m *modelo) validosDesconhecidos() (agora []mensagem, pares [][2]mensagem) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.rnd
	ucConhecida := m.ucsDem[0]
	ucNinguem := uuid.New() // not in core.uc_polygons
	val := func(tipo evento.Tipo, versao string, nome string, payload any, efeito func(), muda func(e map[string]any)) mensagem {
		id, e := envelopeMapa(tipo, payload)
		e["versao_schema"] = versao
		e["origem"] = "faults-desconhecido"
		if muda != nil {
			muda(e)
		}
		return mensagem{subject: tipo.Subject(prefixo), msgID: id.String(), data: corpo(e), eventID: id, tipo: tipo, nome: nome, efeito: efeito}
	}
	demanda := func(d, uc uuid.UUID) func() {
		return func() { m.demandas[d] = uc }
	}
	d1, d2 := uuid.New(), uuid.New()
	agora = append(agora,
		val(evento.AgendaItemDisponivel, "1.0.0", "agenda-uc-inexistente", pAgenda(d1, ucNinguem, r), demanda(d1, ucNinguem), nil),
		val(evento.AgendaItemDisponivel, "1.0.0", "agenda-tipo-ascii-campos-extras", pAgenda(d2, ucConhecida, r), demanda(d2, ucConhecida), func(e map[string]any) {
			e["tipo"] = evento.AgendaItemDisponivel.ASCII()
			e["rastreio"] = map[string]any{"span": "abc", "n": 1}
			e["correlacao_id"] = ""
		}),
		val(evento.ConselheiroCadastrado, "1.1.0", "cadastro-uc-inexistente", pCadastro(uuid.New(), ucNinguem, ptr(true)), nil, nil),
		val(evento.CicloConcluido, "1.0.0", "ciclo-conselheiro-inexistente", pCiclo(uuid.New(), uuid.New(), &ucConhecida), nil, nil),
		val(evento.CicloConcluido, "1.0.0", "ciclo-sem-uc-conselheiro-inexistente", pCiclo(uuid.New(), uuid.New(), nil), nil, nil),
		val(evento.AtribuicaoRecusada, "1.1.0", "recusa-conselheiro-e-demanda-inexistentes", pRecusa(uuid.New(), uuid.New(), ucConhecida, "timeout_resposta"), nil, nil),
		val(evento.AtribuicaoRecusada, "1.0.0", "recusa-uc-inexistente", pRecusa(uuid.New(), uuid.New(), ucNinguem, ""), nil, nil),
		val(evento.DuplicidadeAgregada, "1.0.0", "agregada-membros-inexistentes", pAgregada(uuid.New(), []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}), nil, nil),
		val(evento.DuplicidadeAgregada, "1.0.0", "agregada-sem-membros", func() map[string]any {
			p := pAgregada(uuid.New(), nil)
			delete(p, "membros")
			return p
		}(), nil, nil),
		val(evento.ElegibilidadeAtualizada, "1.0.0", "elegibilidade-uc-inexistente", map[string]any{"unidade_civica_id": ucNinguem, "versao_parametros": "2026.2"}, nil, nil),
		val(evento.CapacitacaoConcluida, "1.0.0", "capacitacao-conselheiro-inexistente", map[string]any{"conselheiro_id": uuid.New(), "curso_id": "basico", "concluida_em": "2026-11-29T12:00:00.000Z"}, nil, nil),
		val(evento.VinculoValidado, "1.0.0", "vinculo-conselheiro-inexistente", map[string]any{"conselheiro_id": uuid.New(), "unidade_civica_id": ucNinguem, "valido": false}, nil, nil),
		val(evento.ProgressaoHabilitada, "1.0.0", "progressao-conselheiro-inexistente", map[string]any{"conselheiro_id": uuid.New(), "unidade_civica_id": ucNinguem, "nivel_atuacao": 7}, nil, nil),
	)
	// Refusal before the draw: the refused demand arrives later, in a unit
	// nobody serves, so whichever order d6a sees them in, nothing is drawn.
	dd := uuid.New()
	quem := uuid.New()
	if len(m.conselheiros) > 0 {
		quem = m.conselheiros[r.IntN(len(m.conselheiros))]
	}
	pares = append(pares, [2]mensagem{
		val(evento.AtribuicaoRecusada, "1.1.0", "recusa-antes-do-sorteio", pRecusa(quem, dd, m.deserto, "recusa_explicita"), nil, nil),
		val(evento.AgendaItemDisponivel, "1.0.0", "agenda-depois-da-recusa", pAgenda(dd, m.deserto, r), demanda(dd, m.deserto), nil),
	})
	// Cycle before the registration. The counsellor is untrained, so it is
	// never drawn: a cycle that a parallel consumer applies after the
	// registration cannot release someone holding an assignment.
	x := uuid.New()
	pares = append(pares, [2]mensagem{
		val(evento.CicloConcluido, "1.0.0", "ciclo-antes-do-cadastro", pCiclo(x, uuid.New(), &ucConhecida), nil, nil),
		val(evento.ConselheiroCadastrado, "1.1.0", "cadastro-depois-do-ciclo", pCadastro(x, ucConhecida, ptr(false)), nil, nil),
	})
	return agora, pares
}
