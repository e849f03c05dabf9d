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

// configuracaoPG is the server configuration of the bench cluster, on top
// of pglocal's (durable: fsync and synchronous_commit on). Written to
// docs/bench.md with the results.
var configuracaoPG = map[string]string{
	"shared_buffers":           "1GB",
	"max_wal_size":             "8GB",
	"checkpoint_timeout":       "15min",
	"shared_preload_libraries": "pg_stat_statements",
	"pg_stat_statements.track": "all",
	"track_io_timing":          "on",
	"track_wal_io_timing":      "on",
}

// pgbench runs `pgbench -i` then `pgbench -c 1 -j 1 -T secs -N` (simple
// update, one client) on database db and returns its tps and mean latency.
func pgbench(ctx context.Context, c *pglocal.Cluster, db string, segundos int, log string) (tps float64, lat time.Duration, err error) {
	bin, err := acharPgbench(c)
	if err != nil {
		return 0, 0, err
	}
	con := []string{"-h", "127.0.0.1", "-p", strconv.Itoa(c.Port), "-U", "postgres"}
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, bin, append(args, db)...)
		cmd.Env = append(os.Environ(), "LC_ALL=C", "PGSSLMODE=disable")
		out, err := cmd.CombinedOutput()
		f, ferr := os.OpenFile(log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if ferr == nil {
			fmt.Fprintf(f, "$ pgbench %s %s\n%s\n", strings.Join(args, " "), db, out)
			f.Close()
		}
		if err != nil {
			return string(out), fmt.Errorf("pgbench %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return string(out), nil
	}
	if _, err := run(append([]string{"-i", "-q"}, con...)...); err != nil {
		return 0, 0, err
	}
	out, err := run(append([]string{"-c", "1", "-j", "1", "-T", strconv.Itoa(segundos), "-N"}, con...)...)
	if err != nil {
		return 0, 0, err
	}
	m := regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`).FindStringSubmatch(out)
	if m == nil {
		return 0, 0, fmt.Errorf("pgbench: no tps in output:\n%s", out)
	}
	tps, _ = strconv.ParseFloat(m[1], 64)
	if m := regexp.MustCompile(`latency average = ([0-9.]+) ms`).FindStringSubmatch(out); m != nil {
		ms, _ := strconv.ParseFloat(m[1], 64)
		lat = time.Duration(ms * float64(time.Millisecond))
	}
	return tps, lat, nil
}

// acharPgbench finds pgbench beside the cluster's binaries. Bin() may be a
// directory of symlinks to initdb/pg_ctl (found first in PATH), so the
// symlinks' real directory is tried too.
func acharPgbench(c *pglocal.Cluster) (string, error) {
	var dirs []string
	dirs = append(dirs, c.Bin())
	if real, err := filepath.EvalSymlinks(filepath.Join(c.Bin(), "pg_ctl")); err == nil {
		dirs = append(dirs, filepath.Dir(real))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "pgbench")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("pgbench not found in %s nor in PATH (Debian: apt-get install postgresql-contrib / postgresql)", strings.Join(dirs, ", "))
}

// Server-side evidence of where a pass's time goes.

// instrucao is one normalized statement of pg_stat_statements.
type instrucao struct {
	Nome     string // sqlc query name, or the statement's start
	Chamadas int64
	TotalMs  float64
	MediaMs  float64
}

// walStats is pg_stat_wal: WAL flushes and the time spent in them.
type walStats struct {
	Syncs    int64
	SyncMs   float64
	Escritas int64
	Bytes    int64
}

// estatisticasPG are the server statistics of one pass.
type estatisticasPG struct {
	Instrucoes []instrucao
	WAL        walStats
	Commits    int64 // xact_commit of the database
	// Updates of d6a.conselheiros and how many were HOT (no index entry
	// written): an indexed column that changes (status) defeats HOT.
	AtualizacoesConselheiros, HOTConselheiros int64
}

// executarSQL runs each statement in turn.
func executarSQL(ctx context.Context, conn *pgx.Conn, sqls ...string) error {
	for _, sql := range sqls {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", strings.Fields(sql)[0], err)
		}
	}
	return nil
}

func zerarEstatisticas(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, `SELECT pg_stat_statements_reset(), pg_stat_reset_shared('wal'), pg_stat_reset()`)
	return err
}

func lerEstatisticas(ctx context.Context, conn *pgx.Conn) (estatisticasPG, error) {
	var e estatisticasPG
	rows, err := conn.Query(ctx, `
		SELECT query, calls, total_exec_time, mean_exec_time
		FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
		WHERE d.datname = current_database() AND calls > 0
		ORDER BY total_exec_time DESC LIMIT 25`)
	if err != nil {
		return e, err
	}
	for rows.Next() {
		var q string
		var i instrucao
		if err := rows.Scan(&q, &i.Chamadas, &i.TotalMs, &i.MediaMs); err != nil {
			return e, err
		}
		i.Nome = store.NomeDaQuery(q)
		if strings.Contains(i.Nome, "pg_stat") {
			continue // the bench's own
		}
		e.Instrucoes = append(e.Instrucoes, i)
	}
	if err := rows.Err(); err != nil {
		return e, err
	}
	err = conn.QueryRow(ctx, `SELECT wal_sync, wal_sync_time, wal_write, wal_bytes::bigint FROM pg_stat_wal`).
		Scan(&e.WAL.Syncs, &e.WAL.SyncMs, &e.WAL.Escritas, &e.WAL.Bytes)
	if err != nil {
		return e, err
	}
	// pg_stat_database is refreshed at the end of each transaction of the
	// other backends, with a small delay.
	if err = conn.QueryRow(ctx, `SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`).Scan(&e.Commits); err != nil {
		return e, err
	}
	err = conn.QueryRow(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = 'd6a.conselheiros'::regclass`).
		Scan(&e.AtualizacoesConselheiros, &e.HOTConselheiros)
	return e, err
}
