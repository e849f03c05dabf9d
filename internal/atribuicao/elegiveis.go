package atribuicao

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/store"
)

// filtrar is spec 4.3 over the database: the rows are read, the rule is
// elegibilidade's (Subir, then Filtrar, which the replay runs too). An
// agenda item's steps come from what the run read of its chain (the
// read-ahead, lerElegiveis, then lerAcima); a round trip happens only when
// a step the walk needs was not read, and is counted
// (Observador.Elegibilidade). Counsellors drawn earlier in the batch, whose
// writes are still in memory, count as holding an active assignment.
func (u *unidade) filtrar(ctx context.Context, cadeia []uuid.UUID, excluir *uuid.UUID) (elegibilidade.Resultado, error) {
	g := u.servico.o.Portoes // phase-2 gates (CONTRACT §8)
	var lido *degrauLido
	if u.corrida {
		if l := u.lote.elegiveis[cadeia[0]]; l != nil && slices.Equal(l.cadeia, cadeia) {
			lido = l
			if l.pendentes > 0 {
				l.pendentes--
			}
		}
	}
	idas := 0
	ler := func(desde int) (elegibilidade.Degrau, error) {
		if lido != nil {
			if d, ok := lido.ler(desde); ok {
				return u.lote.marcarOcupados(d), nil
			}
			idas++
			if err := u.lote.lerAcima(ctx, u.tx, lido, desde, u.agora, g); err != nil {
				return elegibilidade.Degrau{}, err
			}
			if d, ok := lido.ler(desde); ok {
				return u.lote.marcarOcupados(d), nil
			}
		}
		if desde > 0 {
			idas++
		}
		d, err := u.tx.LerDegrau(ctx, cadeia, desde, g)
		return u.lote.marcarOcupados(d), err
	}
	r, _, err := elegibilidade.Subir(cadeia, excluir, u.agora, ler)
	if err != nil {
		return elegibilidade.Resultado{}, err
	}
	obs := u.servico.o.Observador
	u.depois = append(u.depois, func() { obs.Elegibilidade(idas) })
	return r, nil
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

// marcarOcupados is d with the counsellors drawn earlier in the batch
// holding an active assignment (a copy: d may be what the run read).
func (d *diferido) marcarOcupados(l elegibilidade.Degrau) elegibilidade.Degrau {
	if len(d.ocupados) == 0 {
		return l
	}
	cs := make([]elegibilidade.Candidato, len(l.Candidatos))
	for i, c := range l.Candidatos {
		c.Ocupado = c.Ocupado || d.ocupados[c.ID]
		cs[i] = c
	}
	l.Candidatos = cs
	return l
}
