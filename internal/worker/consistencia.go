package worker

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/consistencia"
)

// janelaConsistencia is how many of the bus's last messages the boot check
// reads: a failover loses the last seconds of commits, not days.
const janelaConsistencia = 10_000

// verificarConsistencia is the boot check: the same comparison as
// `d6a verify --consistencia` over the recent window of the bus. A
// divergence (an asynchronous standby promoted without the last commits) is
// logged at ERROR with the repair command; d6a keeps serving, since the
// repair needs an operator's eyes (docs/reliability.md).
func (w *Worker) verificarConsistencia(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	_, ultima, err := w.Bus.Ultima(ctx, w.Cfg.Stream)
	if err != nil {
		w.log.Warn("verificação de consistência no boot não rodou", "erro", err)
		return
	}
	desde := uint64(1)
	if ultima > janelaConsistencia {
		desde = ultima - janelaConsistencia + 1
	}
	var rel consistencia.Relatorio
	// A read of a clustered stream right after a leader change can answer
	// "no responders"; a few attempts ride over it.
	for tentativa := 1; ; tentativa++ {
		rel, err = consistencia.Verificar(ctx, w.Store, w.Bus, consistencia.Config{Stream: w.Cfg.Stream, DLQ: bus.DLQStream, Prefix: w.Cfg.SubjectPrefix, SoPiso: true}, desde)
		if err == nil || tentativa == 5 || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
	if err != nil {
		w.log.Warn("verificação de consistência no boot não rodou", "erro", err)
		return
	}
	if !rel.Diverge() {
		w.log.Info("consistência barramento × banco verificada", "desde", rel.Desde, "ate", rel.Ate, "resultados", rel.Resultados, "entradas", rel.Entradas)
		return
	}
	exemplos := make([]string, 0, 5)
	for _, d := range rel.Divergencias[:min(5, len(rel.Divergencias))] {
		exemplos = append(exemplos, d.String())
	}
	w.log.Error("!!! DIVERGÊNCIA ENTRE O BARRAMENTO E O BANCO: resultados publicados sem suas linhas ou entradas confirmadas sem inbox "+
		"(standby assíncrono promovido?). Rode: d6a verify --consistencia --desde "+strconv.FormatUint(rel.Desde, 10)+" --reparar",
		"divergencias", len(rel.Divergencias), "sorteios_perdidos", len(rel.Perdidos), "resultados_sem_outbox", len(rel.SemOutbox),
		"replay_desde", rel.ReplayMinimo(), "replays", strings.Join(rel.Replays(), "; "), "exemplos", exemplos)
}
