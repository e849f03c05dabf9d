package atribuicao

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
)

// Unidade is a unit of work submitted from outside the package (the
// console, internal/console; the periodic jobs, internal/manutencao): its
// transaction and fixed clock reading, and the executor's own ways of
// queueing what it decides, so that what goes to the outbox, the log and
// the situacao cache goes the one way it goes for the handlers. The handlers and the boot use *uow itself: they batch,
// defer their writes and read ahead, which a caller outside does not.
type Unidade struct{ u *uow }

// Submeter runs fn as one unit of work of the executor, under its global
// lock (spec 4.4 comFilaGlobal), and waits for its commit.
func (s *Servico) Submeter(ctx context.Context, fn func(context.Context, Unidade) error) error {
	return s.executar(ctx, func(ctx context.Context, u *uow) error { return fn(ctx, Unidade{u}) })
}

// Tx is the unit's transaction.
func (x Unidade) Tx() store.Tx { return x.u.tx }

// Agora is the unit's clock reading.
func (x Unidade) Agora() time.Time { return x.u.agora }

// Parametros is the version of d6a.config in force in this transaction.
func (x Unidade) Parametros(ctx context.Context) (Parametros, error) { return x.u.parametros(ctx) }

// PublicarTimeout queues the response-timeout refusal of an active
// assignment once (timeout.go publicarTimeout).
func (x Unidade) PublicarTimeout(ctx context.Context, a store.Atribuicao) (id uuid.UUID, nova bool, err error) {
	return x.u.publicarTimeout(ctx, a)
}

// PublicarVarredura queues a sweep's trigger once (varredura.go
// publicarVarredura).
func (x Unidade) PublicarVarredura(ctx context.Context, id uuid.UUID, demanda, uc *uuid.UUID, acao string) (publicada bool, err error) {
	return x.u.publicarVarredura(ctx, id, demanda, uc, acao)
}

// EncerrarSuspensao queues the end of a suspension once (reativacao.go
// encerrarSuspensao).
func (x Unidade) EncerrarSuspensao(ctx context.Context, log *slog.Logger, conselheiro uuid.UUID, ate time.Time, motivo string) error {
	return x.u.encerrarSuspensao(ctx, log, conselheiro, ate, motivo)
}

// Alterou names a citizen whose situation the unit changed.
func (x Unidade) Alterou(cidadao uuid.UUID) { x.u.alterou(cidadao) }

// Registrar adds a decision of the unit to the transparency log.
func (x Unidade) Registrar(r registro.Registravel) { x.u.registros = append(x.u.registros, r) }
