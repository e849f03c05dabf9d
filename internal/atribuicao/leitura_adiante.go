package atribuicao

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/hierarquia"
	"github.com/formigueiro/d6a/internal/store"
)

// degrauLido is what the run read of one chain, with the chain it was
// read on (a hierarchy refresh within the run gives a new chain): the
// reads made, each the first step at or above its desde holding
// registered counsellors, so the steps between desde and the step read
// hold nobody. pendentes counts the run's agenda items on this chain not
// yet drawn: a further read is made ahead only for those (lerAcima).
type degrauLido struct {
	cadeia    []uuid.UUID
	lidos     []leitura
	pendentes int
}

type leitura struct {
	desde int
	elegibilidade.Degrau
}

// ler is what ler(desde) of elegibilidade.Subir returns, if the run read
// it already.
func (l *degrauLido) ler(desde int) (elegibilidade.Degrau, bool) {
	for _, r := range l.lidos {
		if r.desde <= desde && desde <= r.Posicao {
			return r.Degrau, true
		}
	}
	return elegibilidade.Degrau{}, false
}

// topo is the highest step read of the chain; its Posicao + 1 is where a
// further read starts (none at or past the chain's end).
func (l *degrauLido) topo() elegibilidade.Degrau {
	var t elegibilidade.Degrau
	for i, r := range l.lidos {
		if i == 0 || r.Posicao > t.Posicao {
			t = r.Degrau
		}
	}
	return t
}

// corrida is the run of agenda items at the head of lote, up to the first
// other unit: what lerGuardas and lerElegiveis read ahead for.
func corrida(lote []job) []*guardaAgenda {
	var gs []*guardaAgenda
	for _, j := range lote {
		if j.guarda == nil {
			break
		}
		gs = append(gs, j.guarda)
	}
	return gs
}

// lerAdiante queues in l the reads of the run of agenda items at the head
// of lote: their guards and the first steps of their chains.
func (d *diferido) lerAdiante(ctx context.Context, l *store.Leituras, h *hierarquia.Cache, lote []job, g elegibilidade.Portoes) {
	l.Ler(func(tx store.Tx) error { return d.lerGuardas(ctx, tx, lote) })
	l.Ler(func(tx store.Tx) error { return d.lerElegiveis(ctx, tx, h, lote, g) })
}

// lerGuardas reads the guards of the agenda items at the head of lote, up
// to the first other unit.
func (d *diferido) lerGuardas(ctx context.Context, tx store.Tx, lote []job) error {
	var as []store.AgendaAGuardar
	for _, g := range corrida(lote) {
		as = append(as, store.AgendaAGuardar{EventID: g.eventID, DemandaID: g.demandaID, Correlacao: g.correlacao})
	}
	rows, err := tx.GuardasDaAgenda(ctx, as)
	if err != nil {
		return fmt.Errorf("guardas: %w", err)
	}
	d.guardas = make(map[uuid.UUID]store.GuardaAgenda, len(rows))
	for _, r := range rows {
		d.guardas[r.EventID] = r
	}
	return nil
}

// lerElegiveis reads ahead, for every chain of the agenda items at the
// head of lote (up to the first other unit), the first step holding
// registered counsellors: the draws of the run then wait for no read of
// their own unless that whole step is ineligible (filtrar). Until another
// unit writes, which drops it, nothing but the batch's own draws
// (marcarOcupados) changes those rows.
func (d *diferido) lerElegiveis(ctx context.Context, tx store.Tx, h *hierarquia.Cache, lote []job, g elegibilidade.Portoes) error {
	var (
		pedidos []store.PedidoDegrau
		porUC   = map[uuid.UUID]bool{}
	)
	for _, j := range corrida(lote) {
		if porUC[j.uc] {
			continue
		}
		porUC[j.uc] = true
		cadeia, err := h.Cadeia(ctx, j.uc)
		if err != nil {
			continue // the unit's own draw reports it
		}
		pedidos = append(pedidos, store.PedidoDegrau{Cadeia: cadeia})
	}
	d.elegiveis = map[uuid.UUID]*degrauLido{}
	if len(pedidos) == 0 {
		return nil
	}
	lidos, err := tx.LerDegraus(ctx, pedidos, g) // phase-2 gates (CONTRACT §8)
	if err != nil {
		return err
	}
	for n, p := range pedidos {
		d.elegiveis[p.Cadeia[0]] = &degrauLido{cadeia: p.Cadeia, lidos: []leitura{{0, lidos[n]}}}
	}
	for _, j := range corrida(lote) {
		if l := d.elegiveis[j.uc]; l != nil {
			l.pendentes++
		}
	}
	return nil
}

// lerAcima reads, in one round trip, the step of lido's chain at or above
// desde, and the next step of every other chain of the run that an agenda
// item still waits on and whose highest step read holds nobody eligible
// now: those draws would each make the same round trip. Which chains
// qualify is elegibilidade's rule on the rows read; the read itself is
// structure only, so a chain read ahead in vain costs a read, never a
// different decision.
func (d *diferido) lerAcima(ctx context.Context, tx store.Tx, lido *degrauLido, desde int, agora time.Time, g elegibilidade.Portoes) error {
	var (
		pedidos []store.PedidoDegrau
		quais   []*degrauLido
	)
	pedir := func(l *degrauLido, desde int) {
		quais = append(quais, l)
		pedidos = append(pedidos, store.PedidoDegrau{Cadeia: l.cadeia, Desde: desde})
	}
	pedir(lido, desde)
	for _, l := range d.elegiveis {
		if l == lido || l.pendentes == 0 {
			continue
		}
		if t := l.topo(); t.Posicao+1 < len(l.cadeia) && !d.algumElegivel(t, agora) {
			pedir(l, t.Posicao+1)
		}
	}
	lidos, err := tx.LerDegraus(ctx, pedidos, g)
	if err != nil {
		return err
	}
	for n, l := range quais {
		l.lidos = append(l.lidos, leitura{pedidos[n].Desde, lidos[n]})
	}
	return nil
}

// algumElegivel reports whether step holds a counsellor eligible at agora
// once the batch's draws are counted (elegibilidade.Elegivel).
func (d *diferido) algumElegivel(step elegibilidade.Degrau, agora time.Time) bool {
	for _, c := range d.marcarOcupados(step).Candidatos {
		if elegibilidade.Elegivel(c, agora) {
			return true
		}
	}
	return false
}
