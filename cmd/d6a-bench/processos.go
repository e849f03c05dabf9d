package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/childproc"
	"github.com/formigueiro/d6a/internal/loopback"
	"github.com/formigueiro/d6a/internal/pglocal"
	"github.com/formigueiro/d6a/internal/procstat"
)

// base is what both modes run in: the module's root, a work directory and
// a durable PostgreSQL in it.
type base struct {
	raiz, dir string
	pg        *pglocal.Cluster
	versao    string // PostgreSQL server_version
}

// abrirBase makes the work directory (dir, or a fresh temporary one) and
// starts PostgreSQL in it, durable, with settings on top of pglocal's.
func abrirBase(ctx context.Context, dir string, settings map[string]string) (*base, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	b := &base{raiz: filepath.Dir(strings.TrimSpace(string(gomod)))}
	if txt, _ := os.ReadFile(filepath.Join(b.raiz, "go.mod")); err != nil || !strings.Contains(string(txt), "module github.com/formigueiro/d6a\n") {
		return nil, errors.New("run from inside the d6a module (go.mod of github.com/formigueiro/d6a not found)")
	}
	if dir == "" {
		b.dir, err = os.MkdirTemp("", "d6a-bench-")
	} else if b.dir, err = filepath.Abs(dir); err == nil {
		err = os.MkdirAll(b.dir, 0o755)
	}
	if err != nil {
		return nil, err
	}
	_ = os.Chmod(b.dir, 0o755) // PostgreSQL runs unprivileged when we are root
	logf("starting a durable PostgreSQL (fsync on, synchronous_commit on) in %s", b.dir)
	if b.pg, err = pglocal.Start(ctx, pglocal.Options{Dir: filepath.Join(b.dir, "pg"), Durable: true, Settings: settings}); err != nil {
		return b, err
	}
	conn, err := pgx.Connect(ctx, b.pg.URL("postgres"))
	if err != nil {
		return b, err
	}
	defer conn.Close(ctx)
	return b, conn.QueryRow(ctx, `SHOW server_version`).Scan(&b.versao)
}

// fechar stops PostgreSQL and removes the work directory unless manter.
func (b *base) fechar(manter bool) {
	if b.pg != nil {
		if err := b.pg.Stop(); err != nil {
			logf("stopping PostgreSQL: %v", err)
		}
	}
	if manter {
		logf("work directory kept: %s", b.dir)
	} else {
		_ = os.RemoveAll(b.dir)
	}
}

// comSaida runs cmd and, when it fails, puts its output in the error.
func comSaida(cmd *exec.Cmd, oque string) ([]byte, error) {
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s: %w\n%s", oque, err, out)
	}
	return out, nil
}

// ambienteLimpo is this process's environment without D6A_* variables, so
// a developer's settings cannot leak into the measured server.
func ambienteLimpo() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "D6A_") })
}

// memoria is VmRSS and VmHWM (peak RSS) of a process, in bytes; zero when
// it is gone.
type memoria struct{ RSS, HWM int64 }

func lerMemoria(pid int) memoria {
	kb := func(k string) int64 {
		n, _ := strconv.ParseInt(strings.TrimSuffix(procField(fmt.Sprintf("/proc/%d/status", pid), k), " kB"), 10, 64)
		return n * 1024
	}
	return memoria{kb("VmRSS"), kb("VmHWM")}
}

// servidor is one `d6a serve`.
type servidor struct {
	*childproc.Process
	http, nats string
	pprof      string // D6A_PPROF_ADDR, with -perf
}

// iniciarServe starts `d6a serve` against dbURL and the bus (natsURL, or the
// embedded server on a free port when natsURL is empty), with its data
// directory dir and its output in file log there, and waits for /readyz.
// extra is more of its environment (KEY=value).
func iniciarServe(bin, dir, log, dbURL, natsURL string, pprof bool, extra ...string) (*servidor, error) {
	var portas [3]string // HTTP, pprof, embedded NATS
	for i := range portas {
		p, err := loopback.FreePort()
		if err != nil {
			return nil, err
		}
		portas[i] = fmt.Sprintf("127.0.0.1:%d", p)
	}
	s := &servidor{http: portas[0], nats: natsURL, pprof: se(pprof, portas[1], "")}
	env := append(ambienteLimpo(), "D6A_DATABASE_URL="+dbURL, "D6A_DATA_DIR="+dir, "D6A_HTTP_ADDR="+s.http,
		"D6A_MIGRATE=false", // `d6a migrate` ran before
		"D6A_LOG_FORMAT=json", "D6A_LOG_LEVEL=info", "D6A_PPROF_ADDR="+s.pprof)
	if natsURL == "" {
		s.nats = "nats://" + portas[2]
		env = append(env, "D6A_NATS_EMBEDDED_ADDR="+portas[2])
	} else {
		env = append(env, "D6A_NATS_URL="+natsURL)
	}
	env = append(env, extra...)
	var err error
	if s.Process, err = childproc.Start("d6a serve", filepath.Join(dir, log), env, bin, "serve"); err != nil {
		return nil, err
	}
	cli := &http.Client{Timeout: time.Second}
	return s, s.WaitReady(2*time.Minute, func() bool {
		r, err := cli.Get("http://" + s.http + "/readyz")
		if err == nil {
			r.Body.Close()
		}
		return err == nil && r.StatusCode == http.StatusOK
	})
}

// lerLinhas calls f with each JSON line of the log at path, decoded as a
// T, until f returns false.
func lerLinhas[T any](path string, f func(T) bool) {
	arq, err := os.Open(path)
	if err != nil {
		return
	}
	defer arq.Close()
	s := bufio.NewScanner(arq)
	s.Buffer(make([]byte, 1<<20), 1<<24)
	for s.Scan() {
		var l T
		if json.Unmarshal(s.Bytes(), &l) == nil && !f(l) {
			return
		}
	}
}

// cargaHierarquia is the "hierarquia de UCs carregada" log line of d6a serve.
type cargaHierarquia struct {
	UCs     int
	Duracao time.Duration
}

func lerCargaHierarquia(log string) (c cargaHierarquia, err error) {
	err = errors.New("no \"hierarquia de UCs carregada\" line in the log of d6a serve")
	type linha struct {
		Msg, Duracao string
		UCs          int
	}
	lerLinhas(log, func(l linha) bool {
		if l.Msg != "hierarquia de UCs carregada" {
			return true
		}
		c.UCs = l.UCs
		c.Duracao, err = time.ParseDuration(l.Duracao)
		return false
	})
	return c, err
}

// lerLog returns the JSON log lines of path at level WARN or ERROR but the
// JWT warning and the answers to the bench's /readyz polling before boot
// completes (503), and counts the request log lines.
func lerLog(path string) (avisos []string, pedidos int) {
	lerLinhas(path, func(l struct{ Level, Msg, Path string }) bool {
		switch {
		case l.Path == "/readyz":
		case (l.Level == "WARN" || l.Level == "ERROR") && !strings.Contains(l.Msg, "JWT"):
			avisos = append(avisos, l.Level+" "+l.Msg)
		case l.Msg == "requisição http":
			pedidos++
		}
		return true
	})
	return avisos, pedidos
}

// gravarPerf starts, for -perf, one `perf record` of d6a serve, nats-server
// and PostgreSQL (not Go programs of ours; cpu-clock works in VMs without a
// PMU) and a Go CPU profile of d6a serve, named after the run and passe.
// The returned function stops the recording and writes its flat report,
// split by command, beside it.
func gravarPerf(ctx context.Context, srv *servidor, natsPid int, pgDir string, segundos int, passe string) (parar func(), err error) {
	bin, err := exec.LookPath("perf")
	if err != nil {
		return nil, fmt.Errorf("-perf: %w", err)
	}
	ps := []string{strconv.Itoa(srv.Pid())}
	if natsPid > 0 { // no nats-server of ours with -embedded-nats
		ps = append(ps, strconv.Itoa(natsPid))
	}
	if pm, _ := pglocal.Postmaster(pgDir); pm > 0 {
		ps = append(ps, strconv.Itoa(pm))
		for _, f := range procstat.Children(pm) {
			ps = append(ps, strconv.Itoa(f.PID))
		}
	}
	dir := filepath.Dir(srv.Log)
	k := filepath.Base(dir) + "-" + strings.NewReplacer("/", "", " ", "-", "%", "").Replace(passe)
	out := filepath.Join(dir, "perf-"+k)
	rec, err := childproc.Start("perf record", out+".log", os.Environ(), bin, "record", "-e", "cpu-clock", "-F", "499", "-g", "-o", out+".data", "-p", strings.Join(ps, ","))
	if err != nil {
		return nil, err
	}
	time.Sleep(500 * time.Millisecond) // let perf attach
	if srv.pprof != "" {
		perfil := filepath.Join(dir, "d6a-serve-"+k+".pprof")
		go func() {
			if err := perfilGo(ctx, srv.pprof, perfil, min(60, max(5, segundos))); err != nil {
				logf("pprof of d6a serve: %v", err)
				return
			}
			logf("Go CPU profile of d6a serve: %s (.txt beside it)", perfil)
		}()
	}
	return func() {
		_ = rec.Stop(syscall.SIGTERM, 30*time.Second) // perf record writes its data on SIGTERM
		rel, err := exec.Command(bin, "report", "-i", out+".data", "--stdio", "--no-children", "--sort", "comm,dso,symbol",
			"--percent-limit", "0.3", "-g", "none").CombinedOutput()
		if err == nil && os.WriteFile(out+".txt", rel, 0o644) == nil {
			logf("perf report: %s.txt", out)
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
	perfil, err := io.ReadAll(r.Body)
	if err == nil && r.StatusCode != http.StatusOK {
		err = fmt.Errorf("pprof: %s", r.Status)
	}
	if err == nil {
		err = os.WriteFile(out, perfil, 0o644)
	}
	if err == nil {
		_, err = comSaida(exec.Command("go", "tool", "pprof", "-top", "-nodecount=60", "-output", out+".txt", out), "go tool pprof")
	}
	return err
}
