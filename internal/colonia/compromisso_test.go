package colonia_test

import (
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/beacon"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/verificar/banco"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// CONTRACT §4a "Commitment time C", with two real witnesses (litewitness)
// and K = 2: each draw's trigger is committed by a d6a.compromisso record
// before its decision, the cosigned checkpoints that fix C are records
// before the draw, and C is the later of the two witnesses' first
// cosignatures covering it. The honest log replays clean; a draw whose C
// is earlier than its recorded cosignatures allow (its round and seed
// recomputed from that C, so the record verifies by itself), and a log
// without the cosigned checkpoints, are each caught at the draw.
func TestCompromissoTestemunhado(t *testing.T) {
	t.Parallel()
	c := novaColonia(t, opcoes{})
	_, vkey := c.chaveDoLog()
	c.comTestemunhas(vkey, "tce.example/w1", "mp.example/w2")
	c.cfg.LogQuorum = 2
	c.iniciar()
	c.w.Testemunhas.Intervalo = 200 * time.Millisecond

	bairro := c.novaUC()
	for range 3 {
		c.novoConselheiro(bairro)
	}
	for range 2 {
		_, s := c.novaDemanda(bairro)
		must(t, s != uuid.Nil, "no draw")
	}
	c.esperarOutboxVazio()
	regs := c.registrosDoLog()

	ir := slices.IndexFunc(regs, func(r registro.Registravel) bool { _, ok := r.(registro.RegrasSorteio); return ok })
	must(t, ir >= 0, "no d6a.regras_sorteio record")
	regras := regs[ir].(registro.RegrasSorteio)
	must(t, regras.Quorum == 2 && len(regras.Testemunhas) == 2, "rule record %+v: want both witnesses and K = 2", regras)
	cadeia, err := regras.CadeiaBeacon()
	must(t, err == nil, "%v", err)

	var sorteios []int
	for i, r := range regs {
		s, ok := r.(registro.Registro)
		if !ok {
			continue
		}
		sorteios = append(sorteios, i)
		ic := slices.IndexFunc(regs[:i], func(r registro.Registravel) bool {
			cp, ok := r.(registro.Compromisso)
			return ok && cp.Gatilho.String() == s.Base
		})
		must(t, ic >= 0, "draw %d: no d6a.compromisso record of its trigger %s before it", i, s.Base)
		var cs []registro.CossinadaEm
		for j := ic + 1; j < i; j++ {
			if r, ok := regs[j].(registro.CossinaturasRegistro); ok {
				em, err := r.CossinadasEm(regras.Testemunhas)
				must(t, err == nil, "record %d: %v", j, err)
				cs = append(cs, em...)
			}
		}
		want, ok := registro.CompromissoTestemunhado(int64(ic), 2, regras.Testemunhas, cs)
		must(t, ok && s.Compromisso == sorteio.FormatTimestamp(want), "draw %d: compromisso %s, want %v from the cosignatures recorded between its commitment (%d) and it", i, s.Compromisso, want, ic)
		tt, _ := sorteio.ParseTimestamp(s.Timestamp)
		must(t, !want.Before(tt.Truncate(time.Second)), "draw %d: C %v before T %s", i, want, s.Timestamp)
		t.Logf("draw %d: T %s, C %s (commitment record %d), round %d", i, s.Timestamp, s.Compromisso, ic, *s.Rodada)
	}
	must(t, len(sorteios) == 2, "draws at %v, want 2", sorteios)

	// Honest, through the public routes.
	cli := &log.Cliente{Base: "http://" + c.w.Addr.String(), Barramento: c.w.Bus}
	res, err := cli.Reproduzir(t.Context(), uuid.Nil, nil)
	must(t, err == nil && res.Primeira == nil && len(res.Replay.Divergencias) == 0, "honest replay: %v / %v / %v", err, res.Primeira, res.Replay.Divergencias)

	falhaEm := func(nome string, rigado []registro.Registravel, indice int, campo string) {
		t.Helper()
		r := c.servirAdulterado(rigado, uuid.Nil)
		achou := r.Primeira != nil && strings.Contains(r.Primeira.Error(), campo)
		for _, d := range r.Replay.Divergencias {
			achou = achou || (d.Indice == int64(indice) && strings.Contains(d.Motivo, campo))
		}
		must(t, achou, "%s: not caught at record %d naming %s (first failure %v, divergences %v)", nome, indice, campo, r.Primeira, r.Replay.Divergencias)
	}

	// 1. C two seconds earlier than the cosignatures allow, with the round
	// that C would owe, properly signed, and the seed recomputed.
	k := sorteios[0]
	orig := regs[k].(registro.Registro)
	cOrig, _ := sorteio.ParseTimestamp(orig.Compromisso)
	cedo := cOrig.Add(-2 * time.Second)
	p, err := beacon.AbrirPrivado(c.cfg.DataDir, cadeia.Periodo)
	must(t, err == nil, "the colony's private beacon: %v", err)
	outra := p.Assinar(registro.RodadaDevida(cadeia, cedo, regras.Margem()))
	rig := orig
	n := int64(outra.Numero)
	rig.Rodada, rig.AssinaturaRodada, rig.Compromisso = &n, hex.EncodeToString(outra.Assinatura), sorteio.FormatTimestamp(cedo)
	rig = redesenhar(t, rig)
	rigado := slices.Clone(regs)
	rigado[k] = rig
	falhaEm("an earlier C", rigado, k, "registro.compromisso")

	// 2. The cosigned checkpoints left out: nothing fixes C.
	var sem []registro.Registravel
	kSem := k
	for i, r := range regs {
		if _, ok := r.(registro.CossinaturasRegistro); ok {
			if i < k {
				kSem--
			}
			continue
		}
		sem = append(sem, r)
	}
	falhaEm("no cosigned checkpoints", sem, kSem, "registro.compromisso")

	// 3. The database's own check (d6a verify --event-id) takes C from the
	// log's records too: honest, it names C; with the audit row's C moved
	// by a millisecond that keeps its round (so every other check holds),
	// it fails on compromisso.
	// The harness's clock is held (data_sorteio 2026-11-29) while T is the
	// bus's: the assignment's time is set to T so the check reaches C.
	tOrig, _ := sorteio.ParseTimestamp(orig.Timestamp)
	_, err = c.pool.Exec(t.Context(), `UPDATE d6a.atribuicoes SET data_sorteio = $2 WHERE event_id_sorteio = $1`, orig.EventIDSorteio, tOrig)
	must(t, err == nil, "aligning data_sorteio: %v", err)
	rel, err := banco.Verificar(t.Context(), c.w.Store, orig.EventIDSorteio, banco.Opcoes{})
	must(t, err == nil && strings.Contains(rel.String(), "compromisso: C="+orig.Compromisso), "verify --event-id, honest: %v\n%s", err, rel)
	movido := cOrig.Add(time.Millisecond)
	if registro.RodadaDevida(cadeia, movido, regras.Margem()) != uint64(*orig.Rodada) {
		movido = cOrig.Add(-time.Millisecond)
	}
	must(t, registro.RodadaDevida(cadeia, movido, regras.Margem()) == uint64(*orig.Rodada), "no C a millisecond away owes round %d", *orig.Rodada)
	_, err = c.pool.Exec(t.Context(), `UPDATE d6a.auditoria_sorteios SET compromisso = $2 WHERE event_id_sorteio = $1`, orig.EventIDSorteio, sorteio.FormatTimestamp(movido))
	must(t, err == nil, "moving the audit row's C: %v", err)
	_, err = banco.Verificar(t.Context(), c.w.Store, orig.EventIDSorteio, banco.Opcoes{})
	var f *registro.Falha
	must(t, errors.As(err, &f) && f.Campo == "registro.compromisso", "verify --event-id with C moved by 1 ms: %v, want a failure on compromisso", err)
}

// CONTRACT §4a: `d6a verify --event-id` checks a draw's round under the
// rule in force when it was decided. A later start with another margin
// records a new d6a.regras_sorteio; the older draw is still checked under
// the rule before it (under the new margin its round is not the first
// after C + margin), and a draw after the change under the new one.
func TestVerifyEventIDSobARegraDoSorteio(t *testing.T) {
	t.Parallel()
	c := novaColonia(t, opcoes{})
	c.iniciar()
	bairro := c.novaUC()
	for range 2 {
		c.novoConselheiro(bairro)
	}
	// verificar checks the draw of demanda with verify --event-id's check.
	verificar := func(demanda uuid.UUID) (banco.Relatorio, error) {
		t.Helper()
		c.esperarOutboxVazio()
		var s uuid.UUID
		for _, r := range c.registrosDoLog() {
			if d, ok := r.(registro.Registro); ok && d.DemandaID == demanda {
				// The harness's clock is held while T is the bus's: the
				// assignment's time is set to T (TestCompromissoTestemunhado).
				s = d.EventIDSorteio
				tt, _ := sorteio.ParseTimestamp(d.Timestamp)
				_, err := c.pool.Exec(t.Context(), `UPDATE d6a.atribuicoes SET data_sorteio = $2 WHERE event_id_sorteio = $1`, s, tt)
				must(t, err == nil, "aligning data_sorteio: %v", err)
			}
		}
		must(t, s != uuid.Nil, "no draw record of demand %s", demanda)
		return banco.Verificar(t.Context(), c.w.Store, s, banco.Opcoes{})
	}
	antes, x := c.novaDemanda(bairro)
	must(t, x != uuid.Nil, "no draw")
	rel, err := verificar(antes)
	must(t, err == nil && rel.Rodada != nil, "the draw under the first rule: %v\n%s", err, rel)

	c.parar()
	c.cfg.BeaconMargem = 5 * time.Second
	c.iniciar()
	var regras []registro.RegrasSorteio
	for _, r := range c.registrosDoLog() {
		if rs, ok := r.(registro.RegrasSorteio); ok {
			regras = append(regras, rs)
		}
	}
	must(t, len(regras) == 2 && regras[1].Margem() == 5*time.Second, "rule records %+v: want a second one with the new margin", regras)
	rel, err = verificar(antes)
	must(t, err == nil && rel.Rodada != nil, "the earlier draw after the rule changed: %v\n%s", err, rel)

	c.novoConselheiro(bairro)
	depois, y := c.novaDemanda(bairro)
	must(t, y != uuid.Nil, "no draw after the change")
	_, err = verificar(depois)
	must(t, err == nil, "the draw under the new rule: %v", err)
}
