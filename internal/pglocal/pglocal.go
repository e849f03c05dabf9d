// Package pglocal runs a throwaway or development PostgreSQL cluster from the
// server binaries installed on the machine (initdb, pg_ctl). Tests use it when
// no Docker daemon answers, `make run` uses it when D6A_DATABASE_URL is unset,
// and the benchmark uses it for a durable server of its own.
package pglocal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/loopback"
)

// ErrNoBinaries means initdb/pg_ctl are not installed.
var ErrNoBinaries = errors.New("PostgreSQL server binaries (initdb, pg_ctl) not found: install the Debian package `postgresql` (apt-get install -y postgresql)")

// Options shape a cluster.
type Options struct {
	// Dir is the data directory; created when missing.
	Dir string
	// Port to listen on at 127.0.0.1; 0 picks a free one (ignored when an
	// existing running cluster is reused).
	Port int
	// Durable keeps fsync and synchronous_commit on. Tests turn them off:
	// they prove behaviour, not crash durability of the disk.
	Durable bool
	// Settings are extra `-c name=value` server settings.
	Settings map[string]string
}

// Cluster is a running server.
type Cluster struct {
	Dir  string
	Port int
	bin  string
	cred *syscall.Credential
}

// FindBin returns the directory holding initdb and pg_ctl: PATH first, then
// the newest /usr/lib/postgresql/*/bin.
func FindBin() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if _, err := exec.LookPath("initdb"); err == nil {
			// PATH often holds symlinks (Debian's /usr/local/bin wrappers);
			// the real directory also holds pgbench and the other tools.
			if real, err := filepath.EvalSymlinks(p); err == nil {
				p = real
			}
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", ErrNoBinaries
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Start initialises Dir if it holds no cluster, then starts the server, or
// reuses it when it is already running.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	bin, err := FindBin()
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: o.Dir, Port: o.Port, bin: bin}
	// initdb and postgres refuse to run as root.
	if os.Geteuid() == 0 {
		if c.cred, err = unprivileged(); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	if err := c.own(o.Dir); err != nil {
		return nil, err
	}
	if port, ok := c.running(); ok {
		c.Port = port
		return c, c.wait(ctx)
	}
	if _, err := os.Stat(filepath.Join(o.Dir, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		args := []string{"-D", o.Dir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C"}
		if !o.Durable {
			args = append(args, "--no-sync")
		}
		if out, err := c.run(ctx, "initdb", args...); err != nil {
			return nil, fmt.Errorf("initdb: %w: %s", err, out)
		}
	}
	if c.Port == 0 {
		if c.Port, err = loopback.FreePort(); err != nil {
			return nil, err
		}
	}
	opts := []string{
		"-p " + strconv.Itoa(c.Port),
		"-c listen_addresses=127.0.0.1",
		"-c unix_socket_directories=" + o.Dir,
		"-c max_connections=200",
	}
	if !o.Durable {
		opts = append(opts, "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off")
	}
	keys := make([]string, 0, len(o.Settings))
	for k := range o.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		opts = append(opts, "-c "+k+"="+o.Settings[k])
	}
	logFile := filepath.Join(o.Dir, "server.log")
	if out, err := c.run(ctx, "pg_ctl", "-D", o.Dir, "-l", logFile, "-w", "-t", "60", "-o", strings.Join(opts, " "), "start"); err != nil {
		log, _ := os.ReadFile(logFile)
		return nil, fmt.Errorf("pg_ctl start: %w: %s\n%s", err, out, tail(string(log), 2000))
	}
	return c, c.wait(ctx)
}

// URL is a pgx URL for database db.
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.Port, db)
}

// Stop shuts the server down (fast mode).
func (c *Cluster) Stop() error {
	out, err := c.run(context.Background(), "pg_ctl", "-D", c.Dir, "-m", "fast", "-w", "stop")
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %w: %s", err, out)
	}
	return nil
}

// Bin is the directory of the server binaries (pgbench lives there too).
func (c *Cluster) Bin() string { return c.bin }

// Credential is the unprivileged identity the server runs as when the
// caller is root, nil otherwise; tools run against the cluster can use it.
func (c *Cluster) Credential() *syscall.Credential { return c.cred }

// CreateDatabase creates name (from template when not empty) if missing.
func (c *Cluster) CreateDatabase(ctx context.Context, name, template string) error {
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil || exists {
		return err
	}
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		sql += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	_, err = conn.Exec(ctx, sql)
	return err
}

func (c *Cluster) running() (int, bool) {
	pid, port := Postmaster(c.Dir)
	if pid <= 0 || port == 0 || syscall.Kill(pid, 0) != nil {
		return 0, false
	}
	return port, true
}

// Postmaster reads the postmaster.pid of the cluster in dir: the server's
// process id (the parent of its backends) and its port; zeros when there is
// no such file, or no port in it yet. The process may be gone: the file
// outlives a crash.
func Postmaster(dir string) (pid, port int) {
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return 0, 0
	}
	lines := strings.Split(string(b), "\n")
	pid, _ = strconv.Atoi(strings.TrimSpace(lines[0]))
	if len(lines) >= 4 {
		port, _ = strconv.Atoi(strings.TrimSpace(lines[3]))
	}
	return pid, port
}

func (c *Cluster) wait(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err == nil {
			return conn.Close(ctx)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres on port %d not accepting connections: %w", c.Port, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *Cluster) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd.CombinedOutput()
}

// own hands dir (and its parents that root created for it) to the server's
// user.
func (c *Cluster) own(dir string) error {
	if c.cred == nil {
		return nil
	}
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(c.cred.Uid), int(c.cred.Gid))
	})
}

func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root and no `postgres` or `nobody` user to run PostgreSQL as")
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
