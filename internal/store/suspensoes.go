package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The reactivation of expired suspensions (internal/manutencao) reads and
// writes the counsellors through these methods, in its own words and
// types, not sqlc's: the first consumer behind a narrow interface
// (docs/decisions.md, "Layout").

// SuspensaoVencida is a counsellor still marked suspenso whose suspension
// ended (data_suspensao_ate passed).
type SuspensaoVencida struct {
	Conselheiro uuid.UUID
	Cidadao     uuid.UUID
	Status      string
	Ate         time.Time
}

// SuspensoesVencidas lists the suspensions ended by agora whose
// counsellors are still marked suspenso, by id.
func (t Tx) SuspensoesVencidas(ctx context.Context, agora time.Time) ([]SuspensaoVencida, error) {
	rows, err := t.q.BuscarSuspensosComPrazoVencido(ctx, agora)
	if err != nil {
		return nil, err
	}
	out := make([]SuspensaoVencida, len(rows))
	for i, c := range rows {
		out[i] = SuspensaoVencida{Conselheiro: c.ID, Cidadao: c.CidadaoID, Status: c.Status, Ate: c.DataSuspensaoAte.UTC()}
	}
	return out, nil
}

// MudarStatus sets a counsellor's status, recorded under eventID at agora.
func (t Tx) MudarStatus(ctx context.Context, conselheiro uuid.UUID, status string, eventID uuid.UUID, agora time.Time) error {
	_, err := t.q.AtualizarStatusConselheiro(ctx, dbsqlc.AtualizarStatusConselheiroParams{
		ID: conselheiro, Status: status, EventID: eventID, Agora: agora,
	})
	return err
}
