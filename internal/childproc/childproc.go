// Package childproc runs the programs that tests and tools start (d6a
// serve, nats-server, perf) as child processes, each with its output in a
// log file whose tail explains a failure to start or an early exit.
package childproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// ErrKilled is in Stop's error when the process outlived its wait.
var ErrKilled = errors.New("killed")

// Process is a running (or exited) child.
type Process struct {
	Name, Log string
	cmd       *exec.Cmd
	done      chan struct{} // closed at the exit
	err       error         // cmd.Wait's, once done is closed
}

// Start runs bin with env, its stdout and stderr in the file log (created
// anew). The child dies with the caller, even when that is killed.
func Start(name, log string, env []string, bin string, args ...string) (*Process, error) {
	f, err := os.Create(log)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &Process{Name: name, Log: log, cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); f.Close(); close(p.done) }()
	return p, nil
}

func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig; see Wait for the exit.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Wait waits for the exit and returns exec.Cmd.Wait's error.
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// Exited is nil while p runs, then an error with the tail of its log.
func (p *Process) Exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited (%v); last log lines:\n%s", p.Name, p.err, Tail(p.Log))
	default:
		return nil
	}
}

// Stop sends sig, waits up to wait for the exit, then kills p. It returns
// the exit's error, or one wrapping ErrKilled.
func (p *Process) Stop(sig os.Signal, wait time.Duration) error {
	_ = p.Signal(sig)
	select {
	case <-p.done:
		return p.err
	case <-time.After(wait):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s did not stop within %s; %w", p.Name, wait, ErrKilled)
	}
}

// WaitReady polls ready until it holds, p exits or limit passes; on
// failure p is stopped and the error holds the tail of its log.
func (p *Process) WaitReady(limit time.Duration, ready func() bool) error {
	for end := time.Now().Add(limit); !ready(); time.Sleep(50 * time.Millisecond) {
		err := p.Exited()
		if err == nil && time.Now().After(end) {
			err = fmt.Errorf("%s not ready after %s; log:\n%s", p.Name, limit, Tail(p.Log))
		}
		if err != nil {
			_ = p.Stop(syscall.SIGTERM, 10*time.Second)
			return err
		}
	}
	return nil
}

// WaitLine waits, as WaitReady, for a line of the log that starts with
// prefix, and returns it.
func (p *Process) WaitLine(prefix string, limit time.Duration) (line string, err error) {
	err = p.WaitReady(limit, func() bool {
		b, _ := os.ReadFile(p.Log)
		_, after, ok := strings.Cut("\n"+string(b), "\n"+prefix)
		line, _, _ = strings.Cut(prefix+after, "\n")
		return ok
	})
	return line, err
}

// Tail is the last 3,000 bytes of the file at path.
func Tail(path string) string {
	b, _ := os.ReadFile(path)
	return string(b[max(0, len(b)-3000):])
}
