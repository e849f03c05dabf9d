package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// perfil is a `perf record` of some processes during a pass (-perf): d6a
// serve has no pprof endpoint, and PostgreSQL and nats-server are not Go
// programs of ours. Samples are cpu-clock (works in VMs without PMU).
type perfil struct {
	nome string
	cmd  *exec.Cmd
	out  string
}

func iniciarPerf(dir, nome string, pids []int) (*perfil, error) {
	bin, err := exec.LookPath("perf")
	if err != nil {
		return nil, fmt.Errorf("-perf: %w", err)
	}
	var ps []string
	for _, p := range pids {
		if p > 0 {
			ps = append(ps, strconv.Itoa(p))
		}
	}
	if len(ps) == 0 {
		return nil, nil
	}
	p := &perfil{nome: nome, out: filepath.Join(dir, nome+".perf.data")}
	p.cmd = exec.Command(bin, "record", "-e", "cpu-clock", "-F", "499", "-g", "-o", p.out, "-p", strings.Join(ps, ","))
	p.cmd.Stdout, p.cmd.Stderr = nil, nil
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	return p, nil
}

// parar stops the recording and writes a flat report of the top symbols
// beside it; it returns the report's path.
func (p *perfil) parar() string {
	if p == nil {
		return ""
	}
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
	rel := strings.TrimSuffix(p.out, ".perf.data") + ".perf.txt"
	out, err := exec.Command("perf", "report", "-i", p.out, "--stdio", "--no-children", "--sort", "comm,dso,symbol",
		"--percent-limit", "0.7", "-g", "none").CombinedOutput()
	if err != nil {
		return ""
	}
	if os.WriteFile(rel, out, 0o644) != nil {
		return ""
	}
	return rel
}

// perfilGo fetches a Go CPU profile of segundos from the pprof listener at
// addr (d6a serve's D6A_PPROF_ADDR, the HTTP mode's server process) into
// out, and writes `go tool pprof -top` beside it.
func perfilGo(ctx context.Context, addr, out string, segundos int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, segundos), nil)
	if err != nil {
		return err
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer r.Body.Close()
	if r.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof: %s", r.Status)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r.Body); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	txt, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=60", out).CombinedOutput()
	if err == nil {
		err = os.WriteFile(out+".txt", txt, 0o644)
	}
	return err
}
