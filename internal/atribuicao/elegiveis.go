package atribuicao

import (
	"context"
	"slices"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
)

// filtrar is spec 4.3 over the database: the rows are read, the rule is
// elegibilidade's (Subir, then Filtrar, which the replay runs too). The
// first read of an agenda item's chain comes from the run's read-ahead
// (lerElegiveis); a further round trip happens only when every counsellor
// of the step read is ineligible, and is counted (Observador.Elegibilidade).
// Counsellors drawn earlier in the batch, whose writes are still in memory,
// count as holding an active assignment.
func (u *uow) filtrar(ctx context.Context, cadeia []uuid.UUID, excluir *uuid.UUID) (elegibilidade.Resultado, error) {
	g := u.servico.o.Portoes // phase-2 gates (CONTRACT §8)
	ler := func(desde int) (elegibilidade.Degrau, error) {
		if desde == 0 && u.diferir {
			if d, ok := u.lote.elegiveis[cadeia[0]]; ok && slices.Equal(d.cadeia, cadeia) {
				return u.lote.marcarOcupados(d.Degrau), nil
			}
		}
		d, err := u.tx.LerDegrau(ctx, cadeia, desde, g)
		return u.lote.marcarOcupados(d), err
	}
	r, leituras, err := elegibilidade.Subir(cadeia, excluir, u.agora, ler)
	if err != nil {
		return elegibilidade.Resultado{}, err
	}
	obs := u.servico.o.Observador
	u.depois = append(u.depois, func() { obs.Elegibilidade(leituras - 1) })
	return r, nil
}

// marcarOcupados is d with the counsellors drawn earlier in the batch
// holding an active assignment (a copy: d may be the run's read-ahead).
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
