package colonia

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/verificar/barramento"
)

// janelaConsistencia is how many of the bus's last messages the boot check
// reads: a failover loses the last seconds of commits, not days.
const janelaConsistencia = 10_000

// verificarConsistencia is the boot check: the same comparison as
// `d6a verify --consistencia` over the recent window of the bus. It reports
// whether the bus and the database diverge; a check that cannot run
// reports false, so the boot goes on as the spec has it. A divergence (an
// asynchronous standby promoted without the last commits) is logged at
// ERROR with the repair command; d6a keeps consuming, since the repair
// needs an operator's eyes (docs/reliability.md), but holds back the boot
// steps that draw on its own (retomarAposReparo).
func (w *Instancia) verificarConsistencia(ctx context.Context, avisar bool) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	_, ultima, err := w.Bus.Ultima(ctx, w.Cfg.Stream)
	if err != nil {
		w.log.Warn("verificação de consistência no boot não rodou", "erro", err)
		return false
	}
	desde := uint64(1)
	if ultima > janelaConsistencia {
		desde = ultima - janelaConsistencia + 1
	}
	var rel barramento.Relatorio
	// A read of a clustered stream right after a leader change can answer
	// "no responders"; a few attempts ride over it.
	for tentativa := 1; ; tentativa++ {
		rel, err = barramento.Verificar(ctx, w.Store.Read(), w.Bus, barramento.Config{Stream: w.Cfg.Stream, DLQ: bus.DLQStream, Prefix: w.Cfg.SubjectPrefix, SoPiso: true}, desde)
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
		return false
	}
	if !rel.Diverge() {
		w.log.Info("consistência barramento × banco verificada", "desde", rel.Desde, "ate", rel.Ate, "resultados", rel.Resultados, "entradas", rel.Entradas)
		return false
	}
	if !avisar {
		return true
	}
	exemplos := make([]string, 0, 5)
	for _, d := range rel.Divergencias[:min(5, len(rel.Divergencias))] {
		exemplos = append(exemplos, d.String())
	}
	w.log.Error("!!! DIVERGÊNCIA ENTRE O BARRAMENTO E O BANCO: resultados publicados sem suas linhas ou entradas confirmadas sem inbox "+
		"(standby assíncrono promovido?). Rode: d6a verify --consistencia --desde "+strconv.FormatUint(rel.Desde, 10)+" --reparar. "+
		"A varredura da fila de pendentes e a reativação de suspensos do boot esperam o reparo",
		"divergencias", len(rel.Divergencias), "sorteios_perdidos", len(rel.Perdidos), "resultados_sem_outbox", len(rel.SemOutbox),
		"replay_desde", rel.ReplayMinimo(), "replays", strings.Join(rel.Replays(), "; "), "exemplos", exemplos)
	return true
}

// reverificarACada is how often an instance that booted on a divergence
// checks again whether the repair ran (manter).
const reverificarACada = 5 * time.Second

// retomarAposReparo is the periodic pass of an instance that booted on a
// bus and a database that disagreed: the periodic jobs and the boot steps
// that draw wait, since they would decide on a database that lacks draws
// the bus already published (a counsellor the bus gave a demand would look
// free). Once a check finds them agreeing (the operator ran the repair),
// the held boot steps run; a failure is retried on the next pass.
func (w *Instancia) retomarAposReparo(ctx context.Context) {
	if w.verificarConsistencia(ctx, false) {
		return
	}
	if err := w.bootSorteios(ctx); err != nil {
		if ctx.Err() == nil {
			w.log.Error("varredura do boot após o reparo falhou; nova tentativa no próximo ciclo", "erro", err)
		}
		return
	}
	w.divergente.Store(false)
	w.log.Info("barramento e banco de acordo após o reparo: varredura do boot feita, tarefas periódicas retomadas")
}

// Divergente reports whether this instance booted on a bus and a database
// that disagreed and has not yet seen them agree (retomarAposReparo).
func (w *Instancia) Divergente() bool { return w.divergente.Load() }
