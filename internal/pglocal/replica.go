package pglocal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// BaseBackup copies the running cluster into dir as a streaming standby of
// it (pg_basebackup -R: standby.signal and primary_conninfo written), ready
// for Start. dir must not hold a cluster.
func (c *Cluster) BaseBackup(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := c.own(dir); err != nil {
		return err
	}
	out, err := c.run(ctx, "pg_basebackup", "-D", dir, "-R", "-X", "stream", "-c", "fast",
		"-h", "127.0.0.1", "-p", strconv.Itoa(c.Port), "-U", "postgres")
	if err != nil {
		return fmt.Errorf("pg_basebackup: %w: %s", err, out)
	}
	return nil
}

// Promote ends a standby's recovery and waits until it accepts writes.
func (c *Cluster) Promote(ctx context.Context) error {
	if out, err := c.run(ctx, "pg_ctl", "-D", c.Dir, "-w", "-t", "60", "promote"); err != nil {
		return fmt.Errorf("pg_ctl promote: %w: %s", err, out)
	}
	return nil
}

// Kill is a crash as clients see it: SIGKILL to the postmaster and then to
// every process it started, so no backend lingers on an open connection.
// The data directory stays as the crash left it.
func (c *Cluster) Kill() error {
	pid, _ := Postmaster(c.Dir)
	if pid <= 0 {
		return fmt.Errorf("no postmaster.pid in %s", c.Dir)
	}
	filhos := children(pid)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill -9 %d: %w", pid, err)
	}
	for _, f := range append(filhos, children(pid)...) {
		_ = syscall.Kill(f, syscall.SIGKILL)
	}
	return nil
}

// children lists the processes whose parent is pid (from /proc).
func children(pid int) []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces, so cut after ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		if pp, _ := strconv.Atoi(f[1]); pp == pid {
			if p, err := strconv.Atoi(filepath.Base(filepath.Dir(d))); err == nil {
				out = append(out, p)
			}
		}
	}
	return out
}
