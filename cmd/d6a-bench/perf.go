package main

import (
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

// perfilGo fetches a CPU profile of d6a serve from its pprof listener
// (D6A_PPROF_ADDR, when the binary has it) and writes `go tool pprof -top`
// beside it.
func perfilGo(addr, out string, segundos int) {
	cli := &http.Client{Timeout: time.Duration(segundos+30) * time.Second}
	r, err := cli.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, segundos))
	if err != nil {
		logf("pprof of d6a serve: %v", err)
		return
	}
	defer r.Body.Close()
	if r.StatusCode != http.StatusOK {
		logf("pprof of d6a serve: %s (this d6a has no D6A_PPROF_ADDR?)", r.Status)
		return
	}
	f, err := os.Create(out)
	if err != nil {
		return
	}
	_, err = io.Copy(f, r.Body)
	f.Close()
	if err != nil {
		return
	}
	txt, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=60", out).CombinedOutput()
	if err == nil {
		_ = os.WriteFile(strings.TrimSuffix(out, ".pprof")+".pprof.txt", txt, 0o644)
		logf("Go CPU profile of d6a serve: %s (.txt beside it)", out)
	}
}
