package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// AtribuicaoVigente is an active assignment as the decisions read it (the
// handlers, the repair, the automatic timeout, the console): who, which
// demand, where, the draw that made it and the demand's snapshot.
type AtribuicaoVigente struct {
	ID, EventIDSorteio, DemandaID, ConselheiroID, UC uuid.UUID
	DataSorteio                                      time.Time
	// Demanda is the demand's snapshot, from which a re-draw runs.
	Demanda DadosDemanda
}

// vigenteDe is a's domain view.
func vigenteDe(a dbsqlc.D6aAtribuico) AtribuicaoVigente {
	return AtribuicaoVigente{
		ID: a.ID, EventIDSorteio: a.EventIDSorteio, DemandaID: a.DemandaID, ConselheiroID: a.ConselheiroID,
		UC: a.UnidadeCivicaID, DataSorteio: a.DataSorteio,
		Demanda: DadosDemanda{ScoreFinal: a.ScoreFinal, CategoriaID: a.CategoriaID, NivelPrecedencia: a.NivelPrecedencia, GrupoID: a.GrupoID},
	}
}

func vigente(a dbsqlc.D6aAtribuico, err error) (AtribuicaoVigente, bool, error) {
	achou, err := Found(err)
	if !achou || err != nil {
		return AtribuicaoVigente{}, false, err
	}
	return vigenteDe(a), true, nil
}

// AtivasSemInicio lists up to limite active assignments drawn before
// antesDe that never started (no conselheiro.demanda_iniciada), oldest
// first: the automatic response timeout's candidates.
func (t Tx) AtivasSemInicio(ctx context.Context, antesDe time.Time, limite int32) ([]AtribuicaoVigente, error) {
	rows, err := t.q.BuscarAtivasSemInicio(ctx, dbsqlc.BuscarAtivasSemInicioParams{AntesDe: antesDe, Limite: limite})
	if err != nil {
		return nil, err
	}
	out := make([]AtribuicaoVigente, len(rows))
	for i, a := range rows {
		out[i] = vigenteDe(a)
	}
	return out, nil
}
