package store

import (
	"context"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The fairness statistics' storage (d6a.transparencia_estatisticas and
// its _estado): internal/estatisticas folds the signed records into one
// row of sums per counsellor; these only store and read the sums.

// SomasConselheiro is one counsellor's stored fairness sums (CONTRACT §7
// "Fairness statistics"), as folded from the signed records.
type SomasConselheiro struct {
	ConselheiroID    string
	SorteiosElegivel int64
	Esperado         float64
	Observado        int64
	Variancia        float64
	EsperadoN2       float64
	ObservadoN2      int64
}

// ApuracaoEstatisticas is how far the fold has gone (Registros: the records
// folded), its totals, and the size of the latest signed checkpoint
// (Assinado, 0 before the first): only records under it are folded.
type ApuracaoEstatisticas struct {
	Registros  int64
	Sorteios   int64
	SorteiosN1 int64
	Assinado   int64
}

// RegistroDoLog is one record of the log by its index (nil once
// eliminated).
type RegistroDoLog struct {
	Indice   int64
	Registro []byte
}

// TentarTravarEstatisticas takes the fold's advisory lock chave for the
// life of the transaction, if no other instance holds it, and lets the
// transaction's commit skip the WAL flush (the sums are a cache of the
// signed log). It reports whether it took the lock.
func (t Tx) TentarTravarEstatisticas(ctx context.Context, chave int64) (bool, error) {
	r, err := t.q.TravarEstatisticas(ctx, chave)
	return r.Travado, err
}

// Apuracao reads how far the fold has gone and the signed size.
func (t Tx) Apuracao(ctx context.Context) (ApuracaoEstatisticas, error) {
	r, err := t.q.EstadoEstatisticas(ctx)
	return ApuracaoEstatisticas(r), err
}

// RegistrosParaApurar reads the records desde ≤ indice < ate, in log order.
func (t Tx) RegistrosParaApurar(ctx context.Context, desde, ate int64) ([]RegistroDoLog, error) {
	rows, err := t.q.RegistrosParaEstatisticas(ctx, dbsqlc.RegistrosParaEstatisticasParams{Desde: desde, Ate: ate})
	if err != nil {
		return nil, err
	}
	out := make([]RegistroDoLog, len(rows))
	for i, r := range rows {
		out[i] = RegistroDoLog(r)
	}
	return out, nil
}

// SomasDe reads the stored sums of the counsellors ids, in no particular
// order; a counsellor without sums is absent.
func (t Tx) SomasDe(ctx context.Context, ids []string) ([]SomasConselheiro, error) {
	return somas(t.q.EstatisticasDe(ctx, ids))
}

// TodasAsSomas reads every counsellor's stored sums, in no particular order.
func (t Tx) TodasAsSomas(ctx context.Context) ([]SomasConselheiro, error) {
	return somas(t.q.TodasEstatisticas(ctx))
}

// SomasApos reads one page of at most limite counsellors' sums, in the
// order of their ids, after the id apos ("" for the first page).
func (t Tx) SomasApos(ctx context.Context, apos string, limite int32) ([]SomasConselheiro, error) {
	return somas(t.q.EstatisticasApos(ctx, dbsqlc.EstatisticasAposParams{Apos: apos, Limite: limite}))
}

func somas(rows []dbsqlc.D6aTransparenciaEstatistica, err error) ([]SomasConselheiro, error) {
	if err != nil {
		return nil, err
	}
	out := make([]SomasConselheiro, len(rows))
	for i, r := range rows {
		out[i] = SomasConselheiro(r)
	}
	return out, nil
}

// GravarSomas stores the counsellors' new sums, replacing their old ones,
// in one statement.
func (t Tx) GravarSomas(ctx context.Context, cs []SomasConselheiro) error {
	var p dbsqlc.GravarEstatisticasParams
	for _, c := range cs {
		p.Ids = append(p.Ids, c.ConselheiroID)
		p.SorteiosElegivel = append(p.SorteiosElegivel, c.SorteiosElegivel)
		p.Esperado = append(p.Esperado, c.Esperado)
		p.Observado = append(p.Observado, c.Observado)
		p.Variancia = append(p.Variancia, c.Variancia)
		p.EsperadoN2 = append(p.EsperadoN2, c.EsperadoN2)
		p.ObservadoN2 = append(p.ObservadoN2, c.ObservadoN2)
	}
	return t.q.GravarEstatisticas(ctx, p)
}

// AvancarApuracao records the fold as having gone up to registros records,
// adding a pass's draws (sorteios; sorteiosN1 of them with a list of one)
// to the totals.
func (t Tx) AvancarApuracao(ctx context.Context, registros, sorteios, sorteiosN1 int64) error {
	return t.q.AvancarEstatisticas(ctx, dbsqlc.AvancarEstatisticasParams{Registros: registros, Sorteios: sorteios, SorteiosN1: sorteiosN1})
}

// RecomecarEstatisticas waits for the fold's advisory lock chave, then
// empties the sums and sets the fold back to record 0: after an erasure
// the next passes fold the records as they are now.
func (t Tx) RecomecarEstatisticas(ctx context.Context, chave int64) error {
	if err := t.q.AdvisoryLockAssinatura(ctx, chave); err != nil {
		return err
	}
	return t.q.RecomecarEstatisticas(ctx)
}
