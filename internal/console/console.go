// Package console holds the operators' console (spec §9, CONTRACT §6):
// the listings it reads, and its writes (a manual timeout, a pending
// demand drawn now, a counsellor set inativo or back, a new version of the
// parameters), each submitted to the executor as one unit of work with the
// administrative action that made it. httpapi serves it.
package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/decisao"
	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/hierarquia"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
)

// Errors of the administrative operations, mapped to HTTP statuses by
// httpapi (CONTRACT §6). Each is wrapped with what was not found or why the
// operation conflicts.
var (
	// ErrNaoEncontrado: no such assignment, pending demand or counsellor.
	ErrNaoEncontrado = errors.New("não encontrado")
	// ErrConflito: the target is not in a state the operation applies to
	// (an assignment no longer active, a counsellor already inativo…).
	ErrConflito = errors.New("conflito")
	// ErrJustificativa: every write needs a non-empty justification.
	ErrJustificativa = errors.New("justificativa obrigatória")
)

// Executor runs a unit of work under the executor's global lock
// (*atribuicao.Servico).
type Executor interface {
	Submeter(ctx context.Context, fn func(context.Context, atribuicao.Unidade) error) error
}

// Banco is what the console's writes read and write, inside the
// executor's unit of work (store.Tx, from atribuicao.Unidade.Tx).
type Banco interface {
	// ConselheiroParaAtualizar reads and locks a counsellor.
	ConselheiroParaAtualizar(ctx context.Context, id uuid.UUID) (store.Conselheiro, bool, error)
	AtribuicaoAtivaDoConselheiro(ctx context.Context, conselheiro uuid.UUID) (store.AtribuicaoVigente, bool, error)
	MarcarInativo(ctx context.Context, conselheiro, eventID uuid.UUID, agora time.Time) error
	MudarStatus(ctx context.Context, conselheiro uuid.UUID, status string, eventID uuid.UUID, agora time.Time) error
	AtribuicaoPorSorteio(ctx context.Context, eventIDSorteio uuid.UUID) (store.AtribuicaoDoSorteio, bool, error)
	TentativasNaFila(ctx context.Context, demanda uuid.UUID) (tentativas int32, naFila bool, err error)
	AnotarAcao(ctx context.Context, a store.AcaoAnotada) error
	InserirVersaoParametros(ctx context.Context, v store.VersaoParametros) (int32, error)
}

// Leitura is what the console's listings and waits read, outside the
// executor (store.Tx over the pool, from Store.Read).
type Leitura interface {
	OcupacoesAntesDe(ctx context.Context, antesDe time.Time, limite int32) ([]store.Ocupacao, error)
	Pendentes(ctx context.Context, uc *uuid.UUID, limite int32) ([]store.Pendente, error)
	ExclusoesNasUcs(ctx context.Context, ucs []uuid.UUID, agora time.Time, capacitacaoExterna, exigirVinculo bool) (store.Exclusoes, error)
	AtribuicaoAtivaDaDemanda(ctx context.Context, demanda uuid.UUID) (store.AtribuicaoVigente, bool, error)
	TentativasNaFila(ctx context.Context, demanda uuid.UUID) (tentativas int32, naFila bool, err error)
	// Processado reports whether an event id is in the inbox.
	Processado(ctx context.Context, eventID uuid.UUID) (bool, error)
	AcoesDepoisDe(ctx context.Context, depoisDe int64, limite int32) ([]store.AcaoAnotada, error)
	VersaoVigente(ctx context.Context) (store.VersaoParametros, bool, error)
	VersoesParametros(ctx context.Context) ([]store.VersaoParametros, error)
}

// Options configure the console.
type Options struct {
	Executor   Executor
	Store      *store.Store
	Hierarquia *hierarquia.Cache
	// Portoes are the phase-2 gates in force, which the reasons of a
	// waiting demand name (RazoesCadeia).
	Portoes elegibilidade.Portoes
	// Now is the service's clock (the executor's).
	Now    func() time.Time
	Logger *slog.Logger
	// NovoID makes the ids of the console's triggers and status changes
	// (default: a UUIDv7).
	NovoID func() uuid.UUID
}

// Console is the operators' console.
type Console struct {
	o   Options
	log *slog.Logger
}

// banco is the unit's transaction as the console's writes see it.
func banco(u atribuicao.Unidade) Banco { return u.Tx() }

// ler is the pool as the console's listings see it.
func (s *Console) ler() Leitura { return s.o.Store.Read() }

// New returns the console over o.Executor.
func New(o Options) *Console {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.NovoID == nil {
		o.NovoID = func() uuid.UUID { return uuid.Must(uuid.NewV7()) }
	}
	return &Console{o: o, log: o.Logger}
}

// Kinds of administrative action, the acao column of
// d6a.acoes_administrativas (counted at scrape time by
// d6a_acoes_administrativas_total, so every instance agrees).
const (
	AcaoTimeout    = "timeout"
	AcaoSortear    = "sortear"
	AcaoInativar   = "inativar"
	AcaoReativar   = "reativar"
	AcaoParametros = "parametros"
)

// TiposAcao lists the kinds of administrative action.
var TiposAcao = []string{AcaoTimeout, AcaoSortear, AcaoInativar, AcaoReativar, AcaoParametros}

// MaxJustificativa bounds the justification's length in characters.
const MaxJustificativa = 4000

// Acao is who asks for an administrative write and why.
type Acao struct {
	// Sub is the operator's token subject.
	Sub string
	// Justificativa is recorded with the action; it must not be blank.
	Justificativa string
}

func (a Acao) validar() error {
	if strings.TrimSpace(a.Justificativa) == "" {
		return ErrJustificativa
	}
	if len([]rune(a.Justificativa)) > MaxJustificativa {
		return fmt.Errorf("%w: no máximo %d caracteres", ErrJustificativa, MaxJustificativa)
	}
	if a.Sub == "" {
		return errors.New("ação administrativa sem sub")
	}
	return nil
}

// registrarAcao appends the action to d6a.acoes_administrativas in the unit
// of work that made it.
func registrarAcao(ctx context.Context, u atribuicao.Unidade, a Acao, acao, alvo string, eventID *uuid.UUID, detalhes map[string]any) error {
	var det []byte
	if detalhes != nil {
		var err error
		if det, err = json.Marshal(detalhes); err != nil {
			return err
		}
	}
	err := banco(u).AnotarAcao(ctx, store.AcaoAnotada{
		Sub: a.Sub, Acao: acao, Alvo: alvo, Justificativa: a.Justificativa, Em: u.Agora(), EventID: eventID, Detalhes: det,
	})
	if err != nil {
		return fmt.Errorf("registrar ação administrativa: %w", err)
	}
	return nil
}

// Ocupado is an active assignment as the console shows it (spec §9: a
// counsellor occupied for long without conselheiro.demanda_iniciada).
type Ocupado struct {
	ConselheiroID     uuid.UUID  `json:"conselheiro_id"`
	StatusConselheiro string     `json:"status_conselheiro"`
	EventIDSorteio    uuid.UUID  `json:"event_id_sorteio"`
	DemandaID         uuid.UUID  `json:"demanda_id"`
	UnidadeCivicaID   uuid.UUID  `json:"unidade_civica_id"`
	DataSorteio       time.Time  `json:"data_sorteio"`
	IdadeHoras        float64    `json:"idade_horas"`
	Iniciada          bool       `json:"iniciada"`
	IniciadaEm        *time.Time `json:"iniciada_em"`
}

// LimiteListagem bounds what one console listing returns.
const LimiteListagem = 1000

// Ocupados lists active assignments older than maisDe, oldest first.
func (s *Console) Ocupados(ctx context.Context, maisDe time.Duration) ([]Ocupado, error) {
	agora := s.o.Now().UTC()
	rows, err := s.ler().OcupacoesAntesDe(ctx, agora.Add(-maisDe), LimiteListagem)
	if err != nil {
		return nil, err
	}
	out := make([]Ocupado, len(rows))
	for i, r := range rows {
		out[i] = Ocupado{
			ConselheiroID: r.ConselheiroID, StatusConselheiro: r.StatusConselheiro, EventIDSorteio: r.EventIDSorteio,
			DemandaID: r.DemandaID, UnidadeCivicaID: r.UC, DataSorteio: r.DataSorteio.UTC(),
			IdadeHoras: horas(agora.Sub(r.DataSorteio)), Iniciada: r.Iniciada, IniciadaEm: utc(r.IniciadaEm),
		}
	}
	return out, nil
}

// Timeout publishes the response-timeout refusal of the active assignment
// whose draw was eventIDSorteio (spec §9, 8.2 "timeout manual via console")
// and returns its event id. The refusal handler then does the rest, as for
// any refusal (spec 3.12). Asking twice before the refusal is consumed
// returns the same event id and publishes nothing more.
func (s *Console) Timeout(ctx context.Context, a Acao, eventIDSorteio uuid.UUID) (uuid.UUID, error) {
	if err := a.validar(); err != nil {
		return uuid.Nil, err
	}
	var id uuid.UUID
	err := s.o.Executor.Submeter(ctx, func(ctx context.Context, u atribuicao.Unidade) error {
		at, achou, err := banco(u).AtribuicaoPorSorteio(ctx, eventIDSorteio)
		if err != nil {
			return err
		} else if !achou {
			return fmt.Errorf("%w: atribuição com event_id_sorteio %s", ErrNaoEncontrado, eventIDSorteio)
		}
		if at.Status != atribuicao.AtribuicaoAtiva {
			return fmt.Errorf("%w: atribuição %s não está ativa (status %s)", ErrConflito, eventIDSorteio, at.Status)
		}
		var nova bool
		if id, nova, err = u.PublicarTimeout(ctx, at.AtribuicaoVigente); err != nil {
			return err
		}
		s.log.Warn("timeout de resposta pelo console", "sub", a.Sub, "event_id_sorteio", eventIDSorteio,
			"conselheiro_id", at.ConselheiroID, "demanda_id", at.DemandaID, "event_id", id, "ja_publicado", !nova)
		return registrarAcao(ctx, u, a, AcaoTimeout, eventIDSorteio.String(), &id, map[string]any{
			"conselheiro_id": at.ConselheiroID, "demanda_id": at.DemandaID, "ja_publicado": !nova,
		})
	})
	return id, err
}

// Pendente is a pending demand as the console shows it.
type Pendente struct {
	DemandaID         uuid.UUID `json:"demanda_id"`
	UnidadeCivicaID   uuid.UUID `json:"unidade_civica_id"`
	CategoriaID       string    `json:"categoria_id"`
	NivelPrecedencia  int32     `json:"nivel_precedencia"`
	DataEntrada       time.Time `json:"data_entrada"`
	IdadeHoras        float64   `json:"idade_horas"`
	TentativasSorteio int32     `json:"tentativas_sorteio"`
	// PorQue is why nobody on the demand's chain is eligible now
	// (razoesDaCadeia); nil when it could not be read.
	PorQue *RazoesCadeia `json:"por_que"`
}

// Fila lists the pending queue, oldest first, of one unit when uc is set.
func (s *Console) Fila(ctx context.Context, uc *uuid.UUID) ([]Pendente, error) {
	agora := s.o.Now().UTC()
	rows, err := s.ler().Pendentes(ctx, uc, LimiteListagem)
	if err != nil {
		return nil, err
	}
	out := make([]Pendente, len(rows))
	for i, r := range rows {
		out[i] = Pendente{
			DemandaID: r.DemandaID, UnidadeCivicaID: r.UC, CategoriaID: r.Demanda.CategoriaID,
			NivelPrecedencia: r.Demanda.NivelPrecedencia, DataEntrada: r.Entrada.UTC(),
			IdadeHoras: horas(agora.Sub(r.Entrada)), TentativasSorteio: r.Tentativas,
		}
		out[i].PorQue = s.razoesDaCadeia(ctx, r.UC, agora)
	}
	return out, nil
}

// RazoesCadeia is, over a waiting demand's chain, how many counsellors
// each exclusion leaves out (a counsellor may count under several): the
// console's answer to "why has this unit nobody eligible" (issue 41), the
// phase-2 gates in force among them.
type RazoesCadeia struct {
	Cadeia         []uuid.UUID `json:"cadeia"`
	Cadastrados    int64       `json:"cadastrados"`
	Ocupados       int64       `json:"ocupados"`
	Inativos       int64       `json:"inativos"`
	Suspensos      int64       `json:"suspensos"`
	SemCapacitacao int64       `json:"sem_capacitacao"`
	SemVinculo     int64       `json:"sem_vinculo"`
	// Regras are the gates in force (CONTRACT §8).
	Regras elegibilidade.Portoes `json:"regras"`
}

func (s *Console) razoesDaCadeia(ctx context.Context, uc uuid.UUID, agora time.Time) *RazoesCadeia {
	cadeia, err := s.o.Hierarquia.Cadeia(ctx, uc)
	if err != nil {
		return nil
	}
	g := s.o.Portoes
	r, err := s.ler().ExclusoesNasUcs(ctx, cadeia, agora, g.CapacitacaoExterna, g.ExigirVinculo)
	if err != nil {
		return nil
	}
	return &RazoesCadeia{Cadeia: cadeia, Cadastrados: r.Cadastrados, Ocupados: r.Ocupados, Inativos: r.Inativos,
		Suspensos: r.Suspensos, SemCapacitacao: r.SemCapacitacao, SemVinculo: r.SemVinculo, Regras: g}
}

// ResultadoPendente is the outcome of a "draw now" of a pending demand.
type ResultadoPendente struct {
	Sorteado          bool       `json:"sorteado"`
	ConselheiroID     *uuid.UUID `json:"conselheiro_id"`
	EventIDSorteio    *uuid.UUID `json:"event_id_sorteio"`
	TentativasSorteio int32      `json:"tentativas_sorteio"`
}

// SortearPendente runs the sweep's draw (spec 4.7) for one pending demand:
// assigned on success (it leaves the queue), one more attempt otherwise.
// The console publishes the draw's trigger (d6a.varredura) and the draw
// happens when d6a consumes it back (CONTRACT §4), so the moment the
// operator clicks cannot choose the winner; the call waits for that, up to
// ctx.
func (s *Console) SortearPendente(ctx context.Context, a Acao, demandaID uuid.UUID) (ResultadoPendente, error) {
	if err := a.validar(); err != nil {
		return ResultadoPendente{}, err
	}
	gatilho := s.o.NovoID()
	err := s.o.Executor.Submeter(ctx, func(ctx context.Context, u atribuicao.Unidade) error {
		_, naFila, err := banco(u).TentativasNaFila(ctx, demandaID)
		if err != nil {
			return err
		} else if !naFila {
			return fmt.Errorf("%w: demanda %s não está na fila de pendentes", ErrNaoEncontrado, demandaID)
		}
		if _, err := u.PublicarVarredura(ctx, gatilho, &demandaID, nil, atribuicao.AcaoVarreduraConsole); err != nil {
			return err
		}
		s.log.Warn("sorteio de pendente pelo console", "sub", a.Sub, "demanda_id", demandaID, "gatilho", gatilho)
		return registrarAcao(ctx, u, a, AcaoSortear, demandaID.String(), &gatilho, map[string]any{"gatilho": gatilho})
	})
	if err != nil {
		return ResultadoPendente{}, err
	}
	if err := s.esperarProcessado(ctx, gatilho); err != nil {
		return ResultadoPendente{}, err
	}
	var r ResultadoPendente
	rd := s.ler()
	at, achou, err := rd.AtribuicaoAtivaDaDemanda(ctx, demandaID)
	if err != nil {
		return r, err
	} else if achou {
		r.Sorteado, r.ConselheiroID, r.EventIDSorteio = true, &at.ConselheiroID, &at.EventIDSorteio
		return r, nil
	}
	r.TentativasSorteio, _, err = rd.TentativasNaFila(ctx, demandaID)
	return r, err
}

// ErrGatilhoPendente is returned when a console action's trigger was
// published but not consumed back before the caller gave up: the draw
// still happens when it is.
var ErrGatilhoPendente = errors.New("gatilho publicado e ainda não consumido; o sorteio acontece quando for")

// esperarProcessado waits until the consumed event id is in the inbox.
func (s *Console) esperarProcessado(ctx context.Context, id uuid.UUID) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		ja, err := s.ler().Processado(ctx, id)
		if err == nil && ja {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%s): %w", ErrGatilhoPendente, id, ctx.Err())
		case <-t.C:
		}
	}
}

// MudancaStatus is the outcome of setting or lifting inativo.
type MudancaStatus struct {
	ConselheiroID  uuid.UUID `json:"conselheiro_id"`
	StatusAnterior string    `json:"status_anterior"`
	Status         string    `json:"status"`
	EventID        uuid.UUID `json:"event_id"`
}

// Inativar sets a counsellor inativo (spec 4.6: administrative, the only
// way in). An occupied counsellor is refused: the operator times the active
// assignment out first, so "ocupado iff an active assignment" holds and the
// demand is drawn again.
func (s *Console) Inativar(ctx context.Context, a Acao, id uuid.UUID) (MudancaStatus, error) {
	if err := a.validar(); err != nil {
		return MudancaStatus{}, err
	}
	var m MudancaStatus
	err := s.o.Executor.Submeter(ctx, func(ctx context.Context, u atribuicao.Unidade) error {
		c, err := conselheiroAdmin(ctx, u, id)
		if err != nil {
			return err
		}
		v := decisao.Visao{Conselheiro: &decisao.Conselheiro{Status: c.Status, Ate: c.SuspensaoAte}}
		at, ativa, err := banco(u).AtribuicaoAtivaDoConselheiro(ctx, id)
		if err != nil {
			return err
		} else if ativa {
			v.Ativa = &at.DemandaID
		}
		if ef := decisao.Passo(v, decisao.Entrada{Tipo: decisao.Inativacao, Agora: u.Agora()}); ef.Proibida {
			switch {
			case c.Status == elegibilidade.Inativo:
				return fmt.Errorf("%w: conselheiro %s já está inativo", ErrConflito, id)
			case c.Status == elegibilidade.Ocupado:
				return fmt.Errorf("%w: conselheiro %s está ocupado; aplique o timeout da atribuição ativa antes", ErrConflito, id)
			case ativa:
				return fmt.Errorf("%w: conselheiro %s tem atribuição ativa; aplique o timeout antes", ErrConflito, id)
			}
			return fmt.Errorf("%w: conselheiro %s não pode ser inativado (status %s)", ErrConflito, id, c.Status)
		}
		m = MudancaStatus{ConselheiroID: id, StatusAnterior: c.Status, Status: elegibilidade.Inativo, EventID: s.o.NovoID()}
		if err := banco(u).MarcarInativo(ctx, id, m.EventID, u.Agora()); err != nil {
			return err
		}
		u.Alterou(c.Cidadao)
		u.Registrar(registro.NovaMudancaStatus(registro.TipoInativacao, m.EventID, id, elegibilidade.Inativo))
		s.log.Warn("conselheiro inativado pelo console", "sub", a.Sub, "conselheiro_id", id, "status_anterior", c.Status)
		return registrarAcao(ctx, u, a, AcaoInativar, id.String(), &m.EventID, map[string]any{"status_anterior": c.Status})
	})
	return m, err
}

// Reativar lifts inativo (spec 4.6: administrative, the only way out). The
// counsellor goes back to disponivel, or to suspenso while a suspension
// decided before the inactivation has not ended; a disponivel one is
// eligible again at once and the pending queue of the unit is swept (as a
// release, spec 3.11 step 5).
func (s *Console) Reativar(ctx context.Context, a Acao, id uuid.UUID) (MudancaStatus, error) {
	if err := a.validar(); err != nil {
		return MudancaStatus{}, err
	}
	var m MudancaStatus
	err := s.o.Executor.Submeter(ctx, func(ctx context.Context, u atribuicao.Unidade) error {
		c, err := conselheiroAdmin(ctx, u, id)
		if err != nil {
			return err
		}
		ef := decisao.Passo(decisao.Visao{Conselheiro: &decisao.Conselheiro{Status: c.Status, Ate: c.SuspensaoAte}},
			decisao.Entrada{Tipo: decisao.Reativacao, Agora: u.Agora()})
		if ef.Proibida {
			return fmt.Errorf("%w: conselheiro %s não está inativo (status %s)", ErrConflito, id, c.Status)
		}
		novo := ef.Status
		m = MudancaStatus{ConselheiroID: id, StatusAnterior: c.Status, Status: novo, EventID: s.o.NovoID()}
		if err := banco(u).MudarStatus(ctx, id, novo, m.EventID, u.Agora()); err != nil {
			return err
		}
		u.Alterou(c.Cidadao)
		u.Registrar(registro.NovaMudancaStatus(registro.TipoReativacao, m.EventID, id, novo))
		log := s.log.With("sub", a.Sub, "conselheiro_id", id)
		log.Warn("conselheiro reativado pelo console", "status", novo)
		if err := registrarAcao(ctx, u, a, AcaoReativar, id.String(), &m.EventID, map[string]any{"status": novo}); err != nil {
			return err
		}
		if novo == elegibilidade.Disponivel {
			// The sweep draws when its trigger comes back (CONTRACT §4).
			uc := c.UC
			_, err := u.PublicarVarredura(ctx, s.o.NovoID(), nil, &uc, atribuicao.AcaoVarreduraConsole)
			return err
		}
		return nil
	})
	return m, err
}

func conselheiroAdmin(ctx context.Context, u atribuicao.Unidade, id uuid.UUID) (store.Conselheiro, error) {
	c, achou, err := banco(u).ConselheiroParaAtualizar(ctx, id)
	if err != nil {
		return c, err
	} else if !achou {
		return c, fmt.Errorf("%w: conselheiro %s", ErrNaoEncontrado, id)
	}
	return c, nil
}

// AcaoRegistrada is one row of d6a.acoes_administrativas.
type AcaoRegistrada struct {
	ID            int64           `json:"id"`
	Sub           string          `json:"sub"`
	Acao          string          `json:"acao"`
	Alvo          string          `json:"alvo"`
	Justificativa string          `json:"justificativa"`
	CriadoEm      time.Time       `json:"criado_em"`
	EventID       *uuid.UUID      `json:"event_id"`
	Detalhes      json.RawMessage `json:"detalhes,omitempty"`
}

// Acoes lists the journal of administrative actions after id depoisDe,
// oldest first, at most limite (≤ LimiteListagem).
func (s *Console) Acoes(ctx context.Context, depoisDe int64, limite int) ([]AcaoRegistrada, error) {
	if limite <= 0 || limite > LimiteListagem {
		limite = LimiteListagem
	}
	rows, err := s.ler().AcoesDepoisDe(ctx, depoisDe, int32(limite))
	if err != nil {
		return nil, err
	}
	out := make([]AcaoRegistrada, len(rows))
	for i, r := range rows {
		out[i] = AcaoRegistrada{
			ID: r.ID, Sub: r.Sub, Acao: r.Acao, Alvo: r.Alvo, Justificativa: r.Justificativa,
			CriadoEm: r.Em.UTC(), EventID: r.EventID, Detalhes: r.Detalhes,
		}
	}
	return out, nil
}

func horas(d time.Duration) float64 { return float64(d.Round(time.Minute)) / float64(time.Hour) }

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.UTC()
	return &v
}
