package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The counsellors (d6a.conselheiros) and what their status hangs on: the
// suspensions for refusals (d6a.suspensoes) and the refusals counted since
// the last acceptance (d6a.contador_recusas).

// Conselheiro is a counsellor as the decisions read one: who, where, and
// the status the state machine (elegibilidade) moves.
type Conselheiro struct {
	ID, Cidadao, UC uuid.UUID
	Nivel           int32
	Status          string
	// SuspensaoAte is data_suspensao_ate, kept through an inactivation.
	SuspensaoAte *time.Time
}

func conselheiro(c dbsqlc.D6aConselheiro, err error) (Conselheiro, bool, error) {
	if achou, err := Found(err); !achou || err != nil {
		return Conselheiro{}, false, err
	}
	return Conselheiro{
		ID: c.ID, Cidadao: c.CidadaoID, UC: c.UnidadeCivicaID, Nivel: c.NivelAtuacao,
		Status: c.Status, SuspensaoAte: c.DataSuspensaoAte,
	}, true, nil
}

// ConselheiroPorID reads a counsellor.
func (t Tx) ConselheiroPorID(ctx context.Context, id uuid.UUID) (Conselheiro, bool, error) {
	return conselheiro(t.q.BuscarConselheiroPorId(ctx, id))
}

// ConselheiroParaAtualizar reads and locks (FOR UPDATE) a counsellor.
func (t Tx) ConselheiroParaAtualizar(ctx context.Context, id uuid.UUID) (Conselheiro, bool, error) {
	return conselheiro(t.q.BuscarConselheiroPorIdParaAtualizar(ctx, id))
}

// CadastroAplicado reports whether the registration eventID made a
// counsellor (spec 3.10 step 1).
func (t Tx) CadastroAplicado(ctx context.Context, eventID uuid.UUID) (bool, error) {
	_, err := t.q.BuscarConselheiroPorEventIdCadastro(ctx, eventID)
	return Found(err)
}

// Cadastro is a new counsellor (spec 3.10 step 3: id = cidadao_id).
type Cadastro struct {
	Cidadao, UC uuid.UUID
	Nivel       int32
	Status      string
	Capacitacao bool
	EventID     uuid.UUID
	Agora       time.Time
}

// Cadastrar inserts a counsellor.
func (t Tx) Cadastrar(ctx context.Context, c Cadastro) error {
	return t.q.InserirConselheiro(ctx, dbsqlc.InserirConselheiroParams{
		CidadaoID: c.Cidadao, UnidadeCivicaID: c.UC, NivelAtuacao: c.Nivel, Status: c.Status,
		CapacitacaoConcluida: c.Capacitacao, Agora: c.Agora, EventID: c.EventID,
	})
}

// ConselheiroNoStatus is a counsellor found by status: who, and the
// citizen whose situation a change of that status alters.
type ConselheiroNoStatus struct {
	Conselheiro, Cidadao uuid.UUID
}

// ConselheirosNoStatus lists the counsellors whose status is status, by id.
func (t Tx) ConselheirosNoStatus(ctx context.Context, status string) ([]ConselheiroNoStatus, error) {
	rows, err := t.q.BuscarConselheirosPorStatus(ctx, status)
	if err != nil {
		return nil, err
	}
	out := make([]ConselheiroNoStatus, len(rows))
	for i, c := range rows {
		out[i] = ConselheiroNoStatus{Conselheiro: c.ID, Cidadao: c.CidadaoID}
	}
	return out, nil
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

// MudarStatus sets a counsellor's status, recorded under eventID at agora.
func (t Tx) MudarStatus(ctx context.Context, conselheiro uuid.UUID, status string, eventID uuid.UUID, agora time.Time) error {
	_, err := t.q.AtualizarStatusConselheiro(ctx, dbsqlc.AtualizarStatusConselheiroParams{
		ID: conselheiro, Status: status, EventID: eventID, Agora: agora,
	})
	return err
}

// MarcarInativo sets a counsellor inativo, recorded under eventID at agora
// (data_suspensao_ate is kept).
func (t Tx) MarcarInativo(ctx context.Context, conselheiro, eventID uuid.UUID, agora time.Time) error {
	_, err := t.q.InativarConselheiro(ctx, dbsqlc.InativarConselheiroParams{ID: conselheiro, EventID: eventID, Agora: agora})
	return err
}

// OcuparConselheiro marks the counsellor ocupado under eventID; false when
// no counsellor has that id.
func (t Tx) OcuparConselheiro(ctx context.Context, conselheiro, eventID uuid.UUID, agora time.Time) (bool, error) {
	n, err := t.q.MarcarConselheiroOcupado(ctx, dbsqlc.MarcarConselheiroOcupadoParams{ID: conselheiro, EventID: eventID, Agora: agora})
	return n > 0, err
}

// MarcarCapacitado sets a registered counsellor's training flag.
func (t Tx) MarcarCapacitado(ctx context.Context, conselheiro, eventID uuid.UUID, agora time.Time) error {
	_, err := t.q.MarcarCapacitacaoConcluida(ctx, dbsqlc.MarcarCapacitacaoConcluidaParams{ID: conselheiro, EventID: eventID, Agora: agora})
	return err
}

// Progredir moves a counsellor's unit of action to uc at nivel (the
// registration's unit is kept once).
func (t Tx) Progredir(ctx context.Context, conselheiro, uc uuid.UUID, nivel int32, eventID uuid.UUID, agora time.Time) error {
	_, err := t.q.ProgredirConselheiro(ctx, dbsqlc.ProgredirConselheiroParams{
		ID: conselheiro, UnidadeCivicaID: uc, Nivel: &nivel, EventID: eventID, Agora: agora,
	})
	return err
}

// Suspender sets a counsellor suspenso until ate, under eventID at agora.
func (t Tx) Suspender(ctx context.Context, conselheiro uuid.UUID, ate time.Time, eventID uuid.UUID, agora time.Time) error {
	_, err := t.q.SuspenderConselheiro(ctx, dbsqlc.SuspenderConselheiroParams{ID: conselheiro, Ate: &ate, EventID: eventID, Agora: agora})
	return err
}

// Suspensao is a row of d6a.suspensoes: a suspension for refusals
// (spec 3.12 step 4), with the parameters' version that set it.
type Suspensao struct {
	Conselheiro, EventoRecusa uuid.UUID
	Consecutivas              int32
	Ate                       time.Time
	VersaoParametros          int32
	Agora                     time.Time
}

// AnotarSuspensao records a suspension.
func (t Tx) AnotarSuspensao(ctx context.Context, s Suspensao) error {
	return t.q.InserirSuspensao(ctx, dbsqlc.InserirSuspensaoParams{
		ConselheiroID: s.Conselheiro, EventoIDRecusa: s.EventoRecusa, RecusasConsecutivas: s.Consecutivas,
		DataSuspensaoAte: s.Ate, VersaoParametros: s.VersaoParametros, Agora: s.Agora,
	})
}

// SuspensaoVencida is a counsellor still marked suspenso whose suspension
// ended (data_suspensao_ate passed).
type SuspensaoVencida struct {
	Conselheiro uuid.UUID
	Cidadao     uuid.UUID
	Status      string
	Ate         time.Time
}

// SuspensoesVencidas lists the suspensions ended by agora whose
// counsellors are still marked suspenso, by id.
func (t Tx) SuspensoesVencidas(ctx context.Context, agora time.Time) ([]SuspensaoVencida, error) {
	rows, err := t.q.BuscarSuspensosComPrazoVencido(ctx, agora)
	if err != nil {
		return nil, err
	}
	out := make([]SuspensaoVencida, len(rows))
	for i, c := range rows {
		out[i] = SuspensaoVencida{Conselheiro: c.ID, Cidadao: c.CidadaoID, Status: c.Status, Ate: c.DataSuspensaoAte.UTC()}
	}
	return out, nil
}

// RecusaAplicada reports whether the refusal eventID was counted.
func (t Tx) RecusaAplicada(ctx context.Context, eventID uuid.UUID) (bool, error) {
	_, err := t.q.BuscarRecusaPorEventoId(ctx, eventID)
	return Found(err)
}

// RecusasDesdeAceitacao counts a counsellor's refusals since their last
// acceptance, all of them if none (spec 3.12 step 4).
func (t Tx) RecusasDesdeAceitacao(ctx context.Context, conselheiro uuid.UUID) (int64, error) {
	var desde *time.Time
	ultima, err := t.q.BuscarUltimaAceitacao(ctx, conselheiro)
	if aceitou, err := Found(err); err != nil {
		return 0, err
	} else if aceitou {
		desde = &ultima
	}
	return t.q.ContarRecusasDesdeData(ctx, dbsqlc.ContarRecusasDesdeDataParams{ConselheiroID: conselheiro, Desde: desde})
}

// RecusaContada is a counted refusal (d6a.contador_recusas).
type RecusaContada struct {
	EventoRecusa, Conselheiro, Demanda uuid.UUID
	Consecutivas                       int32
	Agora                              time.Time
}

// ContarRecusa records a counted refusal.
func (t Tx) ContarRecusa(ctx context.Context, r RecusaContada) error {
	return t.q.InserirRecusa(ctx, dbsqlc.InserirRecusaParams{
		EventoIDRecusa: r.EventoRecusa, ConselheiroID: r.Conselheiro, RecusasConsecutivas: r.Consecutivas,
		Agora: r.Agora, DemandaIDRecusada: r.Demanda,
	})
}

// VisaoConselheiro is what a step about one counsellor reads
// (decisao.Visao): whether its input was applied before, the counsellor's
// row (locked, as ConselheiroParaAtualizar) and their active assignment.
type VisaoConselheiro struct {
	Aplicada       bool
	Conselheiro    Conselheiro
	TemConselheiro bool
	Ativa          AtribuicaoVigente
	TemAtiva       bool
}

// LerVisaoConselheiro reads id's view for the input eventID in one round
// trip (Leituras), instead of one per query; aplicada are the checks that
// eventID was applied before (Tx.EncerramentoAplicado, Tx.RecusaAplicada).
func (t Tx) LerVisaoConselheiro(ctx context.Context, id, eventID uuid.UUID, aplicada ...func(Tx, context.Context, uuid.UUID) (bool, error)) (VisaoConselheiro, error) {
	var v VisaoConselheiro
	var l Leituras
	for _, f := range aplicada {
		l.Ler(func(tx Tx) error {
			achou, err := f(tx, ctx, eventID)
			v.Aplicada = v.Aplicada || achou
			return err
		})
	}
	l.Ler(func(tx Tx) (err error) {
		v.Conselheiro, v.TemConselheiro, err = tx.ConselheiroParaAtualizar(ctx, id)
		return err
	})
	l.Ler(func(tx Tx) (err error) {
		v.Ativa, v.TemAtiva, err = tx.AtribuicaoAtivaDoConselheiro(ctx, id)
		return err
	})
	return v, l.Enviar(ctx, t)
}
