package colonia_test

import (
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/beacon"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// CONTRACT §4a "Verification": the honest log names its (private) chain
// in a d6a.regras_sorteio record before its first draw, and every draw's
// round verifies; logs rigged and re-signed with the colony's key are
// caught at the right record: a round that is not the first after
// compromisso + margin, a round signature that does not verify, a rule
// record that says the trigger rule began later than it did, and draws
// that drop their round under the rule.
func TestReplayDoBeacon(t *testing.T) {
	t.Parallel()
	c, regs, _, _ := historia(t)

	ir := slices.IndexFunc(regs, func(r registro.Registravel) bool { _, ok := r.(registro.RegrasSorteio); return ok })
	must(t, ir >= 0, "no d6a.regras_sorteio record in the log")
	regras := regs[ir].(registro.RegrasSorteio)
	must(t, regras.Privado && regras.GatilhoDesde == 0 && regras.Periodo == 1 && regras.MargemMs == 1000,
		"rule record %+v: want the private beacon, period 1 s, margin one period, the trigger rule from 0", regras)
	k := slices.IndexFunc(regs, func(r registro.Registravel) bool { _, ok := r.(registro.Registro); return ok })
	must(t, k > ir, "the first draw (%d) comes before the rule record (%d)", k, ir)
	orig := regs[k].(registro.Registro)
	must(t, orig.Rodada != nil && orig.Compromisso == orig.Timestamp, "draw %+v has no round, or its C is not T", orig)
	cadeia, err := regras.CadeiaBeacon()
	must(t, err == nil, "%v", err)

	// Honest, through the public routes: every round checked.
	cli := &log.Cliente{Base: "http://" + c.w.Addr.String(), Barramento: c.w.Bus}
	res, err := cli.Reproduzir(t.Context(), uuid.Nil, nil)
	must(t, err == nil && res.Primeira == nil && len(res.Replay.Divergencias) == 0, "honest replay: %v / %v / %v", err, res.Primeira, res.Replay.Divergencias)
	must(t, cli.Regras != nil && cli.Regras.ChavePublica == regras.ChavePublica, "the walk's rule %+v", cli.Regras)

	falhaEm := func(nome string, rigado []registro.Registravel, indice int, campo string) {
		t.Helper()
		r := c.servirAdulterado(rigado, uuid.Nil)
		achou := r.Primeira != nil && strings.Contains(r.Primeira.Error(), campo)
		for _, d := range r.Replay.Divergencias {
			achou = achou || (d.Indice == int64(indice) && strings.Contains(d.Motivo, campo))
		}
		must(t, achou, "%s: not caught at record %d naming %s (first failure %v, divergences %v)", nome, indice, campo, r.Primeira, r.Replay.Divergencias)
	}

	// 1. The next round, properly signed (the private key is the colony's
	// own, under its data dir), the seed recomputed: not the first round
	// after compromisso + margin.
	p, err := beacon.AbrirPrivado(c.cfg.DataDir, cadeia.Periodo)
	must(t, err == nil, "the colony's private beacon: %v", err)
	outra := p.Assinar(uint64(*orig.Rodada) + 1)
	rig := orig
	n := int64(outra.Numero)
	rig.Rodada, rig.AssinaturaRodada = &n, hex.EncodeToString(outra.Assinatura)
	rig = redesenhar(t, rig)
	rigado := slices.Clone(regs)
	rigado[k] = rig
	falhaEm("a later round", rigado, k, "registro.rodada")

	// 2. The right round number with another chain's signature (the seed
	// recomputed from it, so the record verifies by itself).
	alheia := beacon.NovoPrivado([]byte("outra cadeia"), cadeia.Genesis, cadeia.Periodo).Assinar(uint64(*orig.Rodada))
	rig = orig
	rig.AssinaturaRodada = hex.EncodeToString(alheia.Assinatura)
	rig = redesenhar(t, rig)
	rigado = slices.Clone(regs)
	rigado[k] = rig
	falhaEm("a signature of another chain", rigado, k, "registro.assinatura_rodada")

	// 3. A rule record claiming the trigger rule began after itself.
	tarde := regras
	tarde.GatilhoDesde = int64(ir) + 3
	rigado = slices.Clone(regs)
	rigado[ir] = tarde
	falhaEm("the trigger rule starting later", rigado, ir, "gatilho_desde")

	// 4. A draw under the rule without its round (the seed of the rule
	// before the beacon).
	rig = orig
	rig.Rodada, rig.AssinaturaRodada, rig.Compromisso = nil, "", ""
	rig = redesenhar(t, rig)
	rigado = slices.Clone(regs)
	rigado[k] = rig
	falhaEm("a draw without its round", rigado, k, "registro.rodada")
}
