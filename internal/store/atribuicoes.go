package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The assignments (d6a.atribuicoes) and when they started
// (d6a.atribuicoes_iniciadas); the guards of an agenda item, which read
// them beside the pending queue and the outbox.

// DadosDemanda is the demand's snapshot an assignment and a pending row
// keep, from which a re-draw or a queued draw runs (spec 2.3).
type DadosDemanda struct {
	ScoreFinal       float64
	CategoriaID      string
	NivelPrecedencia int32
	GrupoID          *uuid.UUID
}

// AtribuicaoVigente is an active assignment as the decisions read it (the
// handlers, the repair, the automatic timeout, the console): who, which
// demand, where, the draw that made it and the demand's snapshot.
type AtribuicaoVigente struct {
	ID, EventIDSorteio, DemandaID, ConselheiroID, UC uuid.UUID
	DataSorteio                                      time.Time
	// Demanda is the demand's snapshot, from which a re-draw runs.
	Demanda DadosDemanda
}

// vigenteDe is a's domain view.
func vigenteDe(a dbsqlc.D6aAtribuico) AtribuicaoVigente {
	return AtribuicaoVigente{
		ID: a.ID, EventIDSorteio: a.EventIDSorteio, DemandaID: a.DemandaID, ConselheiroID: a.ConselheiroID,
		UC: a.UnidadeCivicaID, DataSorteio: a.DataSorteio,
		Demanda: DadosDemanda{ScoreFinal: a.ScoreFinal, CategoriaID: a.CategoriaID, NivelPrecedencia: a.NivelPrecedencia, GrupoID: a.GrupoID},
	}
}

func vigente(a dbsqlc.D6aAtribuico, err error) (AtribuicaoVigente, bool, error) {
	achou, err := Found(err)
	if !achou || err != nil {
		return AtribuicaoVigente{}, false, err
	}
	return vigenteDe(a), true, nil
}

// AtribuicaoAtivaDoPar reads the active assignment of conselheiro to
// demanda.
func (t Tx) AtribuicaoAtivaDoPar(ctx context.Context, conselheiro, demanda uuid.UUID) (AtribuicaoVigente, bool, error) {
	return vigente(t.q.BuscarAtribuicaoAtivaPorConselheiroEDemanda(ctx, dbsqlc.BuscarAtribuicaoAtivaPorConselheiroEDemandaParams{
		ConselheiroID: conselheiro, DemandaID: demanda,
	}))
}

// AtribuicaoAtivaDaDemanda reads the demand's active assignment, if any.
func (t Tx) AtribuicaoAtivaDaDemanda(ctx context.Context, demanda uuid.UUID) (AtribuicaoVigente, bool, error) {
	a, err := t.q.BuscarAtribuicaoAtivaPorDemanda(ctx, demanda)
	return vigente(a, err)
}

// AtribuicaoAtivaDoConselheiro reads the counsellor's active assignment, if
// any.
func (t Tx) AtribuicaoAtivaDoConselheiro(ctx context.Context, conselheiro uuid.UUID) (AtribuicaoVigente, bool, error) {
	a, err := t.q.BuscarAtribuicaoAtivaPorConselheiro(ctx, conselheiro)
	return vigente(a, err)
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

// UltimaAtribuicaoDoPar reads the latest assignment, whatever its status,
// of conselheiro to demanda.
func (t Tx) UltimaAtribuicaoDoPar(ctx context.Context, conselheiro, demanda uuid.UUID) (AtribuicaoDoSorteio, bool, error) {
	a, err := t.q.BuscarUltimaAtribuicaoPorConselheiroEDemanda(ctx, dbsqlc.BuscarUltimaAtribuicaoPorConselheiroEDemandaParams{
		ConselheiroID: conselheiro, DemandaID: demanda,
	})
	if achou, err := Found(err); !achou || err != nil {
		return AtribuicaoDoSorteio{}, false, err
	}
	return doSorteio(a), true, nil
}

// SorteioTemAtribuicao says whether the draw eventID has its assignment.
func (t Tx) SorteioTemAtribuicao(ctx context.Context, eventID uuid.UUID) (bool, error) {
	_, err := t.q.BuscarAtribuicaoPorEventIdSorteio(ctx, eventID)
	return Found(err)
}

// SorteiosComAtribuicao is those of ids (conselheiro.sorteado event ids)
// whose assignment exists.
func (t Tx) SorteiosComAtribuicao(ctx context.Context, ids []uuid.UUID) ([]uuid.UUID, error) {
	return t.q.AtribuicoesExistentes(ctx, ids)
}

// EncerramentoAplicado reports whether eventID already closed an
// assignment (spec 3.11 and 3.12 step 1).
func (t Tx) EncerramentoAplicado(ctx context.Context, eventID uuid.UUID) (bool, error) {
	_, err := t.q.BuscarAtribuicaoPorEventIdEncerramento(ctx, &eventID)
	return Found(err)
}

// Encerrar closes an active assignment with status (concluida, recusada)
// under eventID.
func (t Tx) Encerrar(ctx context.Context, atribuicao uuid.UUID, status string, eventID uuid.UUID) error {
	_, err := t.q.AtualizarStatusAtribuicao(ctx, dbsqlc.AtualizarStatusAtribuicaoParams{ID: atribuicao, Status: status, EventID: &eventID})
	return err
}

// SorteioReconciliado is a draw the bus holds and the database lost, as the
// repair re-creates it: the published conselheiro.sorteado and the demand's
// snapshot from its agenda item.
type SorteioReconciliado struct {
	EventID, ConselheiroID, DemandaID, UC uuid.UUID
	Seed, ListaHash                       string
	Posicao, Total                        int32
	Quando                                time.Time
	ScoreFinal                            float64
	CategoriaID                           string
	NivelPrecedencia                      int32
	GrupoID                               *uuid.UUID
}

// RecriarAtribuicao writes the active assignment of a re-created draw and
// returns its id.
func (t Tx) RecriarAtribuicao(ctx context.Context, s SorteioReconciliado) (uuid.UUID, error) {
	hash := s.ListaHash
	return t.q.InserirAtribuicao(ctx, dbsqlc.InserirAtribuicaoParams{
		ConselheiroID: s.ConselheiroID, DemandaID: s.DemandaID, UnidadeCivicaID: s.UC,
		SeedPublico: s.Seed, PosicaoSorteada: s.Posicao, TotalElegiveis: s.Total,
		ListaElegiveisHash: &hash, DataSorteio: s.Quando, EventIDSorteio: s.EventID,
		ScoreFinal: s.ScoreFinal, CategoriaID: s.CategoriaID, NivelPrecedencia: s.NivelPrecedencia, GrupoID: s.GrupoID,
	})
}

// AnotarInicio records when an assignment started
// (conselheiro.demanda_iniciada); novo is false when a start was recorded
// before (the first wins).
func (t Tx) AnotarInicio(ctx context.Context, a AtribuicaoVigente, iniciadaEm time.Time, eventID uuid.UUID, agora time.Time) (novo bool, err error) {
	n, err := t.q.RegistrarInicio(ctx, dbsqlc.RegistrarInicioParams{
		AtribuicaoID: a.ID, EventIDSorteio: a.EventIDSorteio, ConselheiroID: a.ConselheiroID, DemandaID: a.DemandaID,
		IniciadaEm: iniciadaEm, EventID: eventID, Agora: agora,
	})
	return n > 0, err
}

// AtivasSemInicio lists up to limite active assignments drawn before
// antesDe that never started (no conselheiro.demanda_iniciada), oldest
// first: the automatic response timeout's candidates.
func (t Tx) AtivasSemInicio(ctx context.Context, antesDe time.Time, limite int32) ([]AtribuicaoVigente, error) {
	rows, err := t.q.BuscarAtivasSemInicio(ctx, dbsqlc.BuscarAtivasSemInicioParams{AntesDe: antesDe, Limite: limite})
	if err != nil {
		return nil, err
	}
	out := make([]AtribuicaoVigente, len(rows))
	for i, a := range rows {
		out[i] = vigenteDe(a)
	}
	return out, nil
}

// TotalAtivasSemInicio counts the active assignments drawn before antesDe
// that never started (no conselheiro.demanda_iniciada).
func (t Tx) TotalAtivasSemInicio(ctx context.Context, antesDe time.Time) (int64, error) {
	return t.q.ContarAtivasSemInicio(ctx, antesDe)
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

// GuardaAgenda is what spec 3.9 steps 1, 3 and 4 read of an
// agenda.item_disponível: the event already queued, the demand already
// assigned or queued, and its sorteio.sem_candidatos already published.
type GuardaAgenda struct {
	EventID                uuid.UUID
	PendentePeloEvento     bool
	Atribuida              bool
	Pendente               bool
	SemCandidatosPublicado bool
}

// AgendaAGuardar is an agenda item whose guards a batch reads.
type AgendaAGuardar struct {
	EventID, DemandaID uuid.UUID
	Correlacao         string
}

// GuardaDaAgenda reads one item's guards.
func (t Tx) GuardaDaAgenda(ctx context.Context, a AgendaAGuardar) (GuardaAgenda, error) {
	r, err := t.q.GuardasAgenda(ctx, dbsqlc.GuardasAgendaParams{EventID: a.EventID, DemandaID: a.DemandaID, CorrelacaoID: a.Correlacao})
	return GuardaAgenda{
		EventID: a.EventID, PendentePeloEvento: r.PendentePeloEvento, Atribuida: r.Atribuida,
		Pendente: r.Pendente, SemCandidatosPublicado: r.SemCandidatosPublicado,
	}, err
}

// GuardasDaAgenda reads the guards of a run of items in one statement.
func (t Tx) GuardasDaAgenda(ctx context.Context, as []AgendaAGuardar) ([]GuardaAgenda, error) {
	var p dbsqlc.GuardasAgendaLoteParams
	for _, a := range as {
		p.EventIds = append(p.EventIds, a.EventID)
		p.DemandaIds = append(p.DemandaIds, a.DemandaID)
		p.Correlacoes = append(p.Correlacoes, a.Correlacao)
	}
	rows, err := t.q.GuardasAgendaLote(ctx, p)
	if err != nil {
		return nil, err
	}
	out := make([]GuardaAgenda, len(rows))
	for i, r := range rows {
		out[i] = GuardaAgenda(r)
	}
	return out, nil
}
