package colonia_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/replay"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// Phase-2 eligibility inputs (spec 8.3, CONTRACT §8, issue 41), against the
// real service, bus and database.

func capacitacao(conselheiro uuid.UUID) map[string]any {
	return map[string]any{"conselheiro_id": conselheiro, "curso_id": "formacao-basica", "concluida_em": "2026-11-29T12:00:00.000Z"}
}

func vinculo(conselheiro, ucID uuid.UUID, valido bool) map[string]any {
	return map[string]any{"conselheiro_id": conselheiro, "unidade_civica_id": ucID, "valido": valido, "validado_em": "2026-11-29T12:00:00.000Z"}
}

func progressao(conselheiro, ucID uuid.UUID, nivel int) map[string]any {
	return map[string]any{"conselheiro_id": conselheiro, "unidade_civica_id": ucID, "nivel_atuacao": nivel}
}

// coloniaComPortoes is a colony, not started yet, with both gates on.
func coloniaComPortoes(t *testing.T) *harness {
	t.Helper()
	c := novaColonia(t, opcoes{})
	c.cfg.CapacitacaoExterna, c.cfg.ExigirVinculo = true, true
	return c
}

// filaDe is the demand's pending attempts, -1 when it is not queued.
func (c *harness) tentativas(demanda uuid.UUID) int {
	c.t.Helper()
	if c.contar(`SELECT count(*) FROM d6a.fila_pendentes WHERE demanda_id = $1`, demanda) == 0 {
		return -1
	}
	return c.contar(`SELECT tentativas_sorteio FROM d6a.fila_pendentes WHERE demanda_id = $1`, demanda)
}

// fase2Historia runs every phase-2 scenario of the issue in one colony with
// both gates on, so its log replays as one: it returns the colony, the
// counsellor whose link is revoked (r), the one trained late (k) and the
// demand of the revocation's next draw (depois).
func fase2Historia(t *testing.T) (c *harness, k, r uuid.UUID) {
	t.Helper()
	c = coloniaComPortoes(t)
	raiz := c.novaUC()
	cidade, b1, b2, outra := uuid.New(), uuid.New(), uuid.New(), c.novaUC()
	uc(c, cidade, raiz)
	uc(c, b1, cidade)
	uc(c, b2, cidade)
	bairro := c.novaUC()
	c.iniciar()

	// 1. Self-declared training is not enough: the demand waits until
	// capacitação.concluída, whose sweep draws it.
	k = c.novoConselheiro(bairro) // capacitacao_concluida: true in the payload
	c.processar(evento.VinculoValidado, "1.0.0", vinculo(k, bairro, true))
	d1, x := c.novaDemanda(bairro)
	must(t, x == uuid.Nil, "self-declared training drew %v", x)
	h2SemCandidatos(t, c, d1, "todos_inativos")
	c.processar(evento.CapacitacaoConcluida, "1.0.0", capacitacao(k))
	must(t, c.ativa(d1) == k, "the training's sweep drew %v, want %v", c.ativa(d1), k)
	c.processar(evento.CicloConcluido, "1.0.0", ciclo(k, d1, bairro))

	// 2. A link to another unit changes nothing; the link to the
	// counsellor's unit makes them eligible, and its sweep draws.
	v := c.novoConselheiro(outra)
	c.processar(evento.CapacitacaoConcluida, "1.0.0", capacitacao(v))
	d2, x := c.novaDemanda(outra)
	must(t, x == uuid.Nil, "drawn to %v without a link", x)
	c.processar(evento.VinculoValidado, "1.0.0", vinculo(v, bairro, true))
	must(t, c.ativa(d2) == uuid.Nil && c.tentativas(d2) >= 1, "a link to another unit drew %v", c.ativa(d2))
	c.processar(evento.VinculoValidado, "1.0.0", vinculo(v, outra, true))
	must(t, c.ativa(d2) == v, "the link's sweep drew %v, want %v", c.ativa(d2), v)

	// 3. A revoked link leaves the active assignment alone and makes the
	// counsellor ineligible for the next demand.
	c.processar(evento.VinculoValidado, "1.0.0", vinculo(v, outra, false))
	must(t, c.ativa(d2) == v && c.statusConselheiro(v) == "ocupado", "the revocation ended the assignment: %v %s", c.ativa(d2), c.statusConselheiro(v))
	c.processar(evento.CicloConcluido, "1.0.0", ciclo(v, d2, outra))
	d3, x := c.novaDemanda(outra)
	must(t, x == uuid.Nil, "a revoked link drew %v", x)
	h2SemCandidatos(t, c, d3, "todos_inativos")
	r = v
	// The console's queue says why: the chain's one counsellor has no valid link.
	fila, err := c.w.Console.Fila(t.Context(), &outra)
	must(t, err == nil && len(fila) == 1 && fila[0].DemandaID == d3 && fila[0].PorQue != nil &&
		fila[0].PorQue.Cadastrados == 1 && fila[0].PorQue.SemVinculo == 1 && fila[0].PorQue.SemCapacitacao == 0 && fila[0].PorQue.Regras.ExigirVinculo,
		"console queue of %v: %v %+v", outra, err, fila)

	// 4. A progression to the city draws a waiting demand of a sibling
	// neighbourhood.
	p := c.novoConselheiro(b1)
	c.processar(evento.CapacitacaoConcluida, "1.0.0", capacitacao(p))
	c.processar(evento.VinculoValidado, "1.0.0", vinculo(p, b1, true))
	d4, x := c.novaDemanda(b2)
	must(t, x == uuid.Nil, "drawn to %v from a sibling neighbourhood", x)
	c.processar(evento.ProgressaoHabilitada, "1.0.0", progressao(p, cidade, 5))
	must(t, c.ativa(d4) == p, "the progression's sweep drew %v, want %v", c.ativa(d4), p)
	var ucAtual, ucCadastro uuid.UUID
	var nivel int
	must(t, c.pool.QueryRow(t.Context(), `SELECT unidade_civica_id, unidade_civica_id_cadastro, nivel_progressao FROM d6a.conselheiros WHERE id = $1`, p).
		Scan(&ucAtual, &ucCadastro, &nivel) == nil, "read the progressed counsellor")
	must(t, ucAtual == cidade && ucCadastro == b1 && nivel == 5, "unit %v (registered %v), level %d", ucAtual, ucCadastro, nivel)

	// 5. elegibilidade_atualizada: consumed, recorded with its version, its
	// unit's queue swept (d3 tried again), not dead-lettered.
	antes := c.tentativas(d3)
	id := c.processar(evento.ElegibilidadeAtualizada, "1.0.0", map[string]any{"unidade_civica_id": outra, "versao_parametros": "2026.12-a"})
	must(t, c.contar(`SELECT count(*) FROM d6a.transparencia_registros WHERE convert_from(registro, 'UTF8')::jsonb->>'event_id' = $1
		AND convert_from(registro, 'UTF8')::jsonb->>'versao_parametros' = '2026.12-a'`, id.String()) == 1, "no record with the version")
	must(t, c.tentativas(d3) == antes+1, "the update's sweep did not try d3: %d → %d attempts", antes, c.tentativas(d3))
	must(t, c.contar(`SELECT count(*) FROM d6a.criterios_uc WHERE unidade_civica_id = $1 AND versao_parametros = '2026.12-a'`, outra) == 1, "criteria version not stored")
	c.esperarOutboxVazio()
	c.semDLQ()
	return c, k, r
}

// TestF2_PortoesLigados: the scenarios of issue 41 with both gates on,
// then `verify --url --all --replay` over the whole run: it passes, the
// counsellor's own check explains each decision a gate left them out of,
// and a log rigged to draw a counsellor the gate excluded fails, naming the
// record and the counsellor.
func TestF2_PortoesLigados(t *testing.T) {
	t.Parallel()
	c, k, r := fase2Historia(t)

	cli := &log.Cliente{Base: "http://" + c.w.Addr.String(), Barramento: c.w.Bus}
	res, err := cli.Reproduzir(t.Context(), uuid.Nil, nil)
	must(t, err == nil && res.Primeira == nil, "replay: %v / %v", err, res.Primeira)
	must(t, len(res.Replay.Divergencias) == 0 && res.Replay.Desconhecidos() == 0, "honest log diverges: %v", res.Replay.Divergencias)
	// None dropped: the phase-2 messages on the bus have their records
	// (ten of them in fase2Historia, with five registrations and cycle ends).
	rp0 := res.Replay
	must(t, res.Barramento && rp0.Mensagens >= 15 && rp0.Registradas+rp0.SemEfeito == rp0.Mensagens && rp0.Invalidas == 0,
		"bus messages against the records: checked %v, %d messages, %d recorded, %d without effect", res.Barramento, rp0.Mensagens, rp0.Registradas, rp0.SemEfeito)

	explica := func(alvo uuid.UUID, motivo string) {
		t.Helper()
		res, err := cli.Reproduzir(t.Context(), alvo, nil)
		must(t, err == nil && len(res.Replay.Deixado) == 0, "own check of %v: %v, left out of %v", alvo, err, res.Replay.Deixado)
		must(t, slices.ContainsFunc(res.Replay.Linha, func(a replay.Acontecimento) bool {
			return strings.Contains(a.Texto, "fora por regra ("+motivo+")")
		}), "own check of %v does not say %q: %v", alvo, motivo, res.Replay.Linha)
	}
	explica(k, "capacitação não registrada")
	explica(r, "sem vínculo validado com a UC")

	// Rigged: the validation of r's link recorded as a revocation. Every
	// record still verifies by itself; the draw it allowed does not follow
	// from the records before it.
	var regs []registro.Registravel
	rows, err := c.pool.Query(t.Context(), `SELECT registro FROM d6a.transparencia_registros ORDER BY indice`)
	must(t, err == nil, "%v", err)
	for rows.Next() {
		var b []byte
		must(t, rows.Scan(&b) == nil, "scan")
		f, err := registro.LerRegistravel(b)
		must(t, err == nil, "record %s: %v", b, err)
		regs = append(regs, f)
	}
	rows.Close()
	must(t, slices.ContainsFunc(regs, func(x registro.Registravel) bool {
		e, ok := x.(registro.Entrada)
		return ok && e.Tipo == registro.TipoRegras && *e.CapacitacaoExterna && *e.ExigirVinculo
	}), "the gates in force are not in the log")
	i := -1
	for j, x := range regs {
		if e, ok := x.(registro.Entrada); ok && e.Tipo == registro.TipoVinculo && *e.ConselheiroID == r && *e.Valido {
			i = j // the last valid link of r: to their own unit
		}
	}
	must(t, i >= 0, "no validation of r's link in the log")
	falso := false
	rig := regs[i].(registro.Entrada)
	rig.Valido = &falso
	rigado := slices.Clone(regs)
	rigado[i] = rig
	rp := c.servirAdulterado(rigado, uuid.Nil).Replay
	must(t, len(rp.Divergencias) > 0 && rp.Divergencias[0].Indice > int64(i) && rp.Divergencias[0].Conselheiro != nil && *rp.Divergencias[0].Conselheiro == r &&
		strings.Contains(rp.Divergencias[0].Motivo, "sem vínculo validado com a UC"), "a draw the gate excluded: %v", rp.Divergencias)
}

// TestF2_EntradasRuins: every bad payload of a phase-2 input is a dead
// letter whose D6a-Erro names the reason, and changes nothing.
func TestF2_EntradasRuins(t *testing.T) {
	t.Parallel()
	c := coloniaComPortoes(t)
	c.iniciar()
	a, u := uuid.New(), uuid.New()
	casos := []struct {
		tipo    evento.Tipo
		payload map[string]any
		motivo  string
	}{
		{evento.CapacitacaoConcluida, map[string]any{"curso_id": "x", "concluida_em": "2026-11-29"}, "payload.conselheiro_id ausente"},
		{evento.CapacitacaoConcluida, map[string]any{"conselheiro_id": "abc", "curso_id": "x", "concluida_em": "2026-11-29"}, "payload.conselheiro_id não é UUID"},
		{evento.VinculoValidado, map[string]any{"conselheiro_id": a, "unidade_civica_id": u, "valido": "sim"}, "payload.valido não é booleano"},
		{evento.VinculoValidado, map[string]any{"conselheiro_id": a, "valido": true}, "payload.unidade_civica_id ausente"},
		{evento.ProgressaoHabilitada, map[string]any{"conselheiro_id": a, "unidade_civica_id": u, "nivel_atuacao": 8}, "payload.nivel_atuacao fora de 1..7"},
		{evento.ProgressaoHabilitada, map[string]any{"conselheiro_id": a, "unidade_civica_id": u, "nivel_atuacao": 0}, "payload.nivel_atuacao fora de 1..7"},
		{evento.ProgressaoHabilitada, map[string]any{"conselheiro_id": a, "nivel_atuacao": 3}, "payload.unidade_civica_id ausente"},
		{evento.ElegibilidadeAtualizada, map[string]any{"versao_parametros": "2"}, "payload.unidade_civica_id ausente"},
		{evento.ElegibilidadeAtualizada, map[string]any{"unidade_civica_id": "uc-1", "versao_parametros": "2"}, "payload.unidade_civica_id não é UUID"},
	}
	seqs := map[string]string{}
	for _, k := range casos {
		_, seq := c.publicar(k.tipo, "1.0.0", k.payload)
		seqs[strconv.FormatUint(seq, 10)] = k.motivo
	}
	c.eventually("every bad payload dead-lettered", func() bool { return len(c.dlq()) == len(casos) })
	for _, d := range c.dlq() {
		seq, _ := d["_h_D6a-Seq-Original"].(string)
		erro, _ := d["_h_D6a-Erro"].(string)
		must(t, seqs[seq] != "" && strings.Contains(erro, seqs[seq]), "dead letter of seq %s says %q, want %q", seq, erro, seqs[seq])
	}
	must(t, c.contar(`SELECT (SELECT count(*) FROM d6a.capacitacoes) + (SELECT count(*) FROM d6a.vinculos) + (SELECT count(*) FROM d6a.criterios_uc)`) == 0, "a bad payload changed the state")
}

// TestF2_PortoesDesligados: with both gates off (the default), the MVP
// rule holds: a self-declared training counts, no link is needed, and the
// external record trains an untrained counsellor and sweeps.
func TestF2_PortoesDesligados(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	id := uuid.New()
	p := cadastro(id, bairro)
	p["capacitacao_concluida"] = false
	c.processar(evento.ConselheiroCadastrado, "1.1.0", p)
	d, x := c.novaDemanda(bairro)
	must(t, x == uuid.Nil, "untrained counsellor drawn")
	c.processar(evento.CapacitacaoConcluida, "1.0.0", capacitacao(id))
	must(t, c.ativa(d) == id, "the training's sweep drew %v", c.ativa(d))
	a := c.novoConselheiro(bairro)
	_, y := c.novaDemanda(bairro)
	must(t, y == a, "self-declared training without a link drew %v, want %v", y, a)
	must(t, c.contar(`SELECT count(*) FROM d6a.regras_elegibilidade`) == 0, "gates recorded while both are off")
	c.semDLQ()
}
