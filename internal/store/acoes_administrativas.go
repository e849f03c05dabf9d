package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The journal of administrative actions (d6a.acoes_administrativas).

// AcaoAnotada is one row of d6a.acoes_administrativas: who did what
// to which target, why, and the event it made.
type AcaoAnotada struct {
	// ID is the journal's order; set when read, ignored when written.
	ID            int64
	Sub           string
	Acao          string
	Alvo          string
	Justificativa string
	Em            time.Time
	EventID       *uuid.UUID
	// Detalhes is a JSON object, or nil.
	Detalhes []byte
}

// AnotarAcao appends a to the journal of administrative actions.
func (t Tx) AnotarAcao(ctx context.Context, a AcaoAnotada) error {
	_, err := t.q.RegistrarAcao(ctx, dbsqlc.RegistrarAcaoParams{
		Sub: a.Sub, Acao: a.Acao, Alvo: a.Alvo, Justificativa: a.Justificativa, Agora: a.Em, EventID: a.EventID, Detalhes: a.Detalhes,
	})
	return err
}

// AcoesDepoisDe lists the journal after id depoisDe, oldest first, at most
// limite.
func (t Tx) AcoesDepoisDe(ctx context.Context, depoisDe int64, limite int32) ([]AcaoAnotada, error) {
	rows, err := t.q.ListarAcoes(ctx, dbsqlc.ListarAcoesParams{DepoisDe: depoisDe, Limite: limite})
	if err != nil {
		return nil, err
	}
	out := make([]AcaoAnotada, len(rows))
	for i, r := range rows {
		out[i] = AcaoAnotada{
			ID: r.ID, Sub: r.Sub, Acao: r.Acao, Alvo: r.Alvo, Justificativa: r.Justificativa,
			Em: r.CriadoEm, EventID: r.EventID, Detalhes: r.Detalhes,
		}
	}
	return out, nil
}

// TotalAcoesPorTipo counts the administrative actions journaled, by acao
// (an action never taken is absent).
func (t Tx) TotalAcoesPorTipo(ctx context.Context) (map[string]int64, error) {
	rows, err := t.q.ContarAcoesPorTipo(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.Acao] = r.Total
	}
	return out, nil
}
