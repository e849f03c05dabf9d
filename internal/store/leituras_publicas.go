package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// The public HTTP routes (internal/httpapi) and the HTTP load of
// cmd/d6a-bench read through these methods, in their own words and types,
// not sqlc's (docs/decisions.md, "Layout").

// SituacaoConselheiro is what GET /d6a/conselheiros/me/situacao reads of
// a citizen's counsellor (CONTRACT §6, §8), all of it from one snapshot:
// the row, its active assignment, its external training and its link at
// the unit of action.
type SituacaoConselheiro struct {
	ID, UC               uuid.UUID
	NivelAtuacao         int32
	Status               string
	CapacitacaoConcluida bool
	SuspensaoAte         *time.Time
	// NivelProgressao is the level after a progression (nil: none).
	NivelProgressao *int32
	// Atribuicao is the active assignment (nil: none).
	Atribuicao *AtribuicaoPublica
	// CapacitacaoExterna is the training capacitação.concluída recorded
	// (nil: none).
	CapacitacaoExterna *CapacitacaoExterna
	// Vinculo is the link at UC (nil: never validated).
	Vinculo *VinculoNaUC
}

// AtribuicaoPublica is an active assignment as its counsellor sees it,
// with what a citizen needs to check the draw (spec 4.4).
type AtribuicaoPublica struct {
	DemandaID, UC  uuid.UUID
	DataSorteio    time.Time
	SeedPublico    string
	EventIDSorteio uuid.UUID
}

// CapacitacaoExterna is a counsellor's training on the external record.
type CapacitacaoExterna struct {
	CursoID, ConcluidaEm string
}

// VinculoNaUC is a counsellor's link at their unit of action: Valido false
// when revoked; Origem the input that set it (vinculo.validado or
// progressao.habilitada).
type VinculoNaUC struct {
	Valido bool
	Origem string
}

// SituacaoDoCidadao reads the counsellor of cidadao (the oldest, should
// there be several) in one statement; false when the citizen never
// registered.
func (t Tx) SituacaoDoCidadao(ctx context.Context, cidadao uuid.UUID) (SituacaoConselheiro, bool, error) {
	r, err := t.q.BuscarSituacao(ctx, cidadao)
	if achou, err := Found(err); !achou || err != nil {
		return SituacaoConselheiro{}, false, err
	}
	s := SituacaoConselheiro{
		ID: r.ID, UC: r.UnidadeCivicaID, NivelAtuacao: r.NivelAtuacao, Status: r.Status,
		CapacitacaoConcluida: r.CapacitacaoConcluida, SuspensaoAte: r.DataSuspensaoAte, NivelProgressao: r.NivelProgressao,
	}
	if r.TemAtribuicao {
		s.Atribuicao = &AtribuicaoPublica{
			DemandaID: r.AtribuicaoDemandaID, UC: r.AtribuicaoUnidadeCivicaID, DataSorteio: r.AtribuicaoDataSorteio,
			SeedPublico: r.AtribuicaoSeedPublico, EventIDSorteio: r.AtribuicaoEventIDSorteio,
		}
	}
	if r.TemCapacitacaoExterna {
		s.CapacitacaoExterna = &CapacitacaoExterna{CursoID: r.CapacitacaoCursoID, ConcluidaEm: r.CapacitacaoConcluidaEm}
	}
	if r.TemVinculo {
		s.Vinculo = &VinculoNaUC{Valido: r.VinculoValido, Origem: r.VinculoOrigem}
	}
	return s, true, nil
}

// ResumoDoLog is the public log as it stands: the latest signed
// checkpoint's size, root and signing time, and the first index whose
// draws follow their trigger (CONTRACT §4).
type ResumoDoLog struct {
	Tamanho      int64
	Raiz         []byte
	AssinadoEm   time.Time
	GatilhoDesde int64
}

// ResumoDoLog reads the log's summary; false before the first signed
// checkpoint.
func (t Tx) ResumoDoLog(ctx context.Context) (ResumoDoLog, bool, error) {
	r, err := t.q.BuscarResumoDoLog(ctx)
	if achou, err := Found(err); !achou || err != nil {
		return ResumoDoLog{}, false, err
	}
	return ResumoDoLog(r), true, nil
}
