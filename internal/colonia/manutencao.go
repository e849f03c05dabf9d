package colonia

import (
	"context"
	"time"
)

// manter runs the periodic jobs every cfg.Manutencao until ctx ends: the
// reactivation of expired suspensions (spec 4.8, not only at boot) and,
// when D6A_TIMEOUT_AUTOMATICO is on, the automatic response timeout. Both
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
	if n, err := w.Servico.ReativarVencidos(ctx); err != nil {
		if ctx.Err() == nil {
			w.log.Error("reativação periódica falhou; nova tentativa no próximo ciclo", "erro", err)
		}
	} else if n > 0 {
		w.log.Info("reativação periódica", "reativados", n)
	}
	if !w.Cfg.TimeoutAutomatico {
		return
	}
	if n, err := w.Servico.VerificarTimeouts(ctx); err != nil {
		if ctx.Err() == nil {
			w.log.Error("timeout automático falhou; nova tentativa no próximo ciclo", "erro", err)
		}
	} else if n > 0 {
		w.log.Info("timeout automático", "recusas_publicadas", n)
	}
}
