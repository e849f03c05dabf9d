// Package pgtest gives each test its own fresh database on a real
// PostgreSQL server: a Docker container (dockertest) when a Docker daemon
// answers, otherwise one throwaway cluster per test binary started from the
// local server binaries. D6A_TEST_PG_URL points it at an existing server
// instead (an admin URL whose user may create databases).
//
// Packages that use it call Run from TestMain so the server stops at exit.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/ory/dockertest/v3"
	"github.com/ory/dockertest/v3/docker"

	"github.com/formigueiro/d6a/internal/pglocal"
	"github.com/formigueiro/d6a/internal/store"
	migrations "github.com/formigueiro/d6a/sql/migrations"
)

var (
	once     sync.Once
	onceErr  error
	adminURL string // URL of the maintenance database "postgres"
	template string
	stop     func()
	counter  atomic.Int64
	createMu sync.Mutex
)

// Run runs the tests and then stops whatever server was started.
func Run(m *testing.M) int {
	code := m.Run()
	if stop != nil {
		stop()
	}
	return code
}

// CoreSchema is the stand-in for core.uc_polygons that test databases get.
var CoreSchema = `CREATE SCHEMA IF NOT EXISTS core;
CREATE TABLE IF NOT EXISTS core.uc_polygons (id UUID PRIMARY KEY, parent_uc_id UUID);`

func setup() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	switch {
	case os.Getenv("D6A_TEST_PG_URL") != "":
		adminURL = os.Getenv("D6A_TEST_PG_URL")
	case dockerAnswers():
		if err := startDocker(); err != nil {
			return err
		}
	default:
		base, err := os.MkdirTemp("", "d6a-pgtest-")
		if err != nil {
			return err
		}
		// The server may run as another user (root is refused): let it
		// traverse the base directory.
		if err := os.Chmod(base, 0o755); err != nil {
			return err
		}
		c, err := pglocal.Start(ctx, pglocal.Options{Dir: filepath.Join(base, "data")})
		if err != nil {
			os.RemoveAll(base)
			return err
		}
		adminURL = c.URL("postgres")
		stop = func() { _ = c.Stop(); _ = os.RemoveAll(base) }
	}
	template = fmt.Sprintf("d6a_tpl_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)
	if err := exec(ctx, adminURL, "CREATE DATABASE "+template); err != nil {
		return err
	}
	tplURL := withDB(adminURL, template)
	pool, err := pgxpool.New(ctx, tplURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := store.Migrate(ctx, pool); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, CoreSchema); err != nil {
		return err
	}
	return nil
}

func dockerAnswers() bool {
	pool, err := dockertest.NewPool("")
	if err != nil {
		return false
	}
	pool.MaxWait = 5 * time.Second
	return pool.Client.Ping() == nil
}

func startDocker() error {
	pool, err := dockertest.NewPool("")
	if err != nil {
		return err
	}
	pool.MaxWait = 2 * time.Minute
	res, err := pool.RunWithOptions(&dockertest.RunOptions{
		Repository: "postgres", Tag: "15-alpine",
		Env: []string{"POSTGRES_PASSWORD=postgres", "POSTGRES_HOST_AUTH_METHOD=trust"},
		Cmd: []string{"postgres", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "max_connections=300"},
	}, func(hc *docker.HostConfig) { hc.AutoRemove = true })
	if err != nil {
		return err
	}
	_ = res.Expire(1800)
	adminURL = fmt.Sprintf("postgres://postgres:postgres@%s/postgres?sslmode=disable", res.GetHostPort("5432/tcp"))
	stop = func() { _ = pool.Purge(res) }
	return pool.Retry(func() error {
		conn, err := pgx.Connect(context.Background(), adminURL)
		if err != nil {
			return err
		}
		return conn.Close(context.Background())
	})
}

func exec(ctx context.Context, url, sql string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

func withDB(u, db string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	p.Path = "/" + db
	return p.String()
}

func ensure(t testing.TB) {
	t.Helper()
	once.Do(func() { onceErr = setup() })
	if onceErr != nil {
		t.Fatalf("pgtest: no PostgreSQL for tests: %v", onceErr)
	}
}

func newDatabase(t testing.TB, migrated bool) string {
	t.Helper()
	ensure(t)
	from := ""
	if migrated {
		from = template
	}
	name := fmt.Sprintf("d6a_t%d_%d_%s", os.Getpid(), counter.Add(1), sanitize(t.Name()))
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if from != "" {
		sql += " TEMPLATE " + from
	}
	createMu.Lock()
	err := exec(context.Background(), adminURL, sql)
	createMu.Unlock()
	if err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		_ = exec(context.Background(), adminURL, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	})
	return withDB(adminURL, name)
}

// URL returns the URL of a fresh, migrated database with the core.uc_polygons
// stand-in, dropped when the test ends.
func URL(t testing.TB) string { return newDatabase(t, true) }

// EmptyURL returns the URL of a fresh database with nothing in it.
func EmptyURL(t testing.TB) string { return newDatabase(t, false) }

// New returns a Store on a fresh, migrated database.
func New(t testing.TB) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Versions lists the migration versions, oldest first.
func Versions(t testing.TB) []int64 {
	t.Helper()
	entries, err := migrations.FS.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, e := range entries {
		var v int64
		if _, err := fmt.Sscanf(e.Name(), "%d_", &v); err == nil {
			out = append(out, v)
		}
	}
	return out
}

func sanitize(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 30 {
			break
		}
	}
	return b.String()
}
