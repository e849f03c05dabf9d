package httpapi

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/store"
)

// formatoISO is the timestamp form of every d6a answer: UTC, milliseconds
// (CONTRACT §3 and §6: 2026-11-29T14:03:07.123Z).
const formatoISO = "2006-01-02T15:04:05.000Z"

func iso(t time.Time) string { return t.UTC().Format(formatoISO) }

// naoCadastrado is the answer for a citizen who never registered (spec 5.5).
type naoCadastrado struct {
	Cadastrado bool `json:"cadastrado"`
}

// Situacao is the answer of GET /d6a/conselheiros/me/situacao for a
// registered citizen (CONTRACT §6).
type Situacao struct {
	Cadastrado           bool             `json:"cadastrado"`
	ConselheiroID        uuid.UUID        `json:"conselheiro_id"`
	UnidadeCivicaID      uuid.UUID        `json:"unidade_civica_id"`
	NivelAtuacao         int32            `json:"nivel_atuacao"`
	Status               string           `json:"status"`
	CapacitacaoConcluida bool             `json:"capacitacao_concluida"`
	DataSuspensaoAte     *string          `json:"data_suspensao_ate"`
	AtribuicaoAtiva      *AtribuicaoAtiva `json:"atribuicao_ativa"`
	// Phase 2 (CONTRACT §8): the training on the external record (null:
	// none), the link at the unit of action, and the level after a
	// progression (null: none).
	CapacitacaoExterna *CapacitacaoExterna `json:"capacitacao_externa"`
	Vinculo            Vinculo             `json:"vinculo"`
	NivelProgressao    *int32              `json:"nivel_progressao"`
}

// CapacitacaoExterna is the counsellor's training as capacitação.concluída
// recorded it.
type CapacitacaoExterna struct {
	CursoID     string `json:"curso_id"`
	ConcluidaEm string `json:"concluida_em"`
}

// Vinculo is the counsellor's link to their unit of action: valido null
// when never validated, false when revoked; origem the input that set it
// (vinculo.validado or progressao.habilitada).
type Vinculo struct {
	UnidadeCivicaID uuid.UUID `json:"unidade_civica_id"`
	Valido          *bool     `json:"valido"`
	Origem          *string   `json:"origem"`
}

// AtribuicaoAtiva is the counsellor's active assignment, with what a citizen
// needs to check the draw (seed_publico, event_id_sorteio; spec 4.4).
type AtribuicaoAtiva struct {
	DemandaID       uuid.UUID `json:"demanda_id"`
	UnidadeCivicaID uuid.UUID `json:"unidade_civica_id"`
	DataSorteio     string    `json:"data_sorteio"`
	SeedPublico     string    `json:"seed_publico"`
	EventIDSorteio  uuid.UUID `json:"event_id_sorteio"`
}

// Leitura is what the public routes read of the database through store's
// domain methods: a citizen's situation and the log's summary (store.Tx
// over the pool, from Store.Read).
type Leitura interface {
	// SituacaoDoCidadao reads the counsellor of a citizen in one
	// snapshot; false when the citizen never registered.
	SituacaoDoCidadao(ctx context.Context, cidadao uuid.UUID) (store.SituacaoConselheiro, bool, error)
	// ResumoDoLog reads the latest signed checkpoint and the trigger
	// rule's first index; false before the first checkpoint.
	ResumoDoLog(ctx context.Context) (store.ResumoDoLog, bool, error)
}

// lerSituacao is the spec's obterSituacaoConselheiro (5.5). It answers from
// the cache or reads the counsellor row of cidadao
// and its active assignment in one statement, hence one snapshot: the draw
// and the release each change the counsellor's status and the assignment
// in one transaction, and two statements could straddle such a commit and
// answer "ocupado" with no assignment, or "disponivel" with one. It
// returns naoCadastrado or *Situacao. The status is derived from the row on
// every request (a suspension ends by the clock, not by a write).
//
// entrar, when not nil, admits the database read (vagas.entrar): its error
// is returned as is.
func lerSituacao(ctx context.Context, db Leitura, cache *Cache, cidadao uuid.UUID, agora time.Time, entrar func() (func(), error)) (any, error) {
	r, found, ok := cache.ler(cidadao, agora)
	if !ok {
		if entrar != nil {
			sair, err := entrar()
			if err != nil {
				return nil, err
			}
			defer sair()
		}
		geracao := cache.inicio()
		var err error
		r, found, err = db.SituacaoDoCidadao(ctx, cidadao)
		if err != nil {
			return nil, fmt.Errorf("buscar situação: %w", err)
		}
		cache.guardar(cidadao, geracao, r, found, agora)
	}
	if !found {
		return naoCadastrado{}, nil
	}
	s := &Situacao{
		Cadastrado:           true,
		ConselheiroID:        r.ID,
		UnidadeCivicaID:      r.UC,
		NivelAtuacao:         r.NivelAtuacao,
		Status:               elegibilidade.StatusEfetivo(r.Status, r.SuspensaoAte, agora),
		CapacitacaoConcluida: r.CapacitacaoConcluida,
	}
	s.NivelProgressao = r.NivelProgressao
	if k := r.CapacitacaoExterna; k != nil {
		s.CapacitacaoExterna = &CapacitacaoExterna{CursoID: k.CursoID, ConcluidaEm: k.ConcluidaEm}
	}
	s.Vinculo.UnidadeCivicaID = r.UC
	if v := r.Vinculo; v != nil {
		valido, origem := v.Valido, v.Origem
		s.Vinculo.Valido, s.Vinculo.Origem = &valido, &origem
	}
	if r.SuspensaoAte != nil {
		d := iso(*r.SuspensaoAte)
		s.DataSuspensaoAte = &d
	}
	if a := r.Atribuicao; a != nil {
		s.AtribuicaoAtiva = &AtribuicaoAtiva{
			DemandaID:       a.DemandaID,
			UnidadeCivicaID: a.UC,
			DataSorteio:     iso(a.DataSorteio),
			SeedPublico:     a.SeedPublico,
			EventIDSorteio:  a.EventIDSorteio,
		}
	}
	return s, nil
}
