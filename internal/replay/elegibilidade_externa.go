package replay

import (
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/registro"
)

// estadoFase2 is the replay's side of the phase-2 inputs (CONTRACT §8): the
// gates in force (from the d6a.regras_elegibilidade records; none: both
// off) and each counsellor's training and links, known or not yet
// registered (an input may precede the registration it applies to).
type estadoFase2 struct {
	portoes elegibilidade.Portoes
	fase2   map[uuid.UUID]elegibilidade.Fase2
}

func (e *estadoFase2) de(id uuid.UUID) elegibilidade.Fase2 {
	return e.fase2[id]
}

func (e *estadoFase2) pôr(id uuid.UUID, f elegibilidade.Fase2) {
	if e.fase2 == nil {
		e.fase2 = map[uuid.UUID]elegibilidade.Fase2{}
	}
	e.fase2[id] = f
}

// candidato is a known counsellor as elegibilidade.Filtrar takes them,
// with the gates in force applied.
func (r *Replay) candidato(id uuid.UUID, c *estadoConselheiro) elegibilidade.Candidato {
	f := r.de(id)
	f.Autodeclarada = c.capacitacao
	return r.portoes.Aplicar(elegibilidade.Candidato{ID: id, UC: c.uc, Status: c.status,
		SuspensaoAte: c.ate, Ocupado: c.status == elegibilidade.Ocupado}, f)
}

// foraPorRegra is why the gates alone leave the counsellor out at their
// unit, or "": the explanation of the counsellor's own check (a decision
// of their coverage they were not in because of a gate is no divergence).
func (r *Replay) foraPorRegra(id uuid.UUID, c *estadoConselheiro) string {
	f := r.de(id)
	f.Autodeclarada = c.capacitacao
	return r.portoes.Fora(f, c.uc)
}

// entradaFase2 applies a phase-2 input record, or the gates record, and
// reports whether e was one.
func (r *Replay) entradaFase2(indice int64, e registro.Entrada) bool {
	switch e.Tipo {
	case registro.TipoRegras:
		if e.CapacitacaoExterna != nil && e.ExigirVinculo != nil {
			r.portoes = elegibilidade.Portoes{CapacitacaoExterna: *e.CapacitacaoExterna, ExigirVinculo: *e.ExigirVinculo}
		}
		return true
	case registro.TipoElegibilidadeAtualizada:
		return true // the unit's queue is swept; nobody's state changes
	case registro.TipoCapacitacao, registro.TipoVinculo, registro.TipoProgressao:
	default:
		return false
	}
	if e.ConselheiroID == nil {
		return true
	}
	id := *e.ConselheiroID
	f := r.de(id)
	texto := e.Tipo
	switch e.Tipo {
	case registro.TipoCapacitacao:
		f = elegibilidade.AposCapacitacao(f)
	case registro.TipoVinculo:
		if e.UnidadeCivicaID == nil || e.Valido == nil {
			return true
		}
		f = elegibilidade.AposVinculo(f, *e.UnidadeCivicaID, *e.Valido)
		estado := "validado"
		if !*e.Valido {
			estado = "revogado"
		}
		texto += fmt.Sprintf(" (unidade %s: %s)", e.UnidadeCivicaID, estado)
	case registro.TipoProgressao:
		if e.UnidadeCivicaID == nil {
			return true
		}
		c := r.conselheiros[id]
		if c == nil {
			// The service records no progression of a counsellor it does
			// not hold (a no-op, docs/decisions.md).
			r.divergir(indice, &id, "%s: conselheiro %s não cadastrado", e.Tipo, id)
			return true
		}
		var uc uuid.UUID
		uc, f = elegibilidade.AposProgressao(f, *e.UnidadeCivicaID)
		if uc != c.uc {
			r.porUC[c.uc] = slices.DeleteFunc(r.porUC[c.uc], func(x uuid.UUID) bool { return x == id })
			r.porUC[uc] = append(r.porUC[uc], id)
			c.uc = uc
		}
		texto += fmt.Sprintf(" (unidade de atuação %s)", uc)
	}
	r.pôr(id, f)
	if id == r.alvo {
		r.Linha = append(r.Linha, Acontecimento{indice, uuid.Nil, e.Tipo, texto})
	}
	return true
}

// foraDaLista names the first listed counsellor a phase-2 gate left out,
// with the reason, for a draw the records say nobody was eligible for.
func (r *Replay) foraDaLista(lista []uuid.UUID) (*uuid.UUID, string) {
	for _, id := range lista {
		if c := r.conselheiros[id]; c != nil {
			if m := r.foraPorRegra(id, c); m != "" {
				return &id, fmt.Sprintf(" (conselheiro %s: %s)", id, m)
			}
		}
	}
	return nil, ""
}
