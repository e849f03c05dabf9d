//go:build faults

package faults

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/evento"
)

// envelope is an incoming envelope as the producers write it (CONTRACT §3).
type envelope struct {
	EventID      string `json:"event_id"`
	Tipo         string `json:"tipo"`
	Origem       string `json:"origem"`
	VersaoSchema string `json:"versao_schema"`
	CorrelacaoID any    `json:"correlacao_id"`
	Timestamp    string `json:"timestamp"`
	Payload      any    `json:"payload"`
}

func agora() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

func novoEnvelope(tipo evento.Tipo, versao string, payload any) (uuid.UUID, envelope) {
	id := uuid.New()
	return id, envelope{EventID: id.String(), Tipo: string(tipo), Origem: "faults", VersaoSchema: versao, Timestamp: agora(), Payload: payload}
}

func corpo(e any) []byte {
	b, err := json.Marshal(e)
	if err != nil {
		panic(err)
	}
	return b
}

// Payload builders (spec 3.1–3.6).

func pCadastro(cidadao, uc uuid.UUID, capacitacao *bool) map[string]any {
	p := map[string]any{
		"conselheiro_id": cidadao, "cidadao_id": cidadao, "unidade_civica_id": uc,
		"nivel_atuacao": 2, "status": "disponivel",
	}
	if capacitacao != nil {
		p["capacitacao_concluida"] = *capacitacao
	}
	return p
}

func pAgenda(demanda, uc uuid.UUID, r *rand.Rand) map[string]any {
	var grupo any
	if r.IntN(10) == 0 {
		grupo = uuid.New()
	}
	return map[string]any{
		"demanda_id": demanda, "unidade_civica_id": uc, "posicao_no_backlog": 1 + r.IntN(40),
		"score_final": float64(r.IntN(10000)) / 100, "categoria_id": []string{"SAUDE", "EDU", "TRANSP", "SEG"}[r.IntN(4)],
		"nivel_precedencia": 1 + r.IntN(5), "grupo_id": grupo, "timestamp": agora(),
	}
}

func pCiclo(conselheiro, demanda uuid.UUID, uc *uuid.UUID) map[string]any {
	p := map[string]any{
		"conselheiro_id": conselheiro, "demanda_id": demanda,
		"motivo_encerramento": "demanda_concluida", "total_atualizacoes": 3,
		"data_inicio": "2026-11-01T00:00:00.000Z", "data_fim": agora(),
	}
	if uc != nil {
		p["unidade_civica_id"] = *uc
	}
	return p
}

func pRecusa(conselheiro, demanda, uc uuid.UUID, motivo string) map[string]any {
	p := map[string]any{"conselheiro_id": conselheiro, "demanda_id": demanda, "unidade_civica_id": uc, "timestamp": agora()}
	if motivo != "" {
		p["motivo"] = motivo
	}
	return p
}

func pAgregada(rep uuid.UUID, membros []uuid.UUID) map[string]any {
	ms := make([]map[string]any, len(membros))
	for i, m := range membros {
		ms[i] = map[string]any{"demanda_id": m}
	}
	return map[string]any{
		"agregado_id": uuid.New(), "representante_demanda_id": rep, "membros": ms,
		"mecanismo": "confirmacao_coletiva", "confirmacoes_gatilho": 3, "criterios": map[string]any{"similaridade": 0.93},
	}
}

// mensagem is one message to publish.
type mensagem struct {
	subject string
	msgID   string
	data    []byte
	// eventID is the envelope's event_id when valid (uuid.Nil otherwise).
	eventID uuid.UUID
	tipo    evento.Tipo
	// dlq: the message is unusable and must be dead-lettered; otherwise it
	// must be processed.
	dlq  bool
	nome string
	// reenvio: the same event_id was published before under another
	// Nats-Msg-Id (a producer re-sending past the duplicate window).
	reenvio bool
	// efeito runs once the message is stored on the bus (model updates that
	// must only count published messages).
	efeito func()
}

// publicado is a message on the bus and the sequence it got.
type publicado struct {
	mensagem
	seq uint64
}

// atribuicao is a draw learned from conselheiro.sorteado.
type atribuicao struct {
	eventID     string
	conselheiro uuid.UUID
	demanda     uuid.UUID
	uc          uuid.UUID
}

// terminal is the event the test sent to end a learned assignment: a cycle
// (concluida) or a refusal (recusada).
type terminal struct {
	eventID  uuid.UUID
	status   string
	motivo   string
	sorteado string
}

type agregado struct {
	eventID uuid.UUID
	rep     uuid.UUID
	membros []uuid.UUID
}

// modelo is what the producers know: units, counsellors, demands, the draws
// learned from the bus and every message published. It decides the next
// event of the stream.
type modelo struct {
	mu  sync.Mutex
	rnd *rand.Rand

	hierarquia map[uuid.UUID]*uuid.UUID // id -> parent
	ucsCad     []uuid.UUID              // where counsellors register
	ucsDem     []uuid.UUID              // where demands arrive
	deserto    uuid.UUID                // a unit nobody serves

	conselheiros []uuid.UUID
	ucDe         map[uuid.UUID]uuid.UUID
	exigentes    map[uuid.UUID]bool // always refuse: reach suspension
	demandas     map[uuid.UUID]uuid.UUID
	recentes     []uuid.UUID
	agregadas    map[uuid.UUID]bool

	aprendidas []atribuicao
	terminais  map[string]terminal // by event_id of the sorteado
	agregados  []agregado
	sorteados  int

	reenviaveis []mensagem

	publicados []publicado
	quotas     map[string]int
	adiados    []adiado // out-of-order partners, published a few steps later
}

type adiado struct {
	passo int
	m     mensagem
}

func novoModelo(seed uint64, total int) *modelo {
	m := &modelo{
		rnd:        rand.New(rand.NewPCG(seed, seed^0x5eed)),
		hierarquia: map[uuid.UUID]*uuid.UUID{},
		ucDe:       map[uuid.UUID]uuid.UUID{},
		exigentes:  map[uuid.UUID]bool{},
		demandas:   map[uuid.UUID]uuid.UUID{},
		agregadas:  map[uuid.UUID]bool{},
		terminais:  map[string]terminal{},
	}
	// Two trees and a lone unit (CONTRACT §5, spec 4.3 steps):
	//   R1 ─ A ─ A1, A2      R2 ─ C ─ C1
	//      └ B ─ B1, B2
	uc := func(parent *uuid.UUID) uuid.UUID {
		id := uuid.New()
		m.hierarquia[id] = parent
		return id
	}
	r1 := uc(nil)
	a, b := uc(&r1), uc(&r1)
	a1, a2, b1, b2 := uc(&a), uc(&a), uc(&b), uc(&b)
	r2 := uc(nil)
	c := uc(&r2)
	c1 := uc(&c)
	m.deserto = uuid.New() // not in core.uc_polygons: its chain is itself
	m.ucsCad = []uuid.UUID{r1, a, b, a1, a1, a2, a2, b1, b1, b2, r2, c, c1, c1}
	m.ucsDem = []uuid.UUID{a1, a1, a2, a2, b1, b1, b2, b2, c1, c1, a, b, c, r1, r2}
	m.quotas = map[string]int{
		"cadastro":  total * 11 / 100,
		"agenda":    total * 45 / 100,
		"agregada":  total * 3 / 100,
		"stub":      max(total/100, 2),
		"reenvio":   total * 2 / 100,
		"terminais": total, // whatever remains
	}
	return m
}

// aprender records a draw published by d6a (the follower calls it).
func (m *modelo) aprender(eventID string, p payloadSorteado) {
	c, err1 := uuid.Parse(p.ConselheiroID)
	d, err2 := uuid.Parse(p.DemandaID)
	u, err3 := uuid.Parse(p.UnidadeCivicaID)
	if err1 != nil || err2 != nil || err3 != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sorteados++
	m.aprendidas = append(m.aprendidas, atribuicao{eventID: eventID, conselheiro: c, demanda: d, uc: u})
}

// proxima returns the message of step k of total; the caller publishes it
// and then calls registrar.
func (m *modelo) proxima(k, total int) mensagem {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, a := range m.adiados {
		if a.passo <= k {
			m.adiados = append(m.adiados[:i], m.adiados[i+1:]...)
			return a.m
		}
	}
	r := m.rnd
	var cat string
	switch {
	case k < total/10 || len(m.conselheiros) < 10:
		// Counsellors first, so draws happen and assignments can be learned.
		cat = []string{"cadastro", "cadastro", "agenda"}[r.IntN(3)]
	default:
		pesos := map[string]int{}
		for c, q := range m.quotas {
			if q > 0 {
				pesos[c] = q
			}
		}
		if len(m.aprendidas) == 0 {
			delete(pesos, "terminais")
		} else {
			// Keep up with the draws: a learned assignment waits little.
			pesos["terminais"] = max(1, max(m.quotas["agenda"]+m.quotas["cadastro"], 1)*min(len(m.aprendidas), 8)/4)
		}
		if len(m.reenviaveis) == 0 {
			delete(pesos, "reenvio")
		}
		soma := 0
		for _, p := range pesos {
			soma += p
		}
		cat = "agenda"
		if soma > 0 {
			x := r.IntN(soma)
			for _, c := range []string{"cadastro", "agenda", "agregada", "stub", "reenvio", "terminais"} {
				if x < pesos[c] {
					cat = c
					break
				}
				x -= pesos[c]
			}
		}
	}
	m.quotas[cat]--
	switch cat {
	case "cadastro":
		return m.cadastro()
	case "agregada":
		if msg, ok := m.agregada(); ok {
			return msg
		}
	case "stub":
		_, e := novoEnvelope(evento.ElegibilidadeAtualizada, "1.0.0", map[string]any{"unidade_civica_id": m.ucsDem[r.IntN(len(m.ucsDem))], "versao_parametros": "2026.2"})
		return m.valida(evento.ElegibilidadeAtualizada, e, "stub", nil)
	case "reenvio":
		orig := m.reenviaveis[r.IntN(len(m.reenviaveis))]
		orig.msgID = uuid.NewString()
		orig.reenvio = true
		orig.nome = "reenvio-" + orig.nome
		orig.efeito = nil
		return orig
	case "terminais":
		if len(m.aprendidas) > 0 && r.IntN(40) == 0 {
			return m.outraDemanda()
		}
		if len(m.aprendidas) > 0 {
			return m.terminal()
		}
	}
	return m.agenda()
}

func (m *modelo) valida(tipo evento.Tipo, e envelope, nome string, efeito func()) mensagem {
	id := uuid.MustParse(e.EventID)
	msg := mensagem{subject: tipo.Subject(prefixo), msgID: e.EventID, data: corpo(e), eventID: id, tipo: tipo, nome: nome, efeito: efeito}
	if m.rnd.IntN(4) == 0 && len(m.reenviaveis) < 200 && tipo != evento.ElegibilidadeAtualizada {
		m.reenviaveis = append(m.reenviaveis, msg)
	}
	return msg
}

func (m *modelo) cadastro() mensagem {
	r := m.rnd
	// A few duplicates of an earlier registration (same citizen, unit and
	// level, new event): processed as "cadastro duplicado".
	if len(m.conselheiros) > 20 && r.IntN(40) == 0 {
		c := m.conselheiros[r.IntN(len(m.conselheiros))]
		_, e := novoEnvelope(evento.ConselheiroCadastrado, "1.1.0", pCadastro(c, m.ucDe[c], ptr(true)))
		return m.valida(evento.ConselheiroCadastrado, e, "cadastro-duplicado", nil)
	}
	c := uuid.New()
	uc := m.ucsCad[r.IntN(len(m.ucsCad))]
	versao, capac := "1.1.0", ptr(true)
	switch x := r.IntN(20); {
	case x < 2:
		versao, capac = "1.0.0", nil // spec 3.2: absent means trained
	case x == 2:
		capac = ptr(false)
	}
	_, e := novoEnvelope(evento.ConselheiroCadastrado, versao, pCadastro(c, uc, capac))
	return m.valida(evento.ConselheiroCadastrado, e, "cadastro", func() {
		m.conselheiros = append(m.conselheiros, c)
		m.ucDe[c] = uc
		if r.IntN(6) == 0 {
			m.exigentes[c] = true
		}
	})
}

func (m *modelo) agenda() mensagem {
	r := m.rnd
	d := uuid.New()
	uc := m.ucsDem[r.IntN(len(m.ucsDem))]
	_, e := novoEnvelope(evento.AgendaItemDisponivel, "1.0.0", pAgenda(d, uc, r))
	if r.IntN(3) == 0 {
		e.CorrelacaoID = uuid.NewString()
	}
	return m.valida(evento.AgendaItemDisponivel, e, "agenda", func() { m.demandas[d] = uc; m.recentes = append(m.recentes, d) })
}

func (m *modelo) agregada() (mensagem, bool) {
	r := m.rnd
	var livres []uuid.UUID
	for i := len(m.recentes) - 1; i >= 0 && len(livres) < 40; i-- {
		if !m.agregadas[m.recentes[i]] {
			livres = append(livres, m.recentes[i])
		}
	}
	n := 2 + r.IntN(2)
	if len(livres) < n+2 {
		return mensagem{}, false
	}
	r.Shuffle(len(livres), func(i, j int) { livres[i], livres[j] = livres[j], livres[i] })
	membros := livres[:n]
	id, e := novoEnvelope(evento.DuplicidadeAgregada, "1.0.0", pAgregada(membros[0], membros))
	membrosCopia := append([]uuid.UUID(nil), membros...)
	return m.valida(evento.DuplicidadeAgregada, e, "agregada", func() {
		for _, d := range membrosCopia {
			m.agregadas[d] = true
		}
		m.agregados = append(m.agregados, agregado{eventID: id, rep: membrosCopia[0], membros: membrosCopia})
	}), true
}

// terminal ends one learned assignment, exactly once: a picky counsellor
// refuses (and is suspended at the fourth refusal, spec 3.12), the others
// mostly conclude the cycle.
func (m *modelo) terminal() mensagem {
	r := m.rnd
	i := r.IntN(len(m.aprendidas))
	a := m.aprendidas[i]
	m.aprendidas = append(m.aprendidas[:i], m.aprendidas[i+1:]...)
	recusa := m.exigentes[a.conselheiro] || r.IntN(5) == 0
	if !recusa {
		var uc *uuid.UUID
		if r.IntN(4) > 0 {
			uc = &a.uc
		}
		id, e := novoEnvelope(evento.CicloConcluido, "1.0.0", pCiclo(a.conselheiro, a.demanda, uc))
		return m.valida(evento.CicloConcluido, e, "ciclo", func() {
			m.terminais[a.eventID] = terminal{eventID: id, status: "concluida", sorteado: a.eventID}
		})
	}
	motivo := []string{"", "recusa_explicita", "timeout_resposta", "fora_do_territorio", "risco_pessoal"}[r.IntN(5)]
	if m.exigentes[a.conselheiro] && motivo == "risco_pessoal" {
		motivo = "recusa_explicita"
	}
	versao := "1.1.0"
	if motivo == "" && r.IntN(2) == 0 {
		versao = "1.0.0"
	}
	id, e := novoEnvelope(evento.AtribuicaoRecusada, versao, pRecusa(a.conselheiro, a.demanda, a.uc, motivo))
	return m.valida(evento.AtribuicaoRecusada, e, "recusa", func() {
		m.terminais[a.eventID] = terminal{eventID: id, status: "recusada", motivo: motivo, sorteado: a.eventID}
	})
}

// outraDemanda is a cycle or a refusal from a counsellor who holds an
// assignment, naming a demand that does not exist: valid, processed, and it
// must leave the counsellor's assignment (and 'ocupado') alone.
func (m *modelo) outraDemanda() mensagem {
	r := m.rnd
	a := m.aprendidas[r.IntN(len(m.aprendidas))]
	if r.IntN(2) == 0 {
		_, e := novoEnvelope(evento.CicloConcluido, "1.0.0", pCiclo(a.conselheiro, uuid.New(), &a.uc))
		return m.valida(evento.CicloConcluido, e, "ciclo-demanda-inexistente", nil)
	}
	_, e := novoEnvelope(evento.AtribuicaoRecusada, "1.1.0", pRecusa(a.conselheiro, uuid.New(), a.uc, "recusa_explicita"))
	return m.valida(evento.AtribuicaoRecusada, e, "recusa-demanda-inexistente", nil)
}

// registrar records a published message and runs its model effect.
func (m *modelo) registrar(msg mensagem, seq uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if msg.efeito != nil {
		msg.efeito()
	}
	m.publicados = append(m.publicados, publicado{mensagem: msg, seq: seq})
}

// adiar schedules an out-of-order partner to be published at step passo.
func (m *modelo) adiar(passo int, msg mensagem) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.adiados = append(m.adiados, adiado{passo: passo, m: msg})
}

func (m *modelo) umConselheiro() (uuid.UUID, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.conselheiros) == 0 {
		return uuid.Nil, false
	}
	return m.conselheiros[m.rnd.IntN(len(m.conselheiros))], true
}

// foto returns copies of what the checks need.
func (m *modelo) foto() ([]publicado, map[uuid.UUID]uuid.UUID, map[string]terminal, []agregado, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dem := make(map[uuid.UUID]uuid.UUID, len(m.demandas))
	for k, v := range m.demandas {
		dem[k] = v
	}
	term := make(map[string]terminal, len(m.terminais))
	for k, v := range m.terminais {
		term[k] = v
	}
	return append([]publicado(nil), m.publicados...), dem, term, append([]agregado(nil), m.agregados...), m.sorteados
}

func ptr[T any](v T) *T { return &v }

func (p publicado) String() string {
	return fmt.Sprintf("%s seq=%d event_id=%s subject=%s", p.nome, p.seq, p.eventID, p.subject)
}
