package store

import (
	"context"
	"time"
)

// The scrape-time gauges of GET /metrics (internal/metrics) read through
// these methods and VersaoVigente (console.go), in their own words and
// types, not sqlc's (docs/decisions.md, "Layout"). Each is one count.

// TotalPendentes counts the demands in the pending queue.
func (t Tx) TotalPendentes(ctx context.Context) (int64, error) {
	return t.q.ContarPendentes(ctx)
}

// TotalOutboxPendentes counts the outbox rows not yet published.
func (t Tx) TotalOutboxPendentes(ctx context.Context) (int64, error) {
	return t.q.ContarOutboxPendentes(ctx)
}

// TotalConselheirosPorStatus counts the counsellors by their status
// column (a status nobody holds is absent).
func (t Tx) TotalConselheirosPorStatus(ctx context.Context) (map[string]int64, error) {
	rows, err := t.q.ContarConselheirosPorStatus(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.Status] = r.Total
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

// TotalAtivasSemInicio counts the active assignments drawn before antesDe
// that never started (no conselheiro.demanda_iniciada).
func (t Tx) TotalAtivasSemInicio(ctx context.Context, antesDe time.Time) (int64, error) {
	return t.q.ContarAtivasSemInicio(ctx, antesDe)
}

// FilaPorIdade is the pending queue by age at a moment: the demands whose
// age falls in each bucket (under 1h, 1h–24h, 24h–72h, 72h–7d, 7d and
// over; each from its lower bound, inclusive, to its upper, exclusive),
// and the oldest demand's age (0 when the queue is empty).
type FilaPorIdade struct {
	Ate1h, De1hA24h, De24hA72h, De72hA7d, MaisDe7d int64
	MaisAntiga                                     time.Duration
}

// FilaPorIdade reads the pending queue by age at agora, in one scan.
func (t Tx) FilaPorIdade(ctx context.Context, agora time.Time) (FilaPorIdade, error) {
	r, err := t.q.ResumoFila(ctx, agora)
	if err != nil {
		return FilaPorIdade{}, err
	}
	return FilaPorIdade{
		Ate1h: r.Ate1h, De1hA24h: r.De1hA24h, De24hA72h: r.De24hA72h, De72hA7d: r.De72hA7d, MaisDe7d: r.MaisDe7d,
		MaisAntiga: time.Duration(r.MaisAntigaSegundos * float64(time.Second)),
	}, nil
}
