package colonia_test

// Scenarios T2–T18 of spec 7.2 (T6 lives in t_basico_test.go), end to end:
// real PostgreSQL, real embedded JetStream, the assembled colony. Each test
// checks the spec's "Verificação" column against the database and the
// envelopes actually published on the bus.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
)

// ---- helpers (h2 prefix: shared package with other test files) ----

// h2Offset is d6a.consumer_offset.last_sequence of a consumed type (-1 when
// there is no row).
func h2Offset(c *harness, tipo evento.Tipo) int64 {
	c.t.Helper()
	var n int64 = -1
	_ = c.pool.QueryRow(context.Background(), `SELECT last_sequence FROM d6a.consumer_offset WHERE tipo_evento = $1`, string(tipo)).Scan(&n)
	return n
}

func h2Processado(c *harness, id uuid.UUID) bool {
	c.t.Helper()
	return c.contar(`SELECT count(*) FROM d6a.eventos_processados WHERE event_id = $1`, id) == 1
}

// h2ConsumidorEmDia reports that the durable consumer d6a-entradas (every
// consumed type) has nothing
// pending and nothing waiting for an ack: every message was settled.
func h2ConsumidorEmDia(c *harness) bool {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cons, err := c.js.Consumer(ctx, c.cfg.Stream, evento.DurableEntradas)
	if err != nil {
		return false
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return false
	}
	return info.NumPending == 0 && info.NumAckPending == 0 && info.NumRedelivered == 0
}

// h2Pendente reports whether demanda is in d6a.fila_pendentes.
func h2Pendente(c *harness, demanda uuid.UUID) bool {
	c.t.Helper()
	return c.contar(`SELECT count(*) FROM d6a.fila_pendentes WHERE demanda_id = $1`, demanda) == 1
}

// h2SemCandidatosMotivo asserts exactly one sorteio.sem_candidatos for
// demanda, with motivo, and returns its payload.
func h2SemCandidatos(t *testing.T, c *harness, demanda uuid.UUID, motivo string) map[string]any {
	t.Helper()
	pubs := porDemanda(c.publicados(evento.SorteioSemCandidatos), demanda)
	must(t, len(pubs) == 1, "%d sorteio.sem_candidatos for %s, want 1", len(pubs), demanda)
	p := payloadDe(pubs[0])
	must(t, p["motivo"] == motivo, "sem_candidatos motivo %v, want %s", p["motivo"], motivo)
	must(t, p["total_elegiveis"] == float64(0), "sem_candidatos total_elegiveis %v", p["total_elegiveis"])
	must(t, pubs[0]["correlacao_id"] == demanda.String(), "sem_candidatos correlacao_id %v", pubs[0]["correlacao_id"])
	return p
}

// h2RecusasDoUnico drives spec 4.10 "UC com 1 conselheiro apenas": n times,
// a new demand is drawn to the only counsellor, who refuses it; the re-draw
// finds nobody. It returns the demands and the refusal event ids.
func h2RecusasDoUnico(t *testing.T, c *harness, conselheiro, ucID uuid.UUID, n int) (demandas, recusas []uuid.UUID) {
	t.Helper()
	for i := 1; i <= n; i++ {
		d, sorteado := c.novaDemanda(ucID)
		must(t, sorteado == conselheiro, "refusal %d: demand %s drawn to %v, want %s", i, d, sorteado, conselheiro)
		r := c.processar(evento.AtribuicaoRecusada, "1.1.0", recusa(conselheiro, d, ucID, "recusa_explicita"))
		must(t, c.ativa(d) == uuid.Nil, "refusal %d: demand still active", i)
		must(t, h2Pendente(c, d), "refusal %d: demand %s not pending after the failed re-draw", i, d)
		demandas, recusas = append(demandas, d), append(recusas, r)
	}
	return demandas, recusas
}

// ---- happy path ----

func TestT02_CadastroCompletoV110SorteiaPendente(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)

	// A demand waits in the queue: the UC has nobody yet.
	demanda, _ := c.novaDemanda(bairro)
	must(t, h2Pendente(c, demanda), "demand not pending before the registration")
	h2SemCandidatos(t, c, demanda, "nenhum_cadastrado")

	// Complete 1.1.0 registration; conselheiro_id differs from cidadao_id so
	// the unified identity (id = cidadao_id) is visible.
	cidadao, conselheiroID := uuid.New(), uuid.New()
	p := cadastro(cidadao, bairro)
	p["conselheiro_id"] = conselheiroID
	p["nivel_atuacao"] = 3
	evID := c.processar(evento.ConselheiroCadastrado, "1.1.0", p)

	var (
		id, cid, ucID, evCad uuid.UUID
		nivel                int
		capacitacao          bool
	)
	if err := c.pool.QueryRow(t.Context(), `SELECT id, cidadao_id, unidade_civica_id, nivel_atuacao, capacitacao_concluida, event_id_cadastro
		FROM d6a.conselheiros`).Scan(&id, &cid, &ucID, &nivel, &capacitacao, &evCad); err != nil {
		t.Fatal(err)
	}
	must(t, c.contar(`SELECT count(*) FROM d6a.conselheiros`) == 1, "want exactly one counsellor row")
	must(t, id == cidadao && cid == cidadao, "row id %s cidadao_id %s, want both = cidadao_id %s", id, cid, cidadao)
	must(t, ucID == bairro && nivel == 3 && capacitacao, "row uc %s nivel %d capacitacao %v", ucID, nivel, capacitacao)
	must(t, evCad == evID, "event_id_cadastro %s, want %s", evCad, evID)

	// The registration swept the queue: draw, pending row removed.
	must(t, c.ativa(demanda) == cidadao, "pending demand assigned to %v, want the new counsellor", c.ativa(demanda))
	must(t, !h2Pendente(c, demanda), "pending row not removed after the successful draw")
	must(t, c.statusConselheiro(cidadao) == "ocupado", "status %s, want ocupado", c.statusConselheiro(cidadao))
	pubs := c.publicados(evento.ConselheiroSorteado)
	must(t, len(pubs) == 1, "%d conselheiro.sorteado, want 1", len(pubs))
	pp := payloadDe(pubs[0])
	must(t, pp["conselheiro_id"] == cidadao.String() && pp["demanda_id"] == demanda.String(), "sorteado payload %v", pp)
	must(t, pp["total_elegiveis"] == float64(1), "total_elegiveis %v", pp["total_elegiveis"])
	must(t, h2Offset(c, evento.ConselheiroCadastrado) > 0, "cadastrado cursor not advanced")
}

func TestT03_CicloConcluidoComAtribuicaoAtiva(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	a := c.novoConselheiro(bairro)
	d1, s1 := c.novaDemanda(bairro)
	must(t, s1 == a, "d1 not assigned to the only counsellor")
	d2, _ := c.novaDemanda(bairro)
	must(t, h2Pendente(c, d2), "d2 not pending while the only counsellor is busy")

	// Cycle of d1 concluded, with d2 waiting: released, closed, queue swept.
	cicloID := c.processar(evento.CicloConcluido, "1.0.0", ciclo(a, d1, bairro))
	st, enc := c.atribuicao(a, d1)
	must(t, st == "concluida", "d1 assignment status %s, want concluida", st)
	must(t, enc != nil && *enc == cicloID, "event_id_encerramento %v, want the ciclo event %s", enc, cicloID)
	must(t, c.ativa(d2) == a, "queue not swept: d2 active with %v, want the released counsellor", c.ativa(d2))
	must(t, !h2Pendente(c, d2), "d2 still pending after the sweep")
	sort := porDemanda(c.publicados(evento.ConselheiroSorteado), d2)
	must(t, len(sort) == 1 && payloadDe(sort[0])["conselheiro_id"] == a.String(), "conselheiro.sorteado for d2: %v", sort)
	must(t, c.statusConselheiro(a) == "ocupado", "status after the sweep draw %s, want ocupado", c.statusConselheiro(a))

	// Cycle of d2 concluded with an empty queue: the counsellor stays released.
	ciclo2 := c.processar(evento.CicloConcluido, "1.0.0", ciclo(a, d2, bairro))
	must(t, c.statusConselheiro(a) == "disponivel", "status %s, want disponivel", c.statusConselheiro(a))
	st, enc = c.atribuicao(a, d2)
	must(t, st == "concluida" && enc != nil && *enc == ciclo2, "d2 assignment %s / %v", st, enc)
	must(t, c.contar(`SELECT count(*) FROM d6a.atribuicoes WHERE status = 'ativa'`) == 0, "active assignments left")
	must(t, len(c.publicados(evento.ConselheiroSorteado)) == 2, "want 2 conselheiro.sorteado in total")
}

func TestT04_UmaRecusaResorteiaSemSuspender(t *testing.T) {
	t.Parallel()
	c, bairro, a, b := coloniaComDupla(t)
	demanda, x := c.novaDemanda(bairro)
	must(t, x == a || x == b, "first draw to %v", x)
	y := outro(x, a, b)

	recusaID := c.processar(evento.AtribuicaoRecusada, "1.1.0", recusa(x, demanda, bairro, ""))

	st, enc := c.atribuicao(x, demanda)
	must(t, st == "recusada", "refused assignment status %s, want recusada", st)
	must(t, enc != nil && *enc == recusaID, "event_id_encerramento %v, want the refusal %s", enc, recusaID)
	var (
		quem, demRec, evRec uuid.UUID
		consecutivas        int
	)
	if err := c.pool.QueryRow(t.Context(), `SELECT conselheiro_id, recusas_consecutivas, demanda_id_recusada, evento_id_recusa FROM d6a.contador_recusas`).
		Scan(&quem, &consecutivas, &demRec, &evRec); err != nil {
		t.Fatalf("contador_recusas: %v", err)
	}
	must(t, c.contar(`SELECT count(*) FROM d6a.contador_recusas`) == 1, "want one contador_recusas row")
	must(t, quem == x && consecutivas == 1 && demRec == demanda && evRec == recusaID,
		"contador row %s/%d/%s/%s", quem, consecutivas, demRec, evRec)

	// Re-draw to the other counsellor.
	must(t, c.ativa(demanda) == y, "re-draw gave %v, want the other counsellor %s", c.ativa(demanda), y)
	pubs := porDemanda(c.publicados(evento.ConselheiroSorteado), demanda)
	must(t, len(pubs) == 2, "%d conselheiro.sorteado for the demand, want 2 (draw + re-draw)", len(pubs))
	must(t, payloadDe(pubs[1])["conselheiro_id"] == y.String() && payloadDe(pubs[1])["total_elegiveis"] == float64(1),
		"re-draw payload %v", payloadDe(pubs[1]))
	var excluido *uuid.UUID
	_ = c.pool.QueryRow(t.Context(), `SELECT excluido FROM d6a.auditoria_sorteios WHERE conselheiro_id = $1 AND demanda_id = $2`, y, demanda).Scan(&excluido)
	must(t, excluido != nil && *excluido == x, "audit of the re-draw excluido %v, want %s", excluido, x)

	// The refuser is released, not suspended.
	must(t, c.statusConselheiro(x) == "disponivel", "refuser status %s, want disponivel", c.statusConselheiro(x))
	must(t, c.contar(`SELECT count(*) FROM d6a.conselheiros WHERE id = $1 AND data_suspensao_ate IS NULL`, x) == 1, "refuser has a suspension date")
	must(t, c.statusConselheiro(y) == "ocupado", "new winner status %s", c.statusConselheiro(y))
	must(t, len(c.publicados(evento.SorteioSemCandidatos)) == 0, "unexpected sorteio.sem_candidatos")
}

// h2Seed and h2Embaralhar re-implement CONTRACT §4 independently of
// internal/sorteio, as an external auditor would.
func h2Seed(base, ts string) string {
	m := hmac.New(sha256.New, []byte("d6a-sorteio"))
	m.Write([]byte(base + ":" + ts))
	return hex.EncodeToString(m.Sum(nil))
}

func h2Embaralhar(ids []string, seed string) []string {
	l := slices.Clone(ids)
	n := len(l)
	for i := n - 1; i >= 1; i-- {
		h := sha256.Sum256([]byte(seed + ":" + strconv.Itoa(n-1-i)))
		v, _ := strconv.ParseUint(hex.EncodeToString(h[:])[:8], 16, 32)
		j := int(v % uint64(i+1))
		l[i], l[j] = l[j], l[i]
	}
	return l
}

func h2Hash(ids []string) string {
	b, _ := json.Marshal(ids)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func TestT05_SorteioDeterministicoVerificavel(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	var ids []string
	for range 4 {
		ids = append(ids, c.novoConselheiro(bairro).String())
	}
	demanda := uuid.New()
	agendaID, agendaSeq := c.publicar(evento.AgendaItemDisponivel, "1.0.0", agenda(demanda, bairro))
	c.esperarProcessado(agendaID)

	var (
		base, ts, seed, hash           string
		baseSeq                        *int64
		fallback                       bool
		entrada, ordenados             []string
		selecionado, evSorteio, degrau uuid.UUID
	)
	var assinatura *string
	if err := c.pool.QueryRow(t.Context(), `SELECT base, base_fallback, base_sequence, timestamp_sorteio, seed, elegiveis_entrada,
		ordenados, selecionado, lista_elegiveis_hash, event_id_sorteio, degrau, assinatura_rodada FROM d6a.auditoria_sorteios WHERE demanda_id = $1`, demanda).
		Scan(&base, &fallback, &baseSeq, &ts, &seed, &entrada, &ordenados, &selecionado, &hash, &evSorteio, &degrau, &assinatura); err != nil {
		t.Fatalf("auditoria: %v", err)
	}
	// The base is the latest message of the bus the service knew of when
	// the draw started (CONTRACT §4): a message of the stream at or before
	// the agenda event, never a fallback, named by its stored sequence.
	must(t, !fallback && baseSeq != nil && uint64(*baseSeq) <= agendaSeq, "base %s at sequence %v (fallback %v), want a message at or before the agenda event's %d", base, baseSeq, fallback, agendaSeq)
	var naBase string
	for _, m := range c.lerStream(c.cfg.Stream, "") {
		if m["_seq"].(uint64) == uint64(*baseSeq) {
			naBase, _ = m["event_id"].(string)
		}
	}
	must(t, naBase == base, "base %s, but the stream holds %q at sequence %d", base, naBase, *baseSeq)
	_ = agendaID
	must(t, degrau == bairro, "degrau %s", degrau)
	// The input is every eligible counsellor, sorted ascending.
	want := slices.Clone(ids)
	slices.Sort(want)
	must(t, slices.Equal(entrada, want), "elegiveis_entrada %v, want %v", entrada, want)

	// Recompute with the library...
	// Under the beacon rule (CONTRACT §4a) the audit keeps the round's
	// signature; its SHA-256 is the value the seed mixes in.
	must(t, assinatura != nil, "the audit row keeps no beacon round")
	rnd := registro.Randomness(*assinatura)
	r, err := sorteio.SortearComRodada(base, ts, rnd, entrada)
	if err != nil {
		t.Fatal(err)
	}
	must(t, r.Seed == seed && slices.Equal(r.Ordenados, ordenados) && r.Selecionado == selecionado.String() && r.ListaHash == hash,
		"recomputed %+v differs from the audit seed=%s ordenados=%v selecionado=%s hash=%s", r, seed, ordenados, selecionado, hash)
	// ... with the same inputs in another order (same result: canonical input)...
	inverso := slices.Clone(ids)
	slices.Reverse(inverso)
	r2, err := sorteio.SortearComRodada(base, ts, rnd, inverso)
	must(t, err == nil && r2.Seed == r.Seed && slices.Equal(r2.Ordenados, r.Ordenados) && r2.ListaHash == r.ListaHash, "permuted input: %+v / %v", r2, err)
	// ... and independently, from CONTRACT §4 alone.
	// (CONTRACT §4a: the message is base:T:randomness.)
	must(t, h2Seed(base, ts+":"+rnd) == seed, "independent seed %s, audit %s", h2Seed(base, ts+":"+rnd), seed)
	ord := h2Embaralhar(want, seed)
	must(t, slices.Equal(ord, ordenados), "independent shuffle %v, audit %v", ord, ordenados)
	must(t, h2Hash(ord) == hash, "independent hash %s, audit %s", h2Hash(ord), hash)
	must(t, ord[0] == selecionado.String(), "selected %s, want position 0 %s", selecionado, ord[0])

	// The published event and the assignment carry the same values.
	pubs := c.publicados(evento.ConselheiroSorteado)
	must(t, len(pubs) == 1, "%d conselheiro.sorteado, want 1", len(pubs))
	p := payloadDe(pubs[0])
	must(t, pubs[0]["event_id"] == evSorteio.String(), "event_id %v, audit %s", pubs[0]["event_id"], evSorteio)
	must(t, p["seed_publico"] == seed && p["lista_elegiveis_hash"] == hash && p["conselheiro_id"] == selecionado.String(),
		"payload %v vs audit seed=%s hash=%s sel=%s", p, seed, hash, selecionado)
	must(t, p["timestamp"] == ts && pubs[0]["timestamp"] == ts, "timestamps %v / %v, audit %s", p["timestamp"], pubs[0]["timestamp"], ts)
	must(t, p["posicao_sorteada"] == float64(0) && p["total_elegiveis"] == float64(4) && p["metodo_sorteio"] == "fisher_yates", "payload %v", p)
	must(t, c.ativa(demanda) == selecionado, "assignment to %v, audit selected %s", c.ativa(demanda), selecionado)
	var seedAtr, hashAtr string
	_ = c.pool.QueryRow(t.Context(), `SELECT seed_publico, lista_elegiveis_hash FROM d6a.atribuicoes WHERE event_id_sorteio = $1`, evSorteio).Scan(&seedAtr, &hashAtr)
	must(t, seedAtr == seed && hashAtr == hash, "assignment seed/hash %s/%s", seedAtr, hashAtr)
}

// ---- failures and edges ----

func TestT07_TodosOcupados(t *testing.T) {
	t.Parallel()
	c, bairro, _, _ := coloniaComDupla(t)
	_, s1 := c.novaDemanda(bairro)
	_, s2 := c.novaDemanda(bairro)
	must(t, s1 != uuid.Nil && s2 != uuid.Nil && s1 != s2, "both counsellors should be busy")

	d3, _ := c.novaDemanda(bairro)
	h2SemCandidatos(t, c, d3, "todos_ocupados")
	must(t, h2Pendente(c, d3), "d3 not in the queue")
	must(t, c.ativa(d3) == uuid.Nil, "d3 assigned")
	must(t, len(c.publicados(evento.ConselheiroSorteado)) == 2, "want only the two earlier conselheiro.sorteado")
}

func TestT08_TodosInativos(t *testing.T) {
	t.Parallel()
	t.Run("sem_capacitacao", func(t *testing.T) {
		t.Parallel()
		c, bairro := coloniaNoBairro(t)
		a := uuid.New()
		p := cadastro(a, bairro)
		p["capacitacao_concluida"] = false
		c.processar(evento.ConselheiroCadastrado, "1.1.0", p)
		must(t, c.contar(`SELECT count(*) FROM d6a.conselheiros WHERE id = $1 AND NOT capacitacao_concluida`, a) == 1, "untrained row missing")
		d, _ := c.novaDemanda(bairro)
		h2SemCandidatos(t, c, d, "todos_inativos")
		must(t, h2Pendente(c, d), "demand not in the queue")
		must(t, len(c.publicados(evento.ConselheiroSorteado)) == 0, "unexpected conselheiro.sorteado")
	})
	t.Run("sem_capacitacao_e_ocupado", func(t *testing.T) {
		t.Parallel()
		c, bairro := coloniaNoBairro(t)
		treinado, semCap := c.novoConselheiro(bairro), uuid.New()
		p := cadastro(semCap, bairro)
		p["capacitacao_concluida"] = false
		c.processar(evento.ConselheiroCadastrado, "1.1.0", p)
		_, s1 := c.novaDemanda(bairro)
		must(t, s1 == treinado, "d1 to %v, want the trained counsellor", s1)
		d2, _ := c.novaDemanda(bairro)
		// Not everyone holds an assignment: spec 4.3 step 5 says todos_inativos.
		h2SemCandidatos(t, c, d2, "todos_inativos")
		must(t, h2Pendente(c, d2), "d2 not in the queue")
	})
	t.Run("suspenso_vigente", func(t *testing.T) {
		t.Parallel()
		c, bairro := coloniaNoBairro(t)
		a := c.novoConselheiro(bairro)
		c.suspender(a, c.agora().Add(30*24*time.Hour))
		d, _ := c.novaDemanda(bairro)
		h2SemCandidatos(t, c, d, "todos_inativos")
		must(t, h2Pendente(c, d), "demand not in the queue")
		must(t, c.statusConselheiro(a) == "suspenso", "suspended counsellor touched: %s", c.statusConselheiro(a))
	})
}

func TestT09_AgendaParaDemandaJaAtribuida(t *testing.T) {
	t.Parallel()
	c, bairro, _, _ := coloniaComDupla(t)
	demanda, primeiro := c.novaDemanda(bairro)
	must(t, primeiro != uuid.Nil, "demand not assigned")

	// A new event (new event_id) for the same demand.
	id2, seq2 := c.publicar(evento.AgendaItemDisponivel, "1.0.0", agenda(demanda, bairro))
	c.esperarProcessado(id2)
	must(t, h2Offset(c, evento.AgendaItemDisponivel) == int64(seq2), "agenda cursor %d, want %d", h2Offset(c, evento.AgendaItemDisponivel), seq2)
	must(t, c.contar(`SELECT count(*) FROM d6a.atribuicoes WHERE demanda_id = $1`, demanda) == 1, "want one assignment for the demand")
	must(t, c.ativa(demanda) == primeiro, "assignment changed to %v", c.ativa(demanda))
	must(t, len(c.publicados(evento.ConselheiroSorteado)) == 1, "a second conselheiro.sorteado was published")
	must(t, len(c.publicados(evento.SorteioSemCandidatos)) == 0, "unexpected sorteio.sem_candidatos")
	must(t, c.contar(`SELECT count(*) FROM d6a.fila_pendentes`) == 0, "the demand entered the queue")
	must(t, c.contar(`SELECT count(*) FROM d6a.auditoria_sorteios`) == 1, "a second draw was audited")
	c.semDLQ()
}

func TestT10_CadastroDuplicado(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	a := uuid.New()
	ev1 := c.processar(evento.ConselheiroCadastrado, "1.1.0", cadastro(a, bairro))
	ev2, seq2 := c.publicar(evento.ConselheiroCadastrado, "1.1.0", cadastro(a, bairro))
	c.esperarProcessado(ev2)
	must(t, h2Processado(c, ev2), "duplicate not recorded as processed")
	must(t, h2Offset(c, evento.ConselheiroCadastrado) == int64(seq2), "cadastrado cursor %d, want %d", h2Offset(c, evento.ConselheiroCadastrado), seq2)
	must(t, c.contar(`SELECT count(*) FROM d6a.conselheiros WHERE cidadao_id = $1`, a) == 1, "want one counsellor row")
	must(t, c.contar(`SELECT count(*) FROM d6a.conselheiros WHERE id = $1 AND event_id_cadastro = $2 AND event_id_ultima_alteracao = $2`, a, ev1) == 1,
		"the first registration's row was modified")
	must(t, h2ConsumidorEmDia(c), "cadastrado consumer has unsettled messages (the duplicate was not acked)")
	must(t, len(c.dlq()) == 0, "duplicate went to the DLQ: %v", c.dlq())
	// The counsellor still works normally.
	_, sorteado := c.novaDemanda(bairro)
	must(t, sorteado == a, "counsellor not drawable after the duplicate")
}

func TestT11_CicloSemAtribuicaoAtiva(t *testing.T) {
	t.Parallel()
	c := novaColonia(t, opcoes{})
	bairro, outro := c.novaUC(), c.novaUC()
	c.iniciar()
	a, b := c.novoConselheiro(bairro), c.novoConselheiro(outro)
	// Both marked ocupado without any assignment (e.g. a lost update).
	c.exec(`UPDATE d6a.conselheiros SET status = 'ocupado' WHERE id = ANY($1)`, []uuid.UUID{a, b})

	// Without a pending demand: released.
	c.processar(evento.CicloConcluido, "1.0.0", ciclo(b, uuid.New(), outro))
	must(t, c.statusConselheiro(b) == "disponivel", "status %s, want disponivel", c.statusConselheiro(b))
	must(t, c.contar(`SELECT count(*) FROM d6a.atribuicoes`) == 0, "an assignment appeared")

	// With a pending demand in the UC: released, and the sweep draws it.
	d, _ := c.novaDemanda(bairro)
	must(t, h2Pendente(c, d), "demand not pending while the only counsellor reads ocupado")
	c.processar(evento.CicloConcluido, "1.0.0", ciclo(a, uuid.New(), bairro))
	must(t, c.ativa(d) == a, "queue not swept to the released counsellor: %v", c.ativa(d))
	must(t, !h2Pendente(c, d), "demand still pending")
	must(t, c.contar(`SELECT count(*) FROM d6a.atribuicoes WHERE status = 'concluida'`) == 0, "an assignment was closed")
	must(t, len(porDemanda(c.publicados(evento.ConselheiroSorteado), d)) == 1, "no conselheiro.sorteado for the swept demand")
}

func TestT12_QuartaRecusaSuspende(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	a := c.novoConselheiro(bairro)
	demandas, _ := h2RecusasDoUnico(t, c, a, bairro, 3)
	must(t, c.statusConselheiro(a) == "disponivel", "suspended before the fourth refusal")

	// The fourth refusal.
	d4, s4 := c.novaDemanda(bairro)
	must(t, s4 == a, "d4 not drawn to the counsellor")
	antes := c.agora()
	r4 := c.processar(evento.AtribuicaoRecusada, "1.1.0", recusa(a, d4, bairro, "recusa_explicita"))
	demandas = append(demandas, d4)

	st, enc := c.atribuicao(a, d4)
	must(t, st == "recusada" && enc != nil && *enc == r4, "d4 assignment %s / %v", st, enc)
	var maxRec, linhas int
	_ = c.pool.QueryRow(t.Context(), `SELECT max(recusas_consecutivas), count(*) FROM d6a.contador_recusas WHERE conselheiro_id = $1`, a).Scan(&maxRec, &linhas)
	must(t, maxRec == 4 && linhas == 4, "contador max %d rows %d, want 4/4", maxRec, linhas)
	var cons4 int
	var dataRecusa time.Time
	_ = c.pool.QueryRow(t.Context(), `SELECT recusas_consecutivas, data_ultima_recusa FROM d6a.contador_recusas WHERE evento_id_recusa = $1`, r4).Scan(&cons4, &dataRecusa)
	must(t, cons4 == 4, "fourth refusal row recusas_consecutivas %d", cons4)

	must(t, c.statusConselheiro(a) == "suspenso", "status %s, want suspenso", c.statusConselheiro(a))
	var ate *time.Time
	_ = c.pool.QueryRow(t.Context(), `SELECT data_suspensao_ate FROM d6a.conselheiros WHERE id = $1`, a).Scan(&ate)
	must(t, ate != nil, "data_suspensao_ate not set")
	want := antes.Add(90 * 24 * time.Hour)
	must(t, ate.Sub(want).Abs() < time.Second, "data_suspensao_ate %s, want refusal time + 90 days ≈ %s", ate.UTC(), want)
	must(t, ate.Sub(dataRecusa.Add(90*24*time.Hour)).Abs() < 20*time.Millisecond,
		"data_suspensao_ate %s is not the refusal's own time %s + 90 days", ate.UTC(), dataRecusa.UTC())
	for _, d := range demandas {
		must(t, h2Pendente(c, d), "refused demand %s not pending", d)
	}

	// A new demand now finds only a suspended counsellor.
	d5, _ := c.novaDemanda(bairro)
	h2SemCandidatos(t, c, d5, "todos_inativos")
	must(t, h2Pendente(c, d5) && c.ativa(d5) == uuid.Nil, "d5 not pending")
	must(t, len(c.publicados(evento.ConselheiroSorteado)) == 4, "want 4 conselheiro.sorteado (one per refused demand)")
}

func TestT13_TresRecusasNaoSuspende(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	a := c.novoConselheiro(bairro)
	_, recusas := h2RecusasDoUnico(t, c, a, bairro, 3)

	var cons int
	_ = c.pool.QueryRow(t.Context(), `SELECT recusas_consecutivas FROM d6a.contador_recusas WHERE evento_id_recusa = $1`, recusas[2]).Scan(&cons)
	must(t, cons == 3, "third refusal recusas_consecutivas %d, want 3", cons)
	must(t, c.contar(`SELECT count(*) FROM d6a.contador_recusas WHERE conselheiro_id = $1`, a) == 3, "want 3 contador rows")
	must(t, c.statusConselheiro(a) == "disponivel", "status %s, want disponivel", c.statusConselheiro(a))
	must(t, c.contar(`SELECT count(*) FROM d6a.conselheiros WHERE id = $1 AND data_suspensao_ate IS NULL`, a) == 1, "data_suspensao_ate set")
	// Still eligible.
	_, sorteado := c.novaDemanda(bairro)
	must(t, sorteado == a, "counsellor not drawn after 3 refusals")
}

func TestT14_RecusaSemOutroElegivelVaiParaFila(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	a := c.novoConselheiro(bairro)
	d, sorteado := c.novaDemanda(bairro)
	must(t, sorteado == a, "not drawn")
	must(t, len(c.publicados(evento.SorteioSemCandidatos)) == 0, "sem_candidatos before the refusal")

	r := c.processar(evento.AtribuicaoRecusada, "1.1.0", recusa(a, d, bairro, ""))
	st, enc := c.atribuicao(a, d)
	must(t, st == "recusada" && enc != nil && *enc == r, "assignment %s / %v", st, enc)
	must(t, c.ativa(d) == uuid.Nil, "demand still active")
	must(t, h2Pendente(c, d), "demand not in fila_pendentes")
	var cat string
	var score float64
	var nivel int
	_ = c.pool.QueryRow(t.Context(), `SELECT categoria_id, score_final::float8, nivel_precedencia FROM d6a.fila_pendentes WHERE demanda_id = $1`, d).Scan(&cat, &score, &nivel)
	must(t, cat == "SAUDE" && score == 87.5 && nivel == 2, "pending row %s/%v/%d, want the demand's snapshot", cat, score, nivel)
	// The only counsellor is the excluded refuser: not "occupied" (spec 4.3 step 5).
	h2SemCandidatos(t, c, d, "todos_inativos")
	must(t, len(c.publicados(evento.ConselheiroSorteado)) == 1, "a re-draw succeeded")
	must(t, c.statusConselheiro(a) == "disponivel", "refuser status %s", c.statusConselheiro(a))
}

// h2DLQEAvanca publishes payload (missing a required field), waits for the
// dead letter, checks it, then checks the consumer moved on to a good event.
func h2DLQEAvanca(t *testing.T, c *harness, tipo evento.Tipo, versao string, ruim map[string]any, campo string, bom map[string]any) {
	t.Helper()
	ruimID, ruimSeq := c.publicar(tipo, versao, ruim)
	c.eventually("dead letter", func() bool { return len(c.dlq()) >= 1 })
	dl := c.dlq()
	must(t, len(dl) == 1, "%d dead letters, want 1", len(dl))
	must(t, len(c.lerStream(bus.DLQStream, tipo.DLQSubject())) == 1, "dead letter not on subject %s", tipo.DLQSubject())
	erro, _ := dl[0]["_h_D6a-Erro"].(string)
	must(t, strings.Contains(erro, campo) && strings.Contains(erro, "ausente"), "D6a-Erro %q does not name the missing %s", erro, campo)
	must(t, dl[0]["_h_D6a-Subject-Original"] == tipo.Subject(c.cfg.SubjectPrefix), "D6a-Subject-Original %v", dl[0]["_h_D6a-Subject-Original"])
	must(t, dl[0]["_h_D6a-Seq-Original"] == strconv.FormatUint(ruimSeq, 10), "D6a-Seq-Original %v, want %d", dl[0]["_h_D6a-Seq-Original"], ruimSeq)
	must(t, dl[0]["event_id"] == ruimID.String(), "dead letter body event_id %v, want %s", dl[0]["event_id"], ruimID)
	must(t, !h2Processado(c, ruimID), "unusable event recorded as processed")

	bomID, bomSeq := c.publicar(tipo, versao, bom)
	c.esperarProcessado(bomID)
	must(t, h2Offset(c, tipo) == int64(bomSeq), "cursor %d, want the good event's %d", h2Offset(c, tipo), bomSeq)
	c.eventually("consumer settled", func() bool { return h2ConsumidorEmDia(c) })
	must(t, len(c.dlq()) == 1, "more dead letters: %v", c.dlq())
}

func TestT15_AgendaSemDemandaIDVaiParaDLQ(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	ruim := agenda(uuid.New(), bairro)
	delete(ruim, "demanda_id")
	bom := uuid.New()
	h2DLQEAvanca(t, c, evento.AgendaItemDisponivel, "1.0.0", ruim, "demanda_id", agenda(bom, bairro))
	// Only the good demand reached the state.
	must(t, h2Pendente(c, bom), "good demand not pending (nobody registered)")
	must(t, c.contar(`SELECT count(*) FROM d6a.fila_pendentes`) == 1, "the bad event left a pending row")
	h2SemCandidatos(t, c, bom, "nenhum_cadastrado")
	must(t, len(c.publicados(evento.SorteioSemCandidatos)) == 1, "the bad event produced a sem_candidatos")
}

func TestT16_CadastroSemConselheiroIDVaiParaDLQ(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	semID := uuid.New()
	ruim := cadastro(semID, bairro)
	delete(ruim, "conselheiro_id")
	bom := uuid.New()
	h2DLQEAvanca(t, c, evento.ConselheiroCadastrado, "1.1.0", ruim, "conselheiro_id", cadastro(bom, bairro))
	must(t, c.contar(`SELECT count(*) FROM d6a.conselheiros WHERE id = $1`, semID) == 0, "the bad registration inserted a row")
	must(t, c.contar(`SELECT count(*) FROM d6a.conselheiros WHERE id = $1`, bom) == 1, "the good registration is missing")
}

func TestT17_CadastroV100SemCapacitacaoEhElegivel(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	a := uuid.New()
	p := cadastro(a, bairro)
	delete(p, "capacitacao_concluida")
	c.processar(evento.ConselheiroCadastrado, "1.0.0", p)
	must(t, c.contar(`SELECT count(*) FROM d6a.conselheiros WHERE id = $1 AND capacitacao_concluida`, a) == 1, "capacitacao_concluida not true")
	must(t, c.statusConselheiro(a) == "disponivel", "status %s", c.statusConselheiro(a))
	_, sorteado := c.novaDemanda(bairro)
	must(t, sorteado == a, "1.0.0 counsellor not drawn: %v", sorteado)
	must(t, len(c.publicados(evento.ConselheiroSorteado)) == 1, "no conselheiro.sorteado")
}

func TestT18_SuspensaoVencidaEhElegivel(t *testing.T) {
	t.Parallel()
	c := novaColonia(t, opcoes{})
	bairro, outro := c.novaUC(), c.novaUC()
	c.iniciar()
	vencido, vigente := c.novoConselheiro(bairro), c.novoConselheiro(outro)
	agora := c.agora()
	c.suspender(vencido, agora.Add(-24*time.Hour))
	// Control: a suspension still running keeps its counsellor out.
	c.suspender(vigente, agora.Add(24*time.Hour))

	d, sorteado := c.novaDemanda(bairro)
	must(t, sorteado == vencido, "expired suspension not accepted: demand to %v", sorteado)
	pubs := porDemanda(c.publicados(evento.ConselheiroSorteado), d)
	must(t, len(pubs) == 1 && payloadDe(pubs[0])["conselheiro_id"] == vencido.String() && payloadDe(pubs[0])["total_elegiveis"] == float64(1),
		"conselheiro.sorteado %v", pubs)
	must(t, c.statusConselheiro(vencido) == "ocupado", "status %s, want ocupado", c.statusConselheiro(vencido))

	d2, _ := c.novaDemanda(outro)
	h2SemCandidatos(t, c, d2, "todos_inativos")
	must(t, c.statusConselheiro(vigente) == "suspenso", "running suspension lifted")
}

// TestT18x_StubElegibilidadeAtualizada: spec 4.9's stub, acted on
// (CONTRACT §8): the event is processed, its cursor advances, its record
// names the version, its unit's queue is swept (nothing waits there) and no
// counsellor changes; fields beyond the payload's are ignored.
func TestT18x_StubElegibilidadeAtualizada(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	a := c.novoConselheiro(bairro)
	c.novaDemanda(uuid.New()) // pending elsewhere
	const foto = `SELECT (SELECT string_agg(id::text || status || capacitacao_concluida::text || coalesce(data_suspensao_ate::text, '') ||
			event_id_ultima_alteracao::text || atualizado_em::text, ',' ORDER BY id) FROM d6a.conselheiros)
		|| '|' || (SELECT count(*) FROM d6a.atribuicoes) || '|' || (SELECT count(*) FROM d6a.fila_pendentes)
		|| '|' || (SELECT coalesce(sum(tentativas_sorteio), 0) FROM d6a.fila_pendentes)
		|| '|' || (SELECT count(*) FROM d6a.contador_recusas) || '|' || (SELECT count(*) FROM d6a.outbox)
		|| '|' || (SELECT count(*) FROM d6a.auditoria_sorteios)`
	var antes, depois string
	if err := c.pool.QueryRow(t.Context(), foto).Scan(&antes); err != nil {
		t.Fatal(err)
	}

	id, seq := c.publicar(evento.ElegibilidadeAtualizada, "1.0.0", map[string]any{
		"unidade_civica_id": bairro, "versao_parametros": "2", "conselheiro_id": a, "status": "inativo", "capacitacao_concluida": false,
	})
	c.esperarProcessado(id)
	var tipo string
	var seqReg int64
	_ = c.pool.QueryRow(t.Context(), `SELECT tipo_evento, sequence FROM d6a.eventos_processados WHERE event_id = $1`, id).Scan(&tipo, &seqReg)
	must(t, tipo == string(evento.ElegibilidadeAtualizada) && seqReg == int64(seq), "eventos_processados %q/%d, want %q/%d", tipo, seqReg, evento.ElegibilidadeAtualizada, seq)
	must(t, h2Offset(c, evento.ElegibilidadeAtualizada) == int64(seq), "cursor %d, want %d", h2Offset(c, evento.ElegibilidadeAtualizada), seq)
	c.eventually("consumer settled", func() bool { return h2ConsumidorEmDia(c) })
	if err := c.pool.QueryRow(t.Context(), foto).Scan(&depois); err != nil {
		t.Fatal(err)
	}
	must(t, antes == depois, "state changed:\n before %s\n after  %s", antes, depois)
	must(t, c.contar(`SELECT count(*) FROM d6a.transparencia_registros WHERE convert_from(registro, 'UTF8')::jsonb->>'tipo' = 'conselheiro.elegibilidade_atualizada'
		AND convert_from(registro, 'UTF8')::jsonb->>'versao_parametros' = '2' AND convert_from(registro, 'UTF8')::jsonb->>'event_id' = $1`, id.String()) == 1, "no record of the update with its version")
	c.semDLQ()
	must(t, len(c.publicados(evento.ConselheiroSorteado)) == 0 && len(c.publicados(evento.SorteioSemCandidatos)) == 1, "unexpected publications")
}
