//go:build faults

package faults

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// executarD6a runs `d6a args…` to completion with env (D6A_* only) and
// returns how it ended and everything it wrote.
func executarD6a(t *testing.T, limite time.Duration, env map[string]string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limite)
	defer cancel()
	cmd := exec.CommandContext(ctx, binD6a, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "D6A_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return "timeout", out.String()
	}
	return descreverSaida(err), out.String()
}

func ultimaLinha(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// TestArranque covers start-up under faults: the database or the bus
// unreachable when `d6a serve` starts (the supervisor restarts it until they
// are back, so it must fail cleanly: CONTRACT §1, exit 2 and one line naming
// the variable), and several instances starting at once on a fresh database
// (rolling out two replicas, or a new version with a migration).
func TestArranque(t *testing.T) {
	inicio := time.Now()
	v := novasViolacoes(t)
	fechada := strconv.Itoa(porta(t)) // nothing listens there
	dbURL := novoBanco(t, "arranque")
	srv := novoNATS(t, "arranque")
	base := map[string]string{"D6A_JWT_SECRET": segredo, "D6A_LOG_LEVEL": "warn", "D6A_DATA_DIR": t.TempDir()}
	com := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, val := range base {
			m[k] = val
		}
		for k, val := range extra {
			m[k] = val
		}
		return m
	}
	ocupada, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ocupada.Close()

	casos := []struct {
		nome, variavel string
		env            map[string]string
	}{
		{"database unreachable", "D6A_DATABASE_URL", com(map[string]string{
			"D6A_DATABASE_URL": "postgres://postgres@127.0.0.1:" + fechada + "/x?sslmode=disable&connect_timeout=2",
			"D6A_NATS_URL":     srv.URL(), "D6A_HTTP_ADDR": "127.0.0.1:0"})},
		{"NATS unreachable", "D6A_NATS_URL", com(map[string]string{
			"D6A_DATABASE_URL": dbURL, "D6A_NATS_URL": "nats://127.0.0.1:" + fechada, "D6A_HTTP_ADDR": "127.0.0.1:0"})},
		{"HTTP address in use", "D6A_HTTP_ADDR", com(map[string]string{
			"D6A_DATABASE_URL": dbURL, "D6A_NATS_URL": srv.URL(), "D6A_HTTP_ADDR": ocupada.Addr().String()})},
	}
	for _, c := range casos {
		saida, out := executarD6a(t, 90*time.Second, c.env, "serve")
		ruins := procurarPanicoTexto(out)
		switch {
		case len(ruins) > 0:
			v.add("d6a serve fails cleanly at start (CONTRACT §1: exit 2, one line naming the variable), never with a panic",
				"%s: %s; output: %s", c.nome, saida, strings.Join(ruins, " | "))
		case saida != "exit 2" || !strings.Contains(out, c.variavel):
			v.add("d6a serve fails cleanly at start (CONTRACT §1: exit 2, one line naming the variable), never with a panic",
				"%s: %s, want exit 2 naming %s; last line: %s", c.nome, saida, c.variavel, ultimaLinha(out))
		}
	}

	// Concurrent migrations on fresh databases: every process must succeed.
	const rodadas, processos = 3, 4
	falhas := 0
	for r := 0; r < rodadas; r++ {
		url := novoBanco(t, fmt.Sprintf("arranque_mig%d", r))
		var wg sync.WaitGroup
		var mu sync.Mutex
		for p := 0; p < processos; p++ {
			wg.Go(func() {
				saida, out := executarD6a(t, 2*time.Minute, com(map[string]string{"D6A_DATABASE_URL": url}), "migrate")
				if saida != "exit 0" {
					mu.Lock()
					falhas++
					v.add("concurrent `d6a migrate` on one database all succeed", "round %d process %d: %s: %s", r, p, saida, ultimaLinha(out))
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}

	// Three `d6a serve` started at the same instant on a fresh database and
	// bus: each must come up on its first incarnation (they race on the
	// migrations, the stream and the six durables).
	url := novoBanco(t, "arranque_serve")
	srv2 := novoNATS(t, "arranque2")
	var insts []*instancia
	for i := 0; i < 3; i++ {
		insts = append(insts, novaInstancia(t, fmt.Sprintf("s%d", i), com(map[string]string{"D6A_DATABASE_URL": url, "D6A_NATS_URL": srv2.URL(), "D6A_LOG_LEVEL": "info"})))
	}
	for _, i := range insts {
		if err := i.pronta(90 * time.Second); err != nil {
			v.add("instances started at once all come up", "%v", err)
		}
	}
	reinicios := 0
	for _, i := range insts {
		n, _, s := i.estatisticas()
		if n != 1 {
			reinicios += n - 1
			v.add("instances started at once all come up on their first incarnation", "%s: %d incarnations, exits %v", i.nome, n, s)
		}
		for _, p := range procurarPanico(i.arquivos(), 5) {
			v.add("no d6a process panicked, hit a fatal error or a data race", "%s", p)
		}
		if saida, _ := i.encerrar(30 * time.Second); saida != "exit 0" {
			v.add("d6a serve drains and exits 0 on SIGTERM", "%s: %s", i.nome, saida)
		}
	}

	invs := "ok"
	if v.total() > 0 {
		invs = fmt.Sprintf("BROKEN(%d)", len(v.nomes))
	}
	linha := fmt.Sprintf("faults-start: unreachable_at_start=%d concurrent_migrate=%d×%d failed=%d concurrent_serve=%d restarts=%d invariants=%s (%s)",
		len(casos), rodadas, processos, falhas, len(insts), reinicios, invs, time.Since(inicio).Round(time.Second))
	t.Log(linha)
	fmt.Println(linha)
	v.relatar()
}

// procurarPanicoTexto returns the lines of out that show a crash.
func procurarPanicoTexto(out string) []string {
	var achados []string
	for _, l := range strings.Split(out, "\n") {
		for _, r := range sinaisRuins {
			if strings.Contains(l, r) {
				achados = append(achados, strings.TrimSpace(l))
				break
			}
		}
	}
	if len(achados) > 4 {
		achados = achados[:4]
	}
	return achados
}
