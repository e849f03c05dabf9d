// Command devdb gives `make run` a development PostgreSQL: it starts (or
// reuses, when already running) a durable local cluster under
// $D6A_DATA_DIR/pg (default ./.data/pg) from the server binaries installed on
// the machine, creates database d6a when missing and prints only the
// database URL on stdout; everything else goes to stderr.
//
//	D6A_DATABASE_URL=$(go run ./cmd/devdb)   # start or reuse
//	go run ./cmd/devdb -stop                 # stop it
//
// When the binaries are missing and the caller is root, it installs the
// Debian package `postgresql` with apt-get and tries again.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/formigueiro/d6a/internal/pglocal"
)

const (
	defaultPort = 54329
	database    = "d6a"
)

func main() {
	port := flag.Int("port", defaultPort, "port at 127.0.0.1 for a cluster that is not running yet")
	stop := flag.Bool("stop", false, "stop the cluster and exit")
	dirFlag := flag.String("dir", "", "cluster data directory (default $D6A_DATA_DIR/pg, $D6A_DATA_DIR defaulting to ./.data)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: devdb [-port N] [-dir DIR] [-stop]\n\n"+
			"Starts or reuses the development PostgreSQL cluster and prints its d6a database URL.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}

	dir, err := dataDir(*dirFlag)
	if err != nil {
		die(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	if *stop {
		os.Exit(stopCluster(ctx, dir))
	}

	verb := "started"
	if running(dir) {
		verb = "reused"
	}
	c, err := startCluster(ctx, dir, *port)
	if err != nil {
		die(err)
	}
	if err := c.CreateDatabase(ctx, database, ""); err != nil {
		die(fmt.Errorf("create database %s: %w", database, err))
	}
	logf("PostgreSQL %s: data %s, port %d, database %s (stop with `make stop-db`)", verb, dir, c.Port, database)
	fmt.Println(c.URL(database))
}

// dataDir resolves the cluster directory to an absolute path (the server's
// tools run from another working directory) and makes sure the server's
// user can reach it when the caller is root.
func dataDir(flagDir string) (string, error) {
	dir := flagDir
	if dir == "" {
		base := os.Getenv("D6A_DATA_DIR")
		if base == "" {
			base = "./.data"
		}
		dir = filepath.Join(base, "pg")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	if os.Geteuid() == 0 {
		// The server runs as `postgres` or `nobody`: the state directory
		// (ours) gets o+x; an ancestor that is not traversable is reported.
		if fi, err := os.Stat(parent); err == nil && fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(parent, fi.Mode().Perm()|0o011); err != nil {
				return "", err
			}
		}
		for p := filepath.Dir(parent); ; p = filepath.Dir(p) {
			fi, err := os.Stat(p)
			if err != nil {
				return "", err
			}
			if fi.Mode().Perm()&0o001 == 0 {
				return "", fmt.Errorf("%s is not traversable by other users, so the unprivileged PostgreSQL server cannot reach %s: chmod o+x %s or set D6A_DATA_DIR elsewhere", p, dir, p)
			}
			if p == filepath.Dir(p) {
				break
			}
		}
	}
	return dir, nil
}

func startCluster(ctx context.Context, dir string, port int) (*pglocal.Cluster, error) {
	opts := pglocal.Options{Dir: dir, Port: port, Durable: true}
	c, err := pglocal.Start(ctx, opts)
	if !errors.Is(err, pglocal.ErrNoBinaries) {
		return c, err
	}
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "devdb: PostgreSQL server binaries (initdb, pg_ctl) not found: install the Debian package postgresql (sudo apt-get install -y postgresql) or set D6A_DATABASE_URL")
		os.Exit(1)
	}
	if err := aptInstall(ctx); err != nil {
		return nil, fmt.Errorf("installing postgresql with apt-get: %w", err)
	}
	return pglocal.Start(ctx, opts)
}

// aptInstall installs the Debian package postgresql, non-interactively,
// sending apt's output to stderr so stdout keeps only the URL.
func aptInstall(ctx context.Context) error {
	if _, err := exec.LookPath("apt-get"); err != nil {
		return errors.New("no apt-get on this machine: install the PostgreSQL server binaries (initdb, pg_ctl) or set D6A_DATABASE_URL")
	}
	logf("PostgreSQL server binaries not found: running apt-get install -y postgresql")
	cmd := exec.CommandContext(ctx, "sh", "-c", "apt-get update && apt-get install -y postgresql")
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	return cmd.Run()
}

func stopCluster(ctx context.Context, dir string) int {
	if !running(dir) {
		logf("no PostgreSQL running in %s", dir)
		return 0
	}
	// Start reuses the running server, giving a handle that can stop it.
	c, err := pglocal.Start(ctx, pglocal.Options{Dir: dir, Durable: true})
	if err != nil {
		die(err)
	}
	if err := c.Stop(); err != nil {
		die(err)
	}
	logf("PostgreSQL in %s stopped", dir)
	return 0
}

// running reports whether postmaster.pid names a live process.
func running(dir string) bool {
	pid, _ := pglocal.Postmaster(dir)
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "devdb: "+format+"\n", args...)
}

func die(err error) {
	fmt.Fprintf(os.Stderr, "devdb: %v\n", err)
	os.Exit(1)
}
