package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

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

// Status values the answer uses (spec 2.2).
const (
	statusDisponivel = "disponivel"
	statusSuspenso   = "suspenso"
)

// lerSituacao reads the counsellor row of cidadao and its active assignment.
// It returns naoCadastrado or *Situacao.
//
// Both reads run in one REPEATABLE READ, READ ONLY transaction: the draw
// and the release each change the counsellor's status and the assignment in
// one transaction, and two separate statements could straddle such a commit
// and answer "ocupado" with no assignment, or "disponivel" with one.
func lerSituacao(ctx context.Context, st *store.Store, cidadao uuid.UUID, agora time.Time) (any, error) {
	var out any
	err := st.InTx(ctx, func(tx store.Tx) error {
		if _, err := tx.DB.Exec(ctx, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"); err != nil {
			return fmt.Errorf("set transaction: %w", err)
		}
		rows, err := tx.BuscarConselheiroPorCidadao(ctx, cidadao)
		if err != nil {
			return fmt.Errorf("buscar conselheiro: %w", err)
		}
		if len(rows) == 0 {
			out = naoCadastrado{}
			return nil
		}
		if len(rows) > 1 {
			// id = cidadao_id (spec 3.10) makes this impossible through the
			// handlers; answer with the oldest row, as the query orders them.
			slog.Warn("citizen has several counsellor rows; answering with the oldest",
				"cidadao_id", cidadao, "linhas", len(rows))
		}
		c := rows[0]
		s := &Situacao{
			Cadastrado:           true,
			ConselheiroID:        c.ID,
			UnidadeCivicaID:      c.UnidadeCivicaID,
			NivelAtuacao:         c.NivelAtuacao,
			Status:               statusEfetivo(c, agora),
			CapacitacaoConcluida: c.CapacitacaoConcluida,
		}
		if c.DataSuspensaoAte != nil {
			d := iso(*c.DataSuspensaoAte)
			s.DataSuspensaoAte = &d
		}
		a, err := tx.BuscarAtribuicaoAtivaPorConselheiro(ctx, c.ID)
		found, err := store.Found(err)
		if err != nil {
			return fmt.Errorf("buscar atribuição ativa: %w", err)
		}
		if found {
			s.AtribuicaoAtiva = &AtribuicaoAtiva{
				DemandaID:       a.DemandaID,
				UnidadeCivicaID: a.UnidadeCivicaID,
				DataSorteio:     iso(a.DataSorteio),
				SeedPublico:     a.SeedPublico,
				EventIDSorteio:  a.EventIDSorteio,
			}
		}
		out = s
		return nil
	})
	return out, err
}

// statusEfetivo is the status the citizen sees. A suspension whose date has
// passed reads as disponivel before the boot reactivation rewrites the row
// (CONTRACT §5, spec 4.6 and 4.8), with the boot query's strict comparison
// data_suspensao_ate < now.
func statusEfetivo(c store.Conselheiro, agora time.Time) string {
	if c.Status == statusSuspenso && c.DataSuspensaoAte != nil && c.DataSuspensaoAte.Before(agora) {
		return statusDisponivel
	}
	return c.Status
}
