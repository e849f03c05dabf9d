package childproc

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWaitLineStop(t *testing.T) {
	log := filepath.Join(t.TempDir(), "sh.log")
	p, err := Start("sh", log, os.Environ(), "/bin/sh", "-c", "echo starting; echo 'listening on :1'; exec sleep 60")
	if err != nil {
		t.Fatal(err)
	}
	line, err := p.WaitLine("listening ", 10*time.Second)
	if err != nil || line != "listening on :1" {
		t.Fatalf("WaitLine: %q, %v", line, err)
	}
	if err := p.Exited(); err != nil {
		t.Fatalf("Exited while running: %v", err)
	}
	if err := p.Stop(syscall.SIGTERM, 10*time.Second); err == nil || errors.Is(err, ErrKilled) {
		t.Errorf("Stop: %v, want the exit by SIGTERM", err)
	}
	if err := p.Exited(); err == nil || !strings.Contains(err.Error(), "listening on :1") {
		t.Errorf("Exited after Stop: %v, want the log's tail", err)
	}
}

func TestStopKills(t *testing.T) {
	p, err := Start("sh", filepath.Join(t.TempDir(), "sh.log"), os.Environ(), "/bin/sh", "-c", "trap '' TERM; echo ready; exec sleep 60")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.WaitLine("ready", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := p.Stop(syscall.SIGTERM, 300*time.Millisecond); !errors.Is(err, ErrKilled) {
		t.Errorf("Stop of a process ignoring SIGTERM: %v, want ErrKilled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Stop took %s", d)
	}
}

func TestWaitReadyExit(t *testing.T) {
	p, err := Start("sh", filepath.Join(t.TempDir(), "sh.log"), os.Environ(), "/bin/sh", "-c", "echo boom; exit 3")
	if err != nil {
		t.Fatal(err)
	}
	err = p.WaitReady(10*time.Second, func() bool { return false })
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "boom") {
		t.Errorf("WaitReady on an exited process: %v", err)
	}
	err = p.Wait()
	if err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("Wait: %v", err)
	}
}
