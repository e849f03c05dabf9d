package atribuicao

import (
	"context"
	"slices"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
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
