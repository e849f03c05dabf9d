// Package manutencao holds the periodic jobs of the colony, one file each:
// the automatic response timeout (timeout.go) and the reactivation of
// expired suspensions (reativacao.go). A job decides nothing the executor
// does not: each pass is one unit of work submitted to it, under its global
// lock, so every instance may run the jobs (the ids derived from the
// assignment or the suspension keep one event each). internal/colonia
// schedules them; the reactivation also runs at boot, before the sweep.
package manutencao

import (
	"context"

	"github.com/formigueiro/d6a/internal/atribuicao"
)

// Executor runs a unit of work under the executor's global lock
// (*atribuicao.Servico).
type Executor interface {
	Submeter(ctx context.Context, fn func(context.Context, atribuicao.Unidade) error) error
}
