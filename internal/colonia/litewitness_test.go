package colonia_test

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/formigueiro/d6a/internal/transparencia"
)

// litewitness is a real witness (filippo.io/torchwood's litewitness, its
// key in an ssh-agent of its own, its state in SQLite), run as a process:
// the witnesses' tests use an existing implementation of C2SP
// tlog-witness, not one written here.
type litewitness struct {
	t                 *testing.T
	bin, ctl          string
	dir, sock, db     string
	nome, impressao   string
	porta             int
	vkey              string
	cmd, agente       *exec.Cmd
	terminou, agenteF chan struct{}
}

// ferramentasTestemunha finds litewitness, witnessctl and ssh-agent; the
// test skips without them unless D6A_REQUIRE_WITNESS is set (.ci/run sets
// it after installing them; `make test` installs the two Go ones).
func ferramentasTestemunha(t *testing.T) (bin, ctl string) {
	t.Helper()
	procurar := func(nome string) string {
		if p, err := exec.LookPath(nome); err == nil {
			return p
		}
		for _, d := range []string{os.Getenv("D6A_TOOLS_DIR"), filepath.Join(raizModulo(), "bin", "tools")} {
			if d == "" {
				continue
			}
			if p := filepath.Join(d, nome); arquivoExiste(p) {
				return p
			}
		}
		return ""
	}
	bin, ctl = procurar("litewitness"), procurar("witnessctl")
	var falta []string
	for nome, p := range map[string]string{"litewitness": bin, "witnessctl": ctl, "ssh-agent": procurar("ssh-agent"), "ssh-add": procurar("ssh-add"), "ssh-keygen": procurar("ssh-keygen")} {
		if p == "" {
			falta = append(falta, nome)
		}
	}
	if len(falta) > 0 {
		msg := "witness tools missing: " + strings.Join(falta, ", ") + " (make tools; Debian's openssh-client)"
		if os.Getenv("D6A_REQUIRE_WITNESS") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin, ctl
}

func arquivoExiste(p string) bool { _, err := os.Stat(p); return err == nil }

// raizModulo is the repository root (the test runs in internal/colonia).
func raizModulo() string {
	d, _ := os.Getwd()
	return filepath.Clean(filepath.Join(d, "..", ".."))
}

// novaTestemunha prepares a witness named nome that knows the log origem
// with its verifier key vkeyLog, and starts it.
func novaTestemunha(t *testing.T, nome, origem, vkeyLog string) *litewitness {
	t.Helper()
	bin, ctl := ferramentasTestemunha(t)
	// A socket path must stay short (sun_path): not under t.TempDir().
	dir, err := os.MkdirTemp("", "lw")
	must(t, err == nil, "%v", err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	w := &litewitness{t: t, bin: bin, ctl: ctl, dir: dir, sock: filepath.Join(dir, "s"), db: filepath.Join(dir, "w.db"), nome: nome, porta: freePort(t)}
	chave := filepath.Join(dir, "chave")
	w.rodar("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", nome, "-f", chave)
	w.agente = exec.Command("ssh-agent", "-D", "-a", w.sock)
	must(t, w.agente.Start() == nil, "ssh-agent")
	w.agenteF = make(chan struct{})
	go func() { _ = w.agente.Wait(); close(w.agenteF) }()
	t.Cleanup(func() { _ = w.agente.Process.Kill(); <-w.agenteF })
	for fim := time.Now().Add(10 * time.Second); !arquivoExiste(w.sock); {
		must(t, time.Now().Before(fim), "ssh-agent socket %s did not appear", w.sock)
		time.Sleep(20 * time.Millisecond)
	}
	w.rodarCom([]string{"SSH_AUTH_SOCK=" + w.sock}, "ssh-add", "-q", chave)
	campos := strings.Fields(w.rodar("ssh-keygen", "-l", "-E", "sha256", "-f", chave+".pub"))
	must(t, len(campos) >= 2 && strings.HasPrefix(campos[1], "SHA256:"), "fingerprint %v", campos)
	w.impressao = campos[1]
	w.rodar(ctl, "add-log", "-db", w.db, "-origin", origem)
	w.rodar(ctl, "add-key", "-db", w.db, "-origin", origem, "-key", vkeyLog)
	w.iniciar()
	t.Cleanup(w.parar)
	return w
}

func (w *litewitness) url() string { return "http://127.0.0.1:" + strconv.Itoa(w.porta) + "/" }

// iniciar starts litewitness and reads its verifier key from its log.
func (w *litewitness) iniciar() {
	w.t.Helper()
	w.cmd = exec.Command(w.bin, "-db", w.db, "-name", w.nome, "-key", w.impressao, "-ssh-agent", w.sock, "-listen", "127.0.0.1:"+strconv.Itoa(w.porta))
	saida, err := w.cmd.StderrPipe()
	must(w.t, err == nil, "%v", err)
	must(w.t, w.cmd.Start() == nil, "litewitness start")
	w.terminou = make(chan struct{})
	vkey := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(saida)
		for s.Scan() {
			if _, v, ok := strings.Cut(s.Text(), "vkey="); ok {
				select {
				case vkey <- strings.Trim(strings.Fields(v)[0], `"`):
				default:
				}
			}
		}
	}()
	go func() { _ = w.cmd.Wait(); close(w.terminou) }()
	select {
	case w.vkey = <-vkey:
	case <-w.terminou:
		w.t.Fatalf("litewitness %s exited at start", w.nome)
	case <-time.After(20 * time.Second):
		w.t.Fatalf("litewitness %s printed no verifier key", w.nome)
	}
	for fim := time.Now().Add(10 * time.Second); ; {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(w.porta))
		if err == nil {
			c.Close()
			return
		}
		must(w.t, time.Now().Before(fim), "litewitness %s not listening: %v", w.nome, err)
		time.Sleep(20 * time.Millisecond)
	}
}

// parar kills the witness (its state stays for iniciar).
func (w *litewitness) parar() {
	if w.cmd == nil {
		return
	}
	_ = w.cmd.Process.Kill()
	<-w.terminou
	w.cmd = nil
}

func (w *litewitness) rodar(nome string, args ...string) string {
	w.t.Helper()
	return w.rodarCom(nil, nome, args...)
}

func (w *litewitness) rodarCom(env []string, nome string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command(nome, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	must(w.t, err == nil, "%s %v: %v\n%s", nome, args, err, out)
	return string(out)
}

// chaveDoLog gives the colony a log key of its own, in a file, before it
// starts, so a test knows the signer and verifier keys.
func (c *harness) chaveDoLog() (skey, vkey string) {
	c.t.Helper()
	skey, vkey, err := transparencia.GerarChave(c.cfg.LogOrigin)
	must(c.t, err == nil, "%v", err)
	c.cfg.LogKeyFile = filepath.Join(c.t.TempDir(), "log.key")
	must(c.t, os.WriteFile(c.cfg.LogKeyFile, []byte(skey+"\n"+vkey+"\n"), 0o600) == nil, "write key")
	return skey, vkey
}

// comTestemunhas starts one real witness per name, knowing the colony's
// log key vkey, and configures the colony to submit to them (before
// iniciar); the submitter then looks every 200 ms once started.
func (c *harness) comTestemunhas(vkey string, nomes ...string) []*litewitness {
	c.t.Helper()
	var ws []*litewitness
	var cfg []string
	for _, n := range nomes {
		w := novaTestemunha(c.t, n, c.cfg.LogOrigin, vkey)
		ws = append(ws, w)
		cfg = append(cfg, w.url()+" "+w.vkey)
	}
	c.cfg.LogTestemunhas = strings.Join(cfg, ",")
	return ws
}
