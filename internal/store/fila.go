package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/fila"
	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The pending queue (d6a.fila_pendentes, spec 2.4, 4.7): the demands
// waiting for a counsellor.

// Pendente is a row of the fila de pendentes (spec 2.4, 4.7).
type Pendente struct {
	DemandaID, UC, EventIDOrigem uuid.UUID
	Demanda                      DadosDemanda
	Entrada                      time.Time
	Ordem                        int64
	Tentativas                   int32
}

func pendente(p dbsqlc.D6aFilaPendente) Pendente {
	return Pendente{
		DemandaID: p.DemandaID, UC: p.UnidadeCivicaID, EventIDOrigem: p.EventIDOrigem,
		Demanda: DadosDemanda{ScoreFinal: p.ScoreFinal, CategoriaID: p.CategoriaID, NivelPrecedencia: p.NivelPrecedencia, GrupoID: p.GrupoID},
		Entrada: p.DataEntrada, Ordem: p.OrdemEntrada, Tentativas: p.TentativasSorteio,
	}
}

// Espera is the row as fila.Devida takes it.
func (p Pendente) Espera() fila.Espera {
	return fila.Espera{Demanda: p.DemandaID, UC: p.UC, Entrada: p.Entrada, Ordem: p.Ordem}
}

func pendentes(rows []dbsqlc.D6aFilaPendente, err error) ([]Pendente, error) {
	if err != nil {
		return nil, err
	}
	out := make([]Pendente, len(rows))
	for i, p := range rows {
		out[i] = pendente(p)
	}
	return out, nil
}

// CabecasDaFila reads the head of each unit's queue among ucs: the rows
// fila.Devida chooses from.
func (t Tx) CabecasDaFila(ctx context.Context, ucs []uuid.UUID) ([]Pendente, error) {
	return pendentes(t.q.BuscarCabecasDaFilaPorUcs(ctx, ucs))
}

// PendenteDaDemanda reads the pending row of a demand.
func (t Tx) PendenteDaDemanda(ctx context.Context, demanda uuid.UUID) (Pendente, bool, error) {
	p, err := t.q.BuscarFilaPendentePorDemandaId(ctx, demanda)
	if achou, err := Found(err); !achou || err != nil {
		return Pendente{}, false, err
	}
	return pendente(p), true, nil
}

// TentativasNaFila reads how many draws a pending demand has had, and
// whether it is in the pending queue at all.
func (t Tx) TentativasNaFila(ctx context.Context, demanda uuid.UUID) (tentativas int32, naFila bool, err error) {
	p, err := t.q.BuscarFilaPendentePorDemandaId(ctx, demanda)
	if naFila, err = Found(err); !naFila || err != nil {
		return 0, false, err
	}
	return p.TentativasSorteio, true, nil
}

// Pendentes lists up to limite demands of the pending queue, oldest first,
// of the unit uc when set.
func (t Tx) Pendentes(ctx context.Context, uc *uuid.UUID, limite int32) ([]Pendente, error) {
	return pendentes(t.q.ListarFila(ctx, dbsqlc.ListarFilaParams{Uc: uc, Limite: limite}))
}

// FilaInteira reads the whole pending queue, oldest first (by data_entrada,
// then order of entry): the boot's sweep (spec 4.7).
func (t Tx) FilaInteira(ctx context.Context) ([]Pendente, error) {
	return pendentes(t.q.BuscarTodosPendentes(ctx))
}

// GravarPendentes writes the demands a batch queued (or whose attempt it
// counted), in one statement: linhas is their JSON (atribuicao's lote.go).
func (t Tx) GravarPendentes(ctx context.Context, linhas []byte) error {
	return t.q.EnfileirarPendentes(ctx, linhas)
}

// TirarDaFila removes the demand from the pending queue; removida is false
// when it did not wait there.
func (t Tx) TirarDaFila(ctx context.Context, demanda uuid.UUID) (removida bool, err error) {
	n, err := t.q.RemoverFilaPendentePorDemanda(ctx, demanda)
	return n > 0, err
}

// TotalPendentes counts the demands in the pending queue.
func (t Tx) TotalPendentes(ctx context.Context) (int64, error) {
	return t.q.ContarPendentes(ctx)
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
