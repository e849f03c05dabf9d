package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The operators' console (internal/console) reads and writes through these
// methods, in its own words and types, not sqlc's (docs/decisions.md,
// "Layout"). Its writes run on the executor's unit
// (atribuicao.Unidade.Tx), its listings on Store.Read.

// MarcarInativo sets a counsellor inativo, recorded under eventID at agora
// (data_suspensao_ate is kept).
func (t Tx) MarcarInativo(ctx context.Context, conselheiro, eventID uuid.UUID, agora time.Time) error {
	_, err := t.q.InativarConselheiro(ctx, dbsqlc.InativarConselheiroParams{ID: conselheiro, EventID: eventID, Agora: agora})
	return err
}

// AtribuicaoDoSorteio is an assignment, whatever its status, read by its
// draw's event id, with what the draw wrote of itself (the verifier,
// verificar/banco, checks it against the audit record).
type AtribuicaoDoSorteio struct {
	AtribuicaoVigente
	Status                          string
	SeedPublico, MetodoSorteio      string
	PosicaoSorteada, TotalElegiveis int32
	ListaElegiveisHash              *string
}

func doSorteio(a dbsqlc.D6aAtribuico) AtribuicaoDoSorteio {
	return AtribuicaoDoSorteio{
		AtribuicaoVigente: vigenteDe(a), Status: a.Status,
		SeedPublico: a.SeedPublico, MetodoSorteio: a.MetodoSorteio,
		PosicaoSorteada: a.PosicaoSorteada, TotalElegiveis: a.TotalElegiveis, ListaElegiveisHash: a.ListaElegiveisHash,
	}
}

// AtribuicaoPorSorteio reads the assignment of the draw eventIDSorteio.
func (t Tx) AtribuicaoPorSorteio(ctx context.Context, eventIDSorteio uuid.UUID) (AtribuicaoDoSorteio, bool, error) {
	a, err := t.q.BuscarAtribuicaoPorEventIdSorteio(ctx, eventIDSorteio)
	if achou, err := Found(err); !achou || err != nil {
		return AtribuicaoDoSorteio{}, false, err
	}
	return doSorteio(a), true, nil
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

// VersaoParametros is a version of the parameters (d6a.config), with who
// asked for it and why.
type VersaoParametros struct {
	// Versao is the version's number; set when read, ignored when written.
	Versao                                                  int32
	NRecusasSuspensao, TSuspensaoDias, TimeoutRespostaHoras int32
	Sub, Justificativa                                      string
	Em                                                      time.Time
}

func versaoParametros(r dbsqlc.D6aConfig) VersaoParametros {
	return VersaoParametros{
		Versao: r.Versao, NRecusasSuspensao: r.NRecusasSuspensao, TSuspensaoDias: r.TSuspensaoDias,
		TimeoutRespostaHoras: r.TimeoutRespostaHoras, Sub: r.Sub, Justificativa: r.Justificativa, Em: r.CriadoEm,
	}
}

// InserirVersaoParametros writes v, numbered after the latest, and returns
// its number. The caller holds the executor's lock.
func (t Tx) InserirVersaoParametros(ctx context.Context, v VersaoParametros) (int32, error) {
	return t.q.InserirParametros(ctx, dbsqlc.InserirParametrosParams{
		NRecusasSuspensao: v.NRecusasSuspensao, TSuspensaoDias: v.TSuspensaoDias, TimeoutRespostaHoras: v.TimeoutRespostaHoras,
		Sub: v.Sub, Justificativa: v.Justificativa, Agora: v.Em,
	})
}

// VersaoVigente reads the version in force; none before the boot seeds
// version 1.
func (t Tx) VersaoVigente(ctx context.Context) (VersaoParametros, bool, error) {
	r, err := t.q.ParametrosVigentes(ctx)
	if achou, err := Found(err); !achou || err != nil {
		return VersaoParametros{}, false, err
	}
	return versaoParametros(r), true, nil
}

// VersoesParametros lists every version, oldest first.
func (t Tx) VersoesParametros(ctx context.Context) ([]VersaoParametros, error) {
	rows, err := t.q.HistoricoParametros(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]VersaoParametros, len(rows))
	for i, r := range rows {
		out[i] = versaoParametros(r)
	}
	return out, nil
}

// Ocupacao is an active assignment with its counsellor's status and
// whether the demand started (conselheiro.demanda_iniciada).
type Ocupacao struct {
	AtribuicaoVigente
	StatusConselheiro string
	Iniciada          bool
	IniciadaEm        *time.Time
}

// OcupacoesAntesDe lists up to limite active assignments drawn before
// antesDe, oldest first.
func (t Tx) OcupacoesAntesDe(ctx context.Context, antesDe time.Time, limite int32) ([]Ocupacao, error) {
	rows, err := t.q.BuscarOcupados(ctx, dbsqlc.BuscarOcupadosParams{AntesDe: antesDe, Limite: limite})
	if err != nil {
		return nil, err
	}
	out := make([]Ocupacao, len(rows))
	for i, r := range rows {
		out[i] = Ocupacao{
			AtribuicaoVigente: AtribuicaoVigente{
				ID: r.ID, EventIDSorteio: r.EventIDSorteio, DemandaID: r.DemandaID, ConselheiroID: r.ConselheiroID,
				UC: r.UnidadeCivicaID, DataSorteio: r.DataSorteio,
			},
			StatusConselheiro: r.StatusConselheiro, Iniciada: r.Iniciada, IniciadaEm: r.IniciadaEm,
		}
	}
	return out, nil
}

// Pendentes lists up to limite demands of the pending queue, oldest first,
// of the unit uc when set.
func (t Tx) Pendentes(ctx context.Context, uc *uuid.UUID, limite int32) ([]Pendente, error) {
	return pendentes(t.q.ListarFila(ctx, dbsqlc.ListarFilaParams{Uc: uc, Limite: limite}))
}

// Exclusoes counts, over a set of units, the counsellors each exclusion
// leaves out of the draw (a counsellor may count under several).
type Exclusoes struct {
	Cadastrados, Ocupados, Inativos, Suspensos, SemCapacitacao, SemVinculo int64
}

// ExclusoesNasUcs counts the exclusions over ucs at agora, under the
// phase-2 gates given.
func (t Tx) ExclusoesNasUcs(ctx context.Context, ucs []uuid.UUID, agora time.Time, capacitacaoExterna, exigirVinculo bool) (Exclusoes, error) {
	r, err := t.q.ContarRazoesPorUcs(ctx, dbsqlc.ContarRazoesPorUcsParams{
		Ucs: ucs, Agora: agora, CapacitacaoExterna: capacitacaoExterna, ExigirVinculo: exigirVinculo,
	})
	if err != nil {
		return Exclusoes{}, err
	}
	return Exclusoes{Cadastrados: r.Cadastrados, Ocupados: r.Ocupados, Inativos: r.Inativos,
		Suspensos: r.Suspensos, SemCapacitacao: r.SemCapacitacao, SemVinculo: r.SemVinculo}, nil
}

// Processado reports whether the event id is in the inbox.
func (t Tx) Processado(ctx context.Context, eventID uuid.UUID) (bool, error) {
	return t.q.EventoJaProcessado(ctx, eventID)
}
