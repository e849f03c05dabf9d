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

	"github.com/formigueiro/d6a/internal/pglocal"
	"github.com/formigueiro/d6a/internal/procstat"
)

// gravarPerf starts, for -perf, a `perf record` of d6a serve, nats-server and
// the PostgreSQL cluster during a pass (PostgreSQL and nats-server are
// not Go programs of ours; cpu-clock samples work in VMs without a PMU),
// and a Go CPU profile of segundos of d6a serve from D6A_PPROF_ADDR; files
// are named after the run and passe. The returned function stops the
// recordings and writes a flat report beside each.
func gravarPerf(ctx context.Context, srv *servidor, natsPid int, pgDir string, segundos int, passe string) (parar func(), err error) {
	bin, err := exec.LookPath("perf")
	if err != nil {
		return nil, fmt.Errorf("-perf: %w", err)
	}
	dir := filepath.Dir(srv.log)
	k := filepath.Base(dir) + "-" + strings.NewReplacer("/", "", " ", "-", "%", "").Replace(passe)
	alvos := map[string][]int{"d6a-serve-" + k: {srv.Pid()}, "nats-server-" + k: {natsPid}}
	if pm, _ := pglocal.Postmaster(pgDir); pm > 0 {
		alvos["postgres-"+k] = []int{pm}
		for _, f := range procstat.Children(pm) {
			alvos["postgres-"+k] = append(alvos["postgres-"+k], f.PID)
		}
	}
	var cmds []*exec.Cmd
	var saidas []string
	for nome, pids := range alvos {
		var ps []string
		for _, p := range pids {
			if p > 0 {
				ps = append(ps, strconv.Itoa(p))
			}
		}
		if len(ps) == 0 {
			continue
		}
		out := filepath.Join(dir, nome+".perf.data")
		cmd := exec.Command(bin, "record", "-e", "cpu-clock", "-F", "499", "-g", "-o", out, "-p", strings.Join(ps, ","))
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		cmds, saidas = append(cmds, cmd), append(saidas, out)
	}
	time.Sleep(500 * time.Millisecond) // let perf attach
	if srv.pprof != "" {
		out := filepath.Join(dir, "d6a-serve-"+k+".pprof")
		go func() {
			if err := perfilGo(ctx, srv.pprof, out, min(60, max(5, segundos))); err != nil {
				logf("pprof of d6a serve: %v", err)
				return
			}
			logf("Go CPU profile of d6a serve: %s (.txt beside it)", out)
		}()
	}
	return func() {
		for i, cmd := range cmds {
			_ = cmd.Process.Signal(syscall.SIGINT)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
			rel := strings.TrimSuffix(saidas[i], ".perf.data") + ".perf.txt"
			out, err := exec.Command("perf", "report", "-i", saidas[i], "--stdio", "--no-children", "--sort", "comm,dso,symbol",
				"--percent-limit", "0.7", "-g", "none").CombinedOutput()
			if err == nil && os.WriteFile(rel, out, 0o644) == nil {
				logf("perf report: %s", rel)
			}
		}
	}, nil
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
	_, err = io.Copy(f, r.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	txt, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=60", out).CombinedOutput()
	if err == nil {
		err = os.WriteFile(out+".txt", txt, 0o644)
	}
	return err
}
