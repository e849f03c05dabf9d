package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/entradas"
	"github.com/formigueiro/d6a/internal/hierarquia"
	"github.com/formigueiro/d6a/internal/reparo"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/verificar/barramento"
)

// verifyConsistencia is `d6a verify --consistencia [--desde SEQ]
// [--reparar]`: compare the bus with the database from stream sequence desde
// (docs/reliability.md, "Asynchronous standby"). Exit 0 when they agree, 1
// when anything diverges (with --reparar: when anything still diverges after
// the repair, or the repair found a conflict), 2 for configuration.
//
// --reparar: internal/reparo's Reparar, through the executor — the outbox rows of results on the
// bus given back, then, in stream order, the lost draws re-created from
// their conselheiro.sorteado (never drawing again) and the lost inputs
// applied.
func verifyConsistencia(desde uint64, reparar bool) int {
	cfg, ok := loadDatabaseConfig()
	if !ok {
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	st, ok := openStore(ctx, cfg)
	if !ok {
		return exitUsage
	}
	defer st.Close()
	bctx, bcancel := context.WithTimeout(ctx, 10*time.Second)
	b, err := bus.Connect(bctx, busClientConfig(cfg))
	bcancel()
	if err != nil {
		fail(fmt.Errorf("D6A_NATS_URL: %w", err))
		return exitUsage
	}
	defer b.Close()
	ccfg := barramento.Config{Stream: cfg.Stream, DLQ: bus.DLQStream, Prefix: cfg.SubjectPrefix}

	rel, err := barramento.Verificar(ctx, st.Read(), b, ccfg, desde)
	for tentativa := 2; err != nil && tentativa <= 3 && ctx.Err() == nil; tentativa++ {
		// A clustered stream's read can answer "no responders" right
		// after a leader change.
		time.Sleep(2 * time.Second)
		rel, err = barramento.Verificar(ctx, st.Read(), b, ccfg, desde)
	}
	if err != nil {
		fail(err)
		return 1
	}
	fmt.Print(rel.String())
	if !rel.Diverge() {
		return 0
	}
	if !reparar {
		return 1
	}
	if !repararConsistencia(ctx, cfg, st, b, rel) {
		return 1
	}
	return 0
}

// repararConsistencia applies rel's repair (reparo.Reparar) and
// reports whether it all went through.
func repararConsistencia(ctx context.Context, cfg config.Config, st *store.Store, b *bus.Bus, rel barramento.Relatorio) bool {
	hier := hierarquia.New(st.CarregarHierarquia, cfg.HierarquiaTTL, time.Now)
	srv := atribuicao.New(atribuicao.Options{
		Store: st, Hierarquia: hier, Entradas: entradas.New(hier), Barramento: b,
		SubjectPrefix: cfg.SubjectPrefix, NRecusasSuspensao: cfg.NRecusasSuspensao, TSuspensao: cfg.TSuspensao,
		Portoes: elegibilidade.Portoes{CapacitacaoExterna: cfg.CapacitacaoExterna, ExigirVinculo: cfg.ExigirVinculo},
	})
	defer srv.Close()
	ok := reparo.New(srv, nil).Reparar(ctx, rel, os.Stdout)
	if ok {
		fmt.Println("repaired; the running d6a's relay publishes whatever the re-applied inputs decided. d6a verify --consistencia again should exit 0")
	} else {
		fmt.Fprintln(os.Stderr, "d6a verify: the repair is incomplete (see above)")
	}
	return ok
}
