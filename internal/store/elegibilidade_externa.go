package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The phase-2 inputs' rows (sql/queries/elegibilidade_externa.sql, CONTRACT §8), as the
// handlers of internal/atribuicao write them.

// Capacitacao is an external training record (capacitação.concluída).
type Capacitacao struct {
	Conselheiro uuid.UUID
	Curso       string
	ConcluidaEm string
	EventID     uuid.UUID
	Agora       time.Time
}

// AnotarCapacitacao stores an external training record, the latest
// winning.
func (t Tx) AnotarCapacitacao(ctx context.Context, c Capacitacao) error {
	return t.q.RegistrarCapacitacao(ctx, dbsqlc.RegistrarCapacitacaoParams{
		ConselheiroID: c.Conselheiro, CursoID: c.Curso, ConcluidaEm: c.ConcluidaEm, EventID: c.EventID, Agora: c.Agora,
	})
}

// MarcarCapacitado sets a registered counsellor's training flag.
func (t Tx) MarcarCapacitado(ctx context.Context, conselheiro, eventID uuid.UUID, agora time.Time) error {
	_, err := t.q.MarcarCapacitacaoConcluida(ctx, dbsqlc.MarcarCapacitacaoConcluidaParams{ID: conselheiro, EventID: eventID, Agora: agora})
	return err
}

// CapacitadoExternamente reports whether an external training record of
// the counsellor exists.
func (t Tx) CapacitadoExternamente(ctx context.Context, conselheiro uuid.UUID) (bool, error) {
	return t.q.TemCapacitacaoExterna(ctx, conselheiro)
}

// Vinculo is a counsellor's link to a unit, valid or revoked
// (vínculo.validado, or granted by a progression).
type Vinculo struct {
	Conselheiro, UC uuid.UUID
	Valido          bool
	Origem          string
	ValidadoEm      *string
	EventID         uuid.UUID
	Agora           time.Time
}

// AnotarVinculo stores a link, the latest winning.
func (t Tx) AnotarVinculo(ctx context.Context, v Vinculo) error {
	return t.q.RegistrarVinculo(ctx, dbsqlc.RegistrarVinculoParams{
		ConselheiroID: v.Conselheiro, UnidadeCivicaID: v.UC, Valido: v.Valido, Origem: v.Origem,
		ValidadoEm: v.ValidadoEm, EventID: v.EventID, Agora: v.Agora,
	})
}

// Progredir moves a counsellor's unit of action to uc at nivel (the
// registration's unit is kept once).
func (t Tx) Progredir(ctx context.Context, conselheiro, uc uuid.UUID, nivel int32, eventID uuid.UUID, agora time.Time) error {
	_, err := t.q.ProgredirConselheiro(ctx, dbsqlc.ProgredirConselheiroParams{
		ID: conselheiro, UnidadeCivicaID: uc, Nivel: &nivel, EventID: eventID, Agora: agora,
	})
	return err
}

// AnotarCriterios stores a unit's criteria version (spec 4.9).
func (t Tx) AnotarCriterios(ctx context.Context, uc uuid.UUID, versao string, eventID uuid.UUID, agora time.Time) error {
	return t.q.RegistrarCriterios(ctx, dbsqlc.RegistrarCriteriosParams{
		UnidadeCivicaID: uc, VersaoParametros: versao, EventID: eventID, Agora: agora,
	})
}

// PortoesRegistrados reads the latest recorded gates and their version;
// achou is false when none was ever recorded.
func (t Tx) PortoesRegistrados(ctx context.Context) (versao int32, g elegibilidade.Portoes, achou bool, err error) {
	r, err := t.q.RegrasVigentes(ctx)
	if achou, err = Found(err); !achou || err != nil {
		return 0, g, false, err
	}
	return r.Versao, elegibilidade.Portoes{CapacitacaoExterna: r.CapacitacaoExterna, ExigirVinculo: r.ExigirVinculo}, true, nil
}

// RegistrarPortoes records a new version of the gates.
func (t Tx) RegistrarPortoes(ctx context.Context, g elegibilidade.Portoes, eventID uuid.UUID, agora time.Time) error {
	return t.q.InserirRegras(ctx, dbsqlc.InserirRegrasParams{
		CapacitacaoExterna: g.CapacitacaoExterna, ExigirVinculo: g.ExigirVinculo, EventID: eventID, Agora: agora,
	})
}
