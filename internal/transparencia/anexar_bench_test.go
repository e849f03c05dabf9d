package transparencia_test

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/procstat"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/transparencia"
)

func cpuProcesso() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAnexar is the CPU the log adds to a draw: one transaction per
// batch of lote records on one connection, measured as this process's CPU
// (encoding, tlog hashes, pgx) and the PostgreSQL backend's CPU (from
// /proc), per record, over a log that already holds 100,000 leaves. Each
// op includes its own BEGIN/COMMIT (synchronous_commit off: no fsync), so
// it overstates what the append adds inside a draw's transaction.
//
//	go test -run '^$' -bench Anexar -benchtime 5000x ./internal/transparencia
func BenchmarkAnexar(b *testing.B) {
	ctx := context.Background()
	st := pgtest.New(b)
	for de := 0; de < 100_000; de += 1000 {
		historico.Anexar(b, st, historico.Registros("pre", de, de+1000))
	}
	conn, err := st.Pool.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET synchronous_commit = off"); err != nil {
		b.Fatal(err)
	}
	pid := int(conn.Conn().PgConn().PID())
	for _, lote := range []int{1, 64} {
		b.Run(fmt.Sprintf("lote=%d", lote), func(b *testing.B) {
			// Records are built before the clock: the draw builds its own.
			lotes := make([][]registro.Registro, b.N)
			for i := range lotes {
				lotes[i] = historico.Registros(fmt.Sprintf("b%d-%d", lote, b.N), i*lote, (i+1)*lote)
			}
			runtime.GC()
			pg0, _ := procstat.Read(pid)
			eu0 := cpuProcesso()
			n := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				tx, err := conn.Begin(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if err := transparencia.Anexar(ctx, tx, lotes[i]); err != nil {
					b.Fatal(err)
				}
				if err := tx.Commit(ctx); err != nil {
					b.Fatal(err)
				}
				n += len(lotes[i])
			}
			b.StopTimer()
			pg1, _ := procstat.Read(pid)
			eu := cpuProcesso() - eu0
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "µs-wall/record")
			b.ReportMetric(float64(eu.Microseconds())/float64(n), "µs-go-cpu/record")
			b.ReportMetric(float64(pg1.Own-pg0.Own)*1e6/procstat.HZ/float64(n), "µs-pg-cpu/record")
		})
	}
}
