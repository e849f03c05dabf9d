package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/pglocal"
	"github.com/formigueiro/d6a/internal/store"
)

// configuracaoPG is the bench cluster's configuration on top of pglocal's
// (durable: fsync and synchronous_commit on); the report lists it.
var configuracaoPG = map[string]string{
	"shared_buffers":           "1GB",
	"max_wal_size":             "8GB",
	"checkpoint_timeout":       "15min",
	"shared_preload_libraries": "pg_stat_statements",
	"pg_stat_statements.track": "all",
	"track_io_timing":          "on",
	"track_wal_io_timing":      "on",
}

var rePgbench = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// pgbench runs `pgbench -i` then `pgbench -c 1 -j 1 -T segundos -N` (simple
// update, one client) on database db, appending both outputs to log, and
// returns its tps.
func pgbench(ctx context.Context, c *pglocal.Cluster, db string, segundos int, log string) (tps float64, err error) {
	// pglocal.FindBin resolves PATH's symlinks: pgbench sits beside pg_ctl.
	bin := filepath.Join(c.Bin(), "pgbench")
	if _, err := os.Stat(bin); err != nil {
		if bin, err = exec.LookPath("pgbench"); err != nil {
			return 0, fmt.Errorf("pgbench not found in %s nor in PATH (Debian: apt-get install postgresql)", c.Bin())
		}
	}
	var out []byte
	for _, args := range [][]string{{"-i", "-q"}, {"-c", "1", "-j", "1", "-T", strconv.Itoa(segundos), "-N"}} {
		args = append(args, "-h", "127.0.0.1", "-p", strconv.Itoa(c.Port), "-U", "postgres", db)
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), "LC_ALL=C", "PGSSLMODE=disable")
		linha := "pgbench " + strings.Join(args, " ")
		out, err = comSaida(cmd, linha)
		if f, ferr := os.OpenFile(log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); ferr == nil {
			fmt.Fprintf(f, "$ %s\n%s\n", linha, out)
			f.Close()
		}
		if err != nil {
			return 0, err
		}
	}
	m := rePgbench.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("pgbench: no tps in output:\n%s", out)
	}
	return strconv.ParseFloat(string(m[1]), 64)
}

// instrucao is one normalized statement of pg_stat_statements.
type instrucao struct {
	Nome             string // sqlc query name, or the statement's start
	Chamadas         int64
	TotalMs, MediaMs float64
	WalBytes         int64 // the WAL its executions wrote (full-page images included)
}

// estatisticasPG are a pass's pg_stat_statements, WAL and commits, and the
// updates of d6a.conselheiros with how many were HOT (an indexed column
// that changes defeats HOT).
type estatisticasPG struct {
	Instrucoes []instrucao
	wal
	AtualizacoesConselheiros, HOTConselheiros int64
}

// esperaEstatisticas is how long a backend's last counts may stay its own:
// PostgreSQL 15 flushes them to the shared statistics once it has been
// idle, at most once a second (PGSTAT_MIN_INTERVAL).
const esperaEstatisticas = 1500 * time.Millisecond

// wal is pg_stat_wal's flushes, their time and the bytes written, with the
// commits of the current database (pg_stat_database).
type wal struct {
	WalSyncs, WalBytes, Commits int64
	WalSyncMs                   float64
}

func lerWAL(ctx context.Context, conn *pgx.Conn) (w wal, err error) {
	err = conn.QueryRow(ctx, `SELECT w.wal_sync, w.wal_sync_time, w.wal_bytes::bigint, d.xact_commit
		FROM pg_stat_wal w, pg_stat_database d WHERE d.datname = current_database()`).Scan(&w.WalSyncs, &w.WalSyncMs, &w.WalBytes, &w.Commits)
	return w, err
}

// menos is w − antes: the WAL of what ran in between.
func (w wal) menos(antes wal) wal {
	return wal{w.WalSyncs - antes.WalSyncs, w.WalBytes - antes.WalBytes, w.Commits - antes.Commits, w.WalSyncMs - antes.WalSyncMs}
}

func executarSQL(ctx context.Context, conn *pgx.Conn, sqls ...string) error {
	for _, sql := range sqls {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", strings.Fields(sql)[0], err)
		}
	}
	return nil
}

func lerEstatisticas(ctx context.Context, conn *pgx.Conn) (e estatisticasPG, err error) {
	rows, err := conn.Query(ctx, `
		SELECT query, calls, total_exec_time, mean_exec_time, wal_bytes::bigint
		FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
		WHERE d.datname = current_database() AND calls > 0
		ORDER BY total_exec_time DESC LIMIT 25`)
	if err != nil {
		return e, err
	}
	var q string
	var i instrucao
	_, err = pgx.ForEachRow(rows, []any{&q, &i.Chamadas, &i.TotalMs, &i.MediaMs, &i.WalBytes}, func() error {
		if i.Nome = store.NomeDaQuery(q); !strings.Contains(i.Nome, "pg_stat") { // not the bench's own
			e.Instrucoes = append(e.Instrucoes, i)
		}
		return nil
	})
	if err != nil {
		return e, err
	}
	// pg_stat_database is refreshed, with a small delay, at the end of each
	// transaction of the other backends.
	if e.wal, err = lerWAL(ctx, conn); err != nil {
		return e, err
	}
	return e, conn.QueryRow(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = 'd6a.conselheiros'::regclass`).
		Scan(&e.AtualizacoesConselheiros, &e.HOTConselheiros)
}
