package colonia_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/replay"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// registros reads the colony's log, in order.
func (c *harness) registros() []registro.Registravel {
	t := c.t
	t.Helper()
	rows, err := c.pool.Query(t.Context(), `SELECT registro FROM d6a.transparencia_registros ORDER BY indice`)
	must(t, err == nil, "%v", err)
	defer rows.Close()
	var regs []registro.Registravel
	for rows.Next() {
		var b []byte
		must(t, rows.Scan(&b) == nil, "scan")
		f, err := registro.LerRegistravel(b)
		must(t, err == nil, "record %s: %v", b, err)
		regs = append(regs, f)
	}
	return regs
}

// sorteioDe is the index of the draw of demanda in regs (-1: none).
func sorteioDe(regs []registro.Registravel, demanda uuid.UUID) int {
	return slices.IndexFunc(regs, func(r registro.Registravel) bool {
		s, ok := r.(registro.Registro)
		return ok && s.DemandaID == demanda
	})
}

// redesenhar recomputes a rigged draw's seed, order and winner from its
// (changed) list, so the record verifies by itself.
func redesenhar(t *testing.T, r registro.Registro) registro.Registro {
	t.Helper()
	res, err := sorteio.SortearComRodada(r.Base, r.Timestamp, registro.Randomness(r.AssinaturaRodada), r.ElegiveisEntrada)
	must(t, err == nil, "%v", err)
	r.ElegiveisEntrada, r.Ordenados, r.ListaElegiveisHash, r.Seed = res.Entrada, res.Ordenados, res.ListaHash, res.Seed
	r.ConselheiroID = uuid.MustParse(res.Selecionado)
	must(t, registro.Conferir(r) == nil, "the rigged draw does not verify by itself: %v", registro.Conferir(r))
	return r
}

// CONTRACT §7 "Hierarchy", "Queue order", "Consumed is not ahead" and "A
// demand's own check" (issue 37): a state with a city and two
// neighbourhoods, a counsellor in the city and one in the state. The
// honest log replays clean with the bus, a hierarchy change included
// (recorded, then used); each rigged log, re-signed with the colony's key,
// is caught at the right record, naming the unit or the demand.
func TestReplayHierarquiaEFila(t *testing.T) {
	t.Parallel()
	c := novaColonia(t, opcoes{})
	estado := c.novaUC()
	cidade, bairro1, bairro2 := uuid.New(), uuid.New(), uuid.New()
	uc(c, cidade, estado)
	uc(c, bairro1, cidade)
	uc(c, bairro2, cidade)
	c.iniciar()
	conselheiroCidade := c.novoConselheiro(cidade)
	conselheiroEstado := c.novoConselheiro(estado)

	d1, x1 := c.novaDemanda(bairro1) // the city's counsellor, one step up
	must(t, x1 == conselheiroCidade, "d1 drawn to %v, want the city's %v", x1, conselheiroCidade)
	d2, x2 := c.novaDemanda(bairro1) // the state's, two steps up
	must(t, x2 == conselheiroEstado, "d2 drawn to %v, want the state's %v", x2, conselheiroEstado)
	d3, x3 := c.novaDemanda(bairro1) // both busy: queued first
	d4, x4 := c.novaDemanda(bairro2) // queued second
	must(t, x3 == uuid.Nil && x4 == uuid.Nil, "d3, d4 drawn to %v, %v", x3, x4)
	// The city's counsellor freed: the sweep of the city serves d3, the
	// older of the two waiting demands of its coverage.
	c.processar(evento.CicloConcluido, "1.0.0", ciclo(conselheiroCidade, d1, cidade))
	c.eventually("d3 drawn by the sweep", func() bool { return c.ativa(d3) == conselheiroCidade })
	// bairro2 moves under the state: a new link, recorded before the
	// decision that climbs it, once the hierarchy cache refreshes.
	c.exec(`UPDATE core.uc_polygons SET parent_uc_id = $1 WHERE id = $2`, estado, bairro2)
	c.clock.Avancar(7 * time.Hour)
	c.processar(evento.CicloConcluido, "1.0.0", ciclo(conselheiroEstado, d2, estado))
	c.eventually("d4 drawn by the state's sweep", func() bool { return c.ativa(d4) == conselheiroEstado })
	// Last input: a registration in a unit of its own.
	so := c.novaUC()
	cadastroID, cadastroSeq := c.publicar(evento.ConselheiroCadastrado, "1.1.0", cadastro(uuid.New(), so))
	c.esperarProcessado(cadastroID)
	c.eventually("the registration acknowledged on the durable", func() bool {
		n, err := c.w.Bus.ConsumidoAte(context.Background())
		return err == nil && n >= cadastroSeq
	})
	regs := c.registros()

	// The new link is a record before the draw that uses it.
	k4 := sorteioDe(regs, d4)
	must(t, k4 > 0, "no draw of d4")
	movido := slices.IndexFunc(regs, func(r registro.Registravel) bool {
		h, ok := r.(registro.Hierarquia)
		return ok && h.UnidadeCivicaID == bairro2 && h.ParentUcID != nil && *h.ParentUcID == estado
	})
	must(t, movido > 0 && movido < k4, "bairro2 under the state recorded at %d, its draw at %d", movido, k4)
	must(t, slices.Equal(regs[k4].(registro.Registro).Cadeia, []string{bairro2.String(), estado.String()}), "d4's chain %v", regs[k4].(registro.Registro).Cadeia)

	// Honest, with the bus: no divergence; the demand's own check lists
	// its draw and passes.
	cli := &log.Cliente{Base: "http://" + c.w.Addr.String(), Barramento: c.w.Bus}
	rp := replay.Novo(uuid.Nil)
	rp.AlvoDemanda = d3
	res, err := cli.ReproduzirEm(t.Context(), rp, nil)
	must(t, err == nil && res.Primeira == nil, "replay: %v / %v", err, res.Primeira)
	must(t, len(rp.Divergencias) == 0 && rp.Adiante == 0, "honest log diverges: %v (%d ahead)", rp.Divergencias, rp.Adiante)
	k3 := sorteioDe(regs, d3)
	must(t, len(rp.Passada) == 0 && slices.ContainsFunc(rp.LinhaDemanda, func(a replay.Acontecimento) bool { return a.Indice == int64(k3) }),
		"d3's own check on the honest log: passed over %v, timeline %v (its draw is record %d)", rp.Passada, rp.LinhaDemanda, k3)

	primeira := func(rp *replay.Replay) *registro.Falha {
		t.Helper()
		must(t, len(rp.Divergencias) > 0, "no divergence")
		return rp.Divergencias[0]
	}
	k1 := sorteioDe(regs, d1)
	orig := regs[k1].(registro.Registro)

	// 1. A chain that skips the city: bairro1's parent told as the state,
	// the state's counsellor drawn. Caught at the draw, naming bairro1;
	// the city counsellor's own check names it too.
	rig := orig
	rig.Cadeia = []string{bairro1.String(), estado.String()}
	rig.Degrau = estado
	rig.ElegiveisEntrada = []string{conselheiroEstado.String()}
	rig = redesenhar(t, rig)
	rigado := slices.Clone(regs)
	rigado[k1] = rig
	d := primeira(c.servirAdulterado(rigado, uuid.Nil).Replay)
	must(t, d.Indice == int64(k1) && strings.Contains(d.Motivo, "o pai de "+bairro1.String()+" é "+cidade.String()), "chain skipping the city: %v", d)
	proprio := c.servirAdulterado(rigado, conselheiroCidade).Replay
	must(t, len(proprio.Deixado) > 0 && proprio.Deixado[0].Indice == int64(k1), "the city counsellor's own check on the skipping chain: %v", proprio.Deixado)

	// 2. A chain through a unit that is not the recorded parent.
	rig = orig
	rig.Cadeia = []string{bairro1.String(), bairro2.String(), cidade.String(), estado.String()}
	rigado = slices.Clone(regs)
	rigado[k1] = redesenhar(t, rig)
	d = primeira(c.servirAdulterado(rigado, uuid.Nil).Replay)
	must(t, d.Indice == int64(k1) && strings.Contains(d.Motivo, bairro1.String()+" para "+bairro2.String()), "chain through a unit not the parent: %v", d)

	// 3. The sweep serves the newer demand: d4 instead of d3. Caught at
	// the draw, naming d3; d3's own check names it.
	s3 := regs[k3].(registro.Registro)
	s3.DemandaID, s3.UnidadeCivicaID = d4, bairro2
	s3.Cadeia = []string{bairro2.String(), cidade.String(), estado.String()}
	rigado = slices.Clone(regs)
	rigado[k3] = redesenhar(t, s3)
	rp = replay.Novo(uuid.Nil)
	rp.AlvoDemanda = d3
	res = c.servirEm(rigado, rp)
	d = primeira(rp)
	must(t, d.Indice == int64(k3) && strings.Contains(d.Motivo, "a devida era a demanda "+d3.String()), "a sweep serving a newer demand: %v", d)
	must(t, len(rp.Passada) > 0 && rp.Passada[0].Indice < int64(k3) && strings.Contains(rp.Passada[0].Texto, d4.String()),
		"d3's own check on the rigged queue: %v (the sweep before record %d)", rp.Passada, k3)

	// 4. The sweep serves nobody while d3 was due and the city's
	// counsellor free: its draw left out. Caught at the sweep, naming d3.
	rigado = slices.Delete(slices.Clone(regs), k3, k3+1)
	d = primeira(c.servirAdulterado(rigado, uuid.Nil).Replay)
	varredura := regs[k3-1].(registro.Entrada)
	must(t, varredura.Tipo == registro.TipoVarredura && d.Indice == int64(k3-1) && strings.Contains(d.Motivo, d3.String()) &&
		d.Conselheiro != nil && *d.Conselheiro == conselheiroCidade, "a sweep serving nobody while d3 was due: %v", d)

	// 4b. The sweep itself left out with its draw: the cycle end is not
	// followed by the sweep its handler makes. Caught at the cycle end.
	rigado = slices.Delete(slices.Clone(regs), k3-1, k3+1)
	d = primeira(c.servirAdulterado(rigado, uuid.Nil).Replay)
	ciclo, ok := regs[k3-2].(registro.Entrada)
	must(t, ok && ciclo.Tipo == registro.TipoCicloConcluido && d.Indice == int64(k3-2) && strings.Contains(d.Motivo, "não é seguido da varredura"),
		"a cycle end without its sweep: %v", d)
	// 4c. The sweep told as another unit's (one where nobody waits): with
	// the bus, the cycle end's payload names the unit it sweeps.
	outra := c.novaUC()
	v := varredura
	v.UnidadeCivicaID = &outra
	rigado = slices.Clone(regs)
	rigado[k3-1] = v
	rigado = slices.Delete(rigado, k3, k3+1)
	d = primeira(c.servirAdulterado(rigado, uuid.Nil).Replay)
	must(t, d.Indice == int64(k3-1) && strings.Contains(d.Motivo, "a varredura devida é a da unidade "+cidade.String()), "a sweep of another unit: %v", d)

	// 5. The last input dropped (the registration and its sweep): the bus
	// shows it consumed, so it is a divergence, not "ahead".
	n := len(regs)
	e, ok := regs[n-2].(registro.Entrada)
	must(t, ok && e.Tipo == registro.TipoCadastro && e.EventID == cadastroID, "the second last record is %v, want the registration", regs[n-2])
	res = c.servirAdulterado(regs[:n-2], uuid.Nil)
	d = primeira(res.Replay)
	must(t, res.Barramento && res.Replay.Adiante == 0 && strings.Contains(d.Motivo, cadastroID.String()), "the last registration dropped: %v (%d ahead)", d, res.Replay.Adiante)
	c.semDLQ()
}
