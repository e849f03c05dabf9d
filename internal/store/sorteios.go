package store

import (
	"context"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The draw as one write: its lock, its assignment, audit record
// (d6a.auditoria_sorteios) and occupied counsellor written together, and
// undone together.

// TravarSorteio takes the draws' transaction-wide advisory lock (spec 4.4
// comFilaGlobal) and refits the connection's generic plans.
func (t Tx) TravarSorteio(ctx context.Context, chave int64) error {
	_, err := t.q.AdvisoryLockSorteio(ctx, chave)
	return err
}

// GravarSorteios writes the draws a batch decided, in their order, in one
// statement: linhas is their JSON (atribuicao's lote.go), ocupados the
// counsellors they occupy.
func (t Tx) GravarSorteios(ctx context.Context, linhas []byte, ocupados []uuid.UUID) error {
	return t.q.GravarSorteios(ctx, dbsqlc.GravarSorteiosParams{Linhas: linhas, Conselheiros: ocupados})
}

// AuditoriaDoSorteio is a draw's audit record (d6a.auditoria_sorteios):
// its input, its claimed output and where it was decided.
type AuditoriaDoSorteio struct {
	EventIDSorteio, AtribuicaoID, DemandaID, UC, ConselheiroID uuid.UUID
	Base                                                       string
	BaseFallback                                               bool
	// BaseSequence is the base event's stream sequence (nil on a fallback
	// draw).
	BaseSequence       *int64
	TimestampSorteio   string
	Seed               string
	ElegiveisEntrada   []string
	Ordenados          []string
	Selecionado        uuid.UUID
	ListaElegiveisHash string
	// Degrau is the chain's step the draw took its eligible from.
	Degrau uuid.UUID
	Cadeia []string
	// Excluido is the refuser left out of a redraw (nil: none).
	Excluido *uuid.UUID
	// Rodada, AssinaturaRodada and Compromisso are the beacon round the
	// seed mixes in (CONTRACT §4a; nil before its rule).
	Rodada                        *int64
	AssinaturaRodada, Compromisso *string
}

// AuditoriaPorSorteio reads the audit record of the draw eventIDSorteio.
func (t Tx) AuditoriaPorSorteio(ctx context.Context, eventIDSorteio uuid.UUID) (AuditoriaDoSorteio, bool, error) {
	a, err := t.q.BuscarAuditoria(ctx, eventIDSorteio)
	if achou, err := Found(err); !achou || err != nil {
		return AuditoriaDoSorteio{}, false, err
	}
	return AuditoriaDoSorteio{
		EventIDSorteio: a.EventIDSorteio, AtribuicaoID: a.AtribuicaoID, DemandaID: a.DemandaID, UC: a.UnidadeCivicaID,
		ConselheiroID: a.ConselheiroID, Base: a.Base, BaseFallback: a.BaseFallback, BaseSequence: a.BaseSequence,
		TimestampSorteio: a.TimestampSorteio, Seed: a.Seed, ElegiveisEntrada: a.ElegiveisEntrada, Ordenados: a.Ordenados,
		Selecionado: a.Selecionado, ListaElegiveisHash: a.ListaElegiveisHash, Degrau: a.Degrau, Cadeia: a.Cadeia,
		Excluido: a.Excluido, Rodada: a.Rodada, AssinaturaRodada: a.AssinaturaRodada, Compromisso: a.Compromisso,
	}, true, nil
}
