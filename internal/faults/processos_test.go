//go:build faults

package faults

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/formigueiro/d6a/internal/beacon"
	"github.com/formigueiro/d6a/internal/childproc"
	"github.com/formigueiro/d6a/internal/loopback"
	"github.com/formigueiro/d6a/internal/natslocal"
)

func porta(t *testing.T) int {
	t.Helper()
	p, err := loopback.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// novoNATS starts a real nats-server process with JetStream on a store of
// its own, so it can be stopped and restarted apart from d6a.
func novoNATS(t *testing.T, nome string) *natslocal.Server {
	t.Helper()
	return iniciarNATS(t, natslocal.Options{Dir: filepath.Join(raiz, nome, "nats"), Config: "server_name: faults\n"})
}

func iniciarNATS(t *testing.T, o natslocal.Options) *natslocal.Server {
	t.Helper()
	s, err := natslocal.Start(binNATS, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(syscall.SIGTERM) })
	return s
}

// reiniciar is a NATS outage of about `fora`: stop with sig (SIGTERM: clean
// shutdown; SIGKILL: crash), wait, start on the same port and store.
func reiniciar(s *natslocal.Server, sig syscall.Signal, fora time.Duration) error {
	_ = s.Stop(sig)
	time.Sleep(fora)
	return s.Restart()
}

// instancia is one `d6a serve`, restarted by a supervisor loop whenever it
// exits until encerrar is called. Every incarnation writes its stdout and
// stderr to a file of its own.
type instancia struct {
	t     *testing.T
	nome  string
	porta int
	env   []string
	dir   string

	mu          sync.Mutex
	proc        *childproc.Process // the running incarnation
	desde       time.Time
	encarnacoes int
	logs        []string
	mortes      int            // kill -9 sent by the test
	saidas      map[string]int // how incarnations ended
	ultimaSaida string
	parando     bool
	fim         chan struct{}
	vivo        chan struct{} // closed once the current incarnation's exit is counted
}

// novaInstancia starts a supervised `d6a serve` with env (D6A_* only; the
// rest of the process environment is inherited, D6A_* variables of the
// test's own environment are not).
func novaInstancia(t *testing.T, nome string, env map[string]string) *instancia {
	t.Helper()
	i := &instancia{t: t, nome: nome, porta: porta(t), dir: filepath.Join(raiz, t.Name(), nome), saidas: map[string]int{}, fim: make(chan struct{})}
	if err := os.MkdirAll(i.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "D6A_") && !strings.HasPrefix(kv, "GORACE=") {
			i.env = append(i.env, kv)
		}
	}
	env["D6A_HTTP_ADDR"] = "127.0.0.1:" + strconv.Itoa(i.porta)
	env["D6A_DATA_DIR"] = filepath.Join(i.dir, "data")
	if _, ok := env["D6A_BEACON_URL"]; !ok {
		// Every instance of a suite reads one beacon, as every replica of
		// a deployment reads quicknet: instances with private beacons of
		// their own would each state their chain in the log.
		url, chave := beaconDaSuite(t)
		env["D6A_BEACON_URL"], env["D6A_BEACON_CHAVE"] = url, chave
	}
	for k, v := range env {
		i.env = append(i.env, k+"="+v)
	}
	// Report races as they happen and keep running: a kill -9 would lose a
	// report kept for the exit.
	i.env = append(i.env, "GORACE=halt_on_error=0 exitcode=66")
	go i.supervisionar()
	t.Cleanup(func() { i.encerrar(30 * time.Second) })
	return i
}

func (i *instancia) base() string { return "http://127.0.0.1:" + strconv.Itoa(i.porta) }

func (i *instancia) supervisionar() {
	defer close(i.fim)
	for {
		i.mu.Lock()
		if i.parando {
			i.mu.Unlock()
			return
		}
		i.encarnacoes++
		caminho := filepath.Join(i.dir, fmt.Sprintf("%s-%02d.log", i.nome, i.encarnacoes))
		p, err := childproc.Start(i.nome, caminho, i.env, binD6a, "serve")
		if err != nil {
			i.mu.Unlock()
			i.t.Errorf("%s: start: %v", i.nome, err)
			return
		}
		i.proc, i.desde, i.vivo = p, time.Now(), make(chan struct{})
		i.logs = append(i.logs, caminho)
		vivo := i.vivo
		i.mu.Unlock()

		err = p.Wait()
		i.mu.Lock()
		i.proc = nil
		i.ultimaSaida = descreverSaida(err)
		i.saidas[i.ultimaSaida]++
		close(vivo)
		parando := i.parando
		i.mu.Unlock()
		if parando {
			return
		}
		// A crash-looping instance (database down at start: exit 2) is
		// restarted with a short pause, like a process manager would.
		time.Sleep(300 * time.Millisecond)
	}
}

func descreverSaida(err error) string {
	if err == nil {
		return "exit 0"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "signal " + ws.Signal().String()
		}
		return "exit " + strconv.Itoa(ee.ExitCode())
	}
	return err.Error()
}

// matar sends SIGKILL to the running incarnation; it reports false when
// none was running.
func (i *instancia) matar() bool {
	i.mu.Lock()
	p, vivo := i.proc, i.vivo
	if p == nil || i.parando {
		i.mu.Unlock()
		return false
	}
	i.mortes++
	i.mu.Unlock()
	_ = p.Signal(syscall.SIGKILL)
	<-vivo
	return true
}

// vivaHa reports whether an incarnation runs and for how long.
func (i *instancia) vivaHa() (time.Duration, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.proc == nil {
		return 0, false
	}
	return time.Since(i.desde), true
}

// encerrar sends SIGTERM and waits for the drain (CONTRACT §1: exits 0). It
// returns how the last incarnation ended; the supervisor stops.
func (i *instancia) encerrar(limite time.Duration) (string, time.Duration) {
	i.mu.Lock()
	if i.parando {
		i.mu.Unlock()
		<-i.fim
		return i.ultimaSaida, 0
	}
	i.parando = true
	p := i.proc
	i.mu.Unlock()
	inicio := time.Now()
	if p != nil {
		if err := p.Stop(syscall.SIGTERM, limite); errors.Is(err, childproc.ErrKilled) {
			i.t.Errorf("%s: did not exit within %s of SIGTERM; killed", i.nome, limite)
		}
	}
	<-i.fim
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.ultimaSaida, time.Since(inicio)
}

// pronta waits until /readyz answers 200.
func (i *instancia) pronta(limite time.Duration) error {
	cli := &http.Client{Timeout: 2 * time.Second}
	fim := time.Now().Add(limite)
	for {
		resp, err := cli.Get(i.base() + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		if time.Now().After(fim) {
			return fmt.Errorf("%s: /readyz not 200 after %s (last: %v)", i.nome, limite, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// estatisticas summarises the incarnations: how many, how they ended.
func (i *instancia) estatisticas() (int, int, map[string]int) {
	i.mu.Lock()
	defer i.mu.Unlock()
	s := make(map[string]int, len(i.saidas))
	for k, v := range i.saidas {
		s[k] = v
	}
	return i.encarnacoes, i.mortes, s
}

// arquivos returns the log files of every incarnation.
func (i *instancia) arquivos() []string {
	i.mu.Lock()
	defer i.mu.Unlock()
	return append([]string(nil), i.logs...)
}

// sinaisRuins are what a healthy d6a never writes: a crash, a fatal runtime
// error, a data race report, or a panic recovered in a handler (which turns
// a message into a dead letter) or in the HTTP layer.
var sinaisRuins = []string{"panic:", "fatal error", "WARNING: DATA RACE", "panic no handler", "panic no handler HTTP", "SIGSEGV"}

// procurarPanico scans log files for sinaisRuins and returns one line per
// hit (file:line: text), at most max.
func procurarPanico(arquivos []string, max int) []string {
	var achados []string
	for _, a := range arquivos {
		f, err := os.Open(a)
		if err != nil {
			continue
		}
		s := bufio.NewScanner(f)
		s.Buffer(make([]byte, 1<<20), 4<<20)
		n := 0
		for s.Scan() {
			n++
			linha := s.Text()
			for _, r := range sinaisRuins {
				if strings.Contains(linha, r) {
					if len(linha) > 300 {
						linha = linha[:300] + "…"
					}
					achados = append(achados, fmt.Sprintf("%s:%d: %s", filepath.Base(a), n, linha))
					break
				}
			}
			if len(achados) >= max {
				f.Close()
				return achados
			}
		}
		f.Close()
	}
	return achados
}

// esperar polls cond every 200 ms until it holds or ctx ends.
func esperar(ctx context.Context, cond func() bool) bool {
	for {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// beaconDaSuite is the suite's one drand-compatible beacon, on loopback for
// the whole run (the private beacon d6a serve would start, shared).
var beaconDaSuite = func() func(t *testing.T) (string, string) {
	var (
		once       sync.Once
		url, chave string
		errInicio  error
	)
	return func(t *testing.T) (string, string) {
		once.Do(func() {
			p := beacon.NovoPrivado([]byte("d6a faults suite"), time.Now().Add(-time.Minute).Unix(), time.Second)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				errInicio = err
				return
			}
			go func() { _ = http.Serve(ln, p.Handler()) }()
			url, chave = "http://"+ln.Addr().String(), hex.EncodeToString(p.Cadeia().ChavePublica)
		})
		if errInicio != nil {
			t.Fatalf("the suite's beacon: %v", errInicio)
		}
		return url, chave
	}
}()
