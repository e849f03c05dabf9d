package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/fila"
	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// What the executor's units of work (internal/atribuicao: the handlers of
// spec 3.9–3.12, the draw, the batch) read and write, in their words and
// types, not sqlc's (docs/decisions.md, "Layout"). The batch's opening
// reads and its writes run on a Tx whose DB records and replays
// statements (Leituras, Pipeline); these methods do not know the
// difference.

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

// DadosDemanda is the demand's snapshot an assignment and a pending row
// keep, from which a re-draw or a queued draw runs (spec 2.3).
type DadosDemanda struct {
	ScoreFinal       float64
	CategoriaID      string
	NivelPrecedencia int32
	GrupoID          *uuid.UUID
}

// EncerramentoAplicado reports whether eventID already closed an
// assignment (spec 3.11 and 3.12 step 1).
func (t Tx) EncerramentoAplicado(ctx context.Context, eventID uuid.UUID) (bool, error) {
	_, err := t.q.BuscarAtribuicaoPorEventIdEncerramento(ctx, &eventID)
	return Found(err)
}

// AtribuicaoAtivaDoPar reads the active assignment of conselheiro to
// demanda.
func (t Tx) AtribuicaoAtivaDoPar(ctx context.Context, conselheiro, demanda uuid.UUID) (AtribuicaoVigente, bool, error) {
	return vigente(t.q.BuscarAtribuicaoAtivaPorConselheiroEDemanda(ctx, dbsqlc.BuscarAtribuicaoAtivaPorConselheiroEDemandaParams{
		ConselheiroID: conselheiro, DemandaID: demanda,
	}))
}

// Encerrar closes an active assignment with status (concluida, recusada)
// under eventID.
func (t Tx) Encerrar(ctx context.Context, atribuicao uuid.UUID, status string, eventID uuid.UUID) error {
	_, err := t.q.AtualizarStatusAtribuicao(ctx, dbsqlc.AtualizarStatusAtribuicaoParams{ID: atribuicao, Status: status, EventID: &eventID})
	return err
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

// CabecasDaFila reads the head of each unit's queue among ucs: the rows
// fila.Devida chooses from.
func (t Tx) CabecasDaFila(ctx context.Context, ucs []uuid.UUID) ([]Pendente, error) {
	return pendentes(t.q.BuscarCabecasDaFilaPorUcs(ctx, ucs))
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

// PendenteDaDemanda reads the pending row of a demand.
func (t Tx) PendenteDaDemanda(ctx context.Context, demanda uuid.UUID) (Pendente, bool, error) {
	p, err := t.q.BuscarFilaPendentePorDemandaId(ctx, demanda)
	if achou, err := Found(err); !achou || err != nil {
		return Pendente{}, false, err
	}
	return pendente(p), true, nil
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

// SemCandidatosPublicado reports whether a result of tipo for the
// correlation is in the outbox (spec 3.9: one sorteio.sem_candidatos per
// demand).
func (t Tx) SemCandidatosPublicado(ctx context.Context, tipo, correlacao string) (bool, error) {
	return t.q.ExisteOutboxPorTipoCorrelacao(ctx, dbsqlc.ExisteOutboxPorTipoCorrelacaoParams{Tipo: tipo, CorrelacaoID: &correlacao})
}

// TravarSorteio takes the draws' transaction-wide advisory lock (spec 4.4
// comFilaGlobal) and refits the connection's generic plans.
func (t Tx) TravarSorteio(ctx context.Context, chave int64) error {
	_, err := t.q.AdvisoryLockSorteio(ctx, chave)
	return err
}

// JaProcessados is those of ids whose inbox row exists.
func (t Tx) JaProcessados(ctx context.Context, ids []uuid.UUID) ([]uuid.UUID, error) {
	return t.q.EventosJaProcessados(ctx, ids)
}

// Processamento is an inbox row (spec 2.6): an input applied, at its
// stream sequence.
type Processamento struct {
	EventID uuid.UUID
	Tipo    string
	Seq     int64
	Agora   time.Time
}

// RegistrarEntradas writes a batch's inbox rows and, per type, the offset
// of its last input (spec 2.6), in one statement.
func (t Tx) RegistrarEntradas(ctx context.Context, ps []Processamento) error {
	if len(ps) == 0 {
		return nil
	}
	var p dbsqlc.RegistrarProcessamentosParams
	ultimo := map[string]int{}
	for _, e := range ps {
		p.EventIds = append(p.EventIds, e.EventID)
		p.Tipos = append(p.Tipos, e.Tipo)
		p.Sequences = append(p.Sequences, e.Seq)
		p.Agoras = append(p.Agoras, e.Agora)
		if i, ok := ultimo[e.Tipo]; ok {
			p.OffsetSequences[i], p.OffsetAgoras[i] = e.Seq, e.Agora
			continue
		}
		ultimo[e.Tipo] = len(p.OffsetTipos)
		p.OffsetTipos = append(p.OffsetTipos, e.Tipo)
		p.OffsetSequences = append(p.OffsetSequences, e.Seq)
		p.OffsetAgoras = append(p.OffsetAgoras, e.Agora)
	}
	return t.q.RegistrarProcessamentos(ctx, p)
}

// RegistrarEntrada writes one input's inbox row and its type's offset.
func (t Tx) RegistrarEntrada(ctx context.Context, e Processamento) error {
	return t.q.RegistrarProcessamento(ctx, dbsqlc.RegistrarProcessamentoParams{
		EventID: e.EventID, TipoEvento: e.Tipo, Sequence: e.Seq, Agora: e.Agora,
	})
}

// MarcarOrigens records, for outbox rows (by event id), the stream
// sequence of the input that led to each.
func (t Tx) MarcarOrigens(ctx context.Context, eventIDs []uuid.UUID, seqs []int64) error {
	return t.q.MarcarOutboxEntradas(ctx, dbsqlc.MarcarOutboxEntradasParams{EventIds: eventIDs, Sequences: seqs})
}

// GravarSorteios writes the draws a batch decided, in their order, in one
// statement: linhas is their JSON (atribuicao's lote.go), ocupados the
// counsellors they occupy.
func (t Tx) GravarSorteios(ctx context.Context, linhas []byte, ocupados []uuid.UUID) error {
	return t.q.GravarSorteios(ctx, dbsqlc.GravarSorteiosParams{Linhas: linhas, Conselheiros: ocupados})
}

// DesfazerSorteio undoes a draw its unit just made, before the commit:
// its assignment, audit and outbox rows, and the counsellor it occupied
// back to disponivel.
func (t Tx) DesfazerSorteio(ctx context.Context, eventID uuid.UUID) error {
	return t.q.DescartarSorteio(ctx, eventID)
}

// Elo is a unit's link in the hierarchy the log recorded (CONTRACT §7
// Hierarchy): its parent (nil: a root) and how far below the root it is.
type Elo struct {
	UC     uuid.UUID
	Parent *uuid.UUID
	Nivel  int
}

// ElosRegistrados reads every recorded link.
func (t Tx) ElosRegistrados(ctx context.Context) ([]Elo, error) {
	rows, err := t.q.BuscarHierarquiaRegistrada(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Elo, len(rows))
	for i, r := range rows {
		out[i] = Elo{UC: r.UnidadeCivicaID, Parent: r.ParentUcID, Nivel: int(r.Nivel)}
	}
	return out, nil
}

// RegistrarElos upserts links in one statement.
func (t Tx) RegistrarElos(ctx context.Context, elos []Elo) error {
	p := dbsqlc.RegistrarHierarquiaParams{Ucs: make([]uuid.UUID, len(elos)), Parents: make([]uuid.UUID, len(elos)), Niveis: make([]int32, len(elos))}
	for i, e := range elos {
		p.Ucs[i] = e.UC
		if e.Parent != nil {
			p.Parents[i] = *e.Parent
		}
		p.Niveis[i] = int32(e.Nivel)
	}
	return t.q.RegistrarHierarquia(ctx, p)
}

// PedidoDegrau asks for the first step of Cadeia at or above position
// Desde that holds registered counsellors.
type PedidoDegrau struct {
	Cadeia []uuid.UUID
	Desde  int
}

// LerDegraus reads, in one statement, the step each pedido asks for, as
// elegibilidade.Subir takes it: rows with the gates applied
// (elegibilidade.Portoes.Aplicar, as the replay does), never a decision.
// A chain with nobody registered from Desde up reads as the step past its
// top (Posicao len(Cadeia)).
func (t Tx) LerDegraus(ctx context.Context, pedidos []PedidoDegrau, g elegibilidade.Portoes) ([]elegibilidade.Degrau, error) {
	p := dbsqlc.BuscarDegrausCadastradosParams{CapacitacaoExterna: g.CapacitacaoExterna, ExigirVinculo: g.ExigirVinculo}
	out := make([]elegibilidade.Degrau, len(pedidos))
	for i, d := range pedidos {
		resto := d.Cadeia[d.Desde:]
		p.Inicios = append(p.Inicios, int32(len(p.Ucs)))
		p.Tamanhos = append(p.Tamanhos, int32(len(resto)))
		p.Ucs = append(p.Ucs, resto...)
		out[i] = elegibilidade.Degrau{Posicao: len(d.Cadeia)}
	}
	if len(pedidos) == 0 {
		return out, nil
	}
	rows, err := t.q.BuscarDegrausCadastrados(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("elegíveis: %w", err)
	}
	// The query numbers the chains from 1.
	for _, r := range rows {
		if n := int(r.Cadeia) - 1; n >= 0 && n < len(pedidos) {
			out[n] = degrauDe(r, pedidos[n].Cadeia, pedidos[n].Desde, g)
		}
	}
	return out, nil
}

// LerDegrau is LerDegraus for one chain.
func (t Tx) LerDegrau(ctx context.Context, cadeia []uuid.UUID, desde int, g elegibilidade.Portoes) (elegibilidade.Degrau, error) {
	d, err := t.LerDegraus(ctx, []PedidoDegrau{{Cadeia: cadeia, Desde: desde}}, g)
	if err != nil {
		return elegibilidade.Degrau{Posicao: len(cadeia)}, err
	}
	return d[0], nil
}

// degrauDe is a row of BuscarDegrausCadastrados for the chain cadeia read
// from position desde: each counsellor with the gates applied.
func degrauDe(r dbsqlc.BuscarDegrausCadastradosRow, cadeia []uuid.UUID, desde int, g elegibilidade.Portoes) elegibilidade.Degrau {
	pos := desde + int(r.Ordem) - 1
	if r.Ordem < 1 || pos >= len(cadeia) {
		return elegibilidade.Degrau{Posicao: len(cadeia)}
	}
	uc := cadeia[pos]
	n := len(r.Ids)
	if len(r.Status) != n || len(r.Capacitacao) != n || len(r.Ates) != n || len(r.Suspensos) != n ||
		len(r.Ocupados) != n || len(r.Externas) != n || len(r.Vinculos) != n {
		n = 0 // cannot happen: every array comes from one aggregate
	}
	d := elegibilidade.Degrau{Posicao: pos, Candidatos: make([]elegibilidade.Candidato, n)}
	for i := range n {
		c := elegibilidade.Candidato{ID: r.Ids[i], UC: uc, Status: r.Status[i], Ocupado: r.Ocupados[i]}
		if r.Suspensos[i] {
			ate := r.Ates[i]
			c.SuspensaoAte = &ate
		}
		f := elegibilidade.Fase2{Autodeclarada: r.Capacitacao[i], Externa: r.Externas[i]}
		if r.Vinculos[i] {
			f.Vinculos = map[uuid.UUID]bool{uc: true}
		}
		d.Candidatos[i] = g.Aplicar(c, f)
	}
	return d
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

// GravarPendentes writes the demands a batch queued (or whose attempt it
// counted), in one statement: linhas is their JSON (atribuicao's lote.go).
func (t Tx) GravarPendentes(ctx context.Context, linhas []byte) error {
	return t.q.EnfileirarPendentes(ctx, linhas)
}

// GravarOutbox writes the outbox rows a batch queued, in decision order,
// in one statement: linhas is their JSON (atribuicao's lote.go).
func (t Tx) GravarOutbox(ctx context.Context, linhas []byte) error {
	return t.q.InserirOutboxLote(ctx, linhas)
}
