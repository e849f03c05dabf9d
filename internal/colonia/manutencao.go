package colonia

import (
	"context"
	"fmt"
	"time"

	"github.com/formigueiro/d6a/internal/manutencao"
)

// manter runs the periodic jobs (internal/manutencao) every cfg.Manutencao
// until ctx ends: the reactivation of expired suspensions (spec 4.8, not
// only at boot) and, when D6A_TIMEOUT_AUTOMATICO is on, the automatic
// response timeout. Both
// go through the draw executor and are idempotent, so every instance may
// run them: the executor's global lock orders them and the event ids
// derived from the assignment or the suspension keep one event each.
// While the instance waits for a repair it passes every reverificarACada.
func (w *Instancia) manter(ctx context.Context) {
	for {
		intervalo := w.Cfg.Manutencao
		if w.divergente.Load() {
			intervalo = min(intervalo, reverificarACada)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(intervalo):
		}
		w.Manutencao(ctx)
	}
}

// Manutencao is one pass of the periodic jobs (tests call it directly).
func (w *Instancia) Manutencao(ctx context.Context) {
	if w.divergente.Load() {
		// The jobs draw; the database may lack draws the bus published.
		w.retomarAposReparo(ctx)
		return
	}
	if n, err := manutencao.ReativarVencidos(ctx, w.Servico, w.log); err != nil {
		if ctx.Err() == nil {
			w.log.Error("reativação periódica falhou; nova tentativa no próximo ciclo", "erro", err)
		}
	} else if n > 0 {
		w.log.Info("reativação periódica", "reativados", n)
	}
	if !w.Cfg.TimeoutAutomatico {
		return
	}
	if n, err := manutencao.VerificarTimeouts(ctx, w.Servico, w.log); err != nil {
		if ctx.Err() == nil {
			w.log.Error("timeout automático falhou; nova tentativa no próximo ciclo", "erro", err)
		}
	} else if n > 0 {
		w.log.Info("timeout automático", "recusas_publicadas", n)
	}
}

// bootSorteios runs the boot steps that draw, held back while the bus and
// the database disagree: the reactivation of expired suspensions, then the
// sweep of the pending queue (docs/decisions.md, "Boot: reactivation before
// the sweep").
func (w *Instancia) bootSorteios(ctx context.Context) error {
	if _, err := manutencao.ReativarVencidos(ctx, w.Servico, w.log); err != nil {
		return fmt.Errorf("reativação de suspensos: %w", err)
	}
	return w.Servico.BootSorteios(ctx)
}
