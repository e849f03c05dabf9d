// Package entradas holds the handlers of the consumed inputs (spec
// 3.9–3.12, 3.6, 4.8, 4.9; CONTRACT §3, §8), thin over the decision core:
// what an input does to a counsellor (decisao.Passo, which the replay runs
// too), eligibility (elegibilidade), the queue's order (fila). The executor
// (internal/atribuicao) runs each inside one of its units of work; a
// handler reads its view and writes the step's effects through Banco, and
// asks the unit, through Unidade, for what the executor owns: the draw,
// the log's records, the clock and the parameters in force.
package entradas

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
)

// Banco is what the handlers read, and the writes whose outcome they read
// (store.Tx in the unit's transaction, after the writes it queued).
type Banco interface {
	CadastroAplicado(ctx context.Context, eventID uuid.UUID) (bool, error)
	ConselheiroPorID(ctx context.Context, id uuid.UUID) (store.Conselheiro, bool, error)
	ConselheiroParaAtualizar(ctx context.Context, id uuid.UUID) (store.Conselheiro, bool, error)
	// Cadastrar runs at once: a duplicate is named where it happens.
	Cadastrar(ctx context.Context, c store.Cadastro) error
	LerVisaoConselheiro(ctx context.Context, id, eventID uuid.UUID, aplicada ...func(store.Tx, context.Context, uuid.UUID) (bool, error)) (store.VisaoConselheiro, error)

	AtribuicaoAtivaDoPar(ctx context.Context, conselheiro, demanda uuid.UUID) (store.AtribuicaoVigente, bool, error)
	AtribuicaoAtivaDaDemanda(ctx context.Context, demanda uuid.UUID) (store.AtribuicaoVigente, bool, error)
	UltimaAtribuicaoDoPar(ctx context.Context, conselheiro, demanda uuid.UUID) (store.AtribuicaoDoSorteio, bool, error)
	AnotarInicio(ctx context.Context, a store.AtribuicaoVigente, iniciadaEm time.Time, eventID uuid.UUID, agora time.Time) (bool, error)

	RecusasDesdeAceitacao(ctx context.Context, conselheiro uuid.UUID) (int64, error)

	CabecasDaFila(ctx context.Context, ucs []uuid.UUID) ([]store.Pendente, error)
	PendenteDaDemanda(ctx context.Context, demanda uuid.UUID) (store.Pendente, bool, error)
	TirarDaFila(ctx context.Context, demanda uuid.UUID) (bool, error)

	CapacitadoExternamente(ctx context.Context, conselheiro uuid.UUID) (bool, error)
}

// Escritas are the writes a handler makes whose outcome it does not read
// (atribuicao.Unidade.Adiadas): they go out with its next read or with the
// batch's COMMIT.
type Escritas interface {
	MudarStatus(ctx context.Context, conselheiro uuid.UUID, status string, eventID uuid.UUID, agora time.Time) error
	Suspender(ctx context.Context, conselheiro uuid.UUID, ate time.Time, eventID uuid.UUID, agora time.Time) error
	AnotarSuspensao(ctx context.Context, s store.Suspensao) error
	Encerrar(ctx context.Context, atribuicao uuid.UUID, status string, eventID uuid.UUID) error
	ContarRecusa(ctx context.Context, r store.RecusaContada) error
	AnotarCapacitacao(ctx context.Context, c store.Capacitacao) error
	MarcarCapacitado(ctx context.Context, conselheiro, eventID uuid.UUID, agora time.Time) error
	AnotarVinculo(ctx context.Context, v store.Vinculo) error
	Progredir(ctx context.Context, conselheiro, uc uuid.UUID, nivel int32, eventID uuid.UUID, agora time.Time) error
	AnotarCriterios(ctx context.Context, uc uuid.UUID, versao string, eventID uuid.UUID, agora time.Time) error
}

// Unidade is what a handler asks of the executor's unit of work
// (atribuicao.Unidade).
type Unidade interface {
	// Agora is the unit's clock reading.
	Agora() time.Time
	// Parametros is the version of d6a.config in force.
	Parametros(ctx context.Context) (atribuicao.Parametros, error)
	// GuardaAgenda is spec 3.9's guards of an agenda item, with what the
	// batch decided and has not written yet.
	GuardaAgenda(ctx context.Context, a store.AgendaAGuardar) (store.GuardaAgenda, error)
	// Ver shows the reads that follow about a counsellor and the queues
	// of ucs what the batch decided and has not written.
	Ver(ctx context.Context, conselheiro *uuid.UUID, ucs []uuid.UUID) error
	// Sortear is spec 4.4's draw under the unit's trigger.
	Sortear(ctx context.Context, p atribuicao.Pedido) (atribuicao.Resultado, error)
	// EncerrarSuspensao queues the end of a suspension once.
	EncerrarSuspensao(ctx context.Context, log *slog.Logger, conselheiro uuid.UUID, ate time.Time, motivo string) error
	// Registrar appends a decision to the transparency log; SeqGatilho is
	// the stream sequence its record names (nil: none).
	Registrar(r registro.Registravel)
	SeqGatilho() *int64
	// Alterou names a citizen whose situation changed.
	Alterou(cidadao uuid.UUID)
	// RecusaObservada counts a refusal in the metrics after the commit.
	RecusaObservada(motivo string)
}

// Hierarquia is the civic units' tree (hierarquia.Cache).
type Hierarquia interface {
	ComDescendentes(ctx context.Context, uc uuid.UUID) ([]uuid.UUID, error)
}

// Entradas applies the consumed inputs; it is the executor's
// atribuicao.Options.Entradas.
type Entradas struct{ hier Hierarquia }

// New returns the handlers over the hierarchy h.
func New(h Hierarquia) *Entradas { return &Entradas{hier: h} }

// Aplicar runs ev's handler inside the unit u.
func (e *Entradas) Aplicar(ctx context.Context, u atribuicao.Unidade, log *slog.Logger, ev evento.Evento) error {
	x := &aplicacao{b: u.Tx(), g: u.Adiadas(), u: u, hier: e.hier, ev: ev}
	return x.despachar(ctx, log)
}

// aplicacao is one input being applied: its unit, its transaction and the
// input itself.
type aplicacao struct {
	b    Banco
	g    Escritas
	u    Unidade
	hier Hierarquia
	ev   evento.Evento
}
