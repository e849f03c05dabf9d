package colonia_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `d6a admin` (CONTRACT §1) against a running colony: the built binary,
// the real routes, the operator's token.
func TestAdminCLI_ContraAColonia(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the d6a binary")
	}
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "d6a")
	if out, err := exec.Command(goBin, "build", "-o", bin, "github.com/formigueiro/d6a/cmd/d6a").CombinedOutput(); err != nil {
		t.Fatalf("building d6a: %v\n%s", err, out)
	}
	c, bairro := coloniaNoBairro(t)
	a := c.novoConselheiro(bairro)
	rodar := func(args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"admin", "--url", "http://" + c.w.Addr.String(), "--token", c.tokenAdmin()}, args...)...)
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "D6A_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), o.String(), e.String()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, o.String(), e.String()
	}

	code, out, errs := rodar("parametros")
	must(t, code == 0 && strings.Contains(out, `"versao": 1`), "parametros: exit %d\n%s%s", code, out, errs)
	code, out, errs = rodar("inativar", "--conselheiro", a.String(), "--justificativa", "afastamento")
	must(t, code == 0 && strings.Contains(out, `"status": "inativo"`), "inativar: exit %d\n%s%s", code, out, errs)
	must(t, c.statusConselheiro(a) == "inativo", "status %s", c.statusConselheiro(a))
	code, _, errs = rodar("inativar", "--conselheiro", a.String(), "--justificativa", "de novo")
	must(t, code == 1 && strings.Contains(errs, "HTTP 409"), "second inativar: exit %d %s", code, errs)
	code, out, _ = rodar("acoes")
	must(t, code == 0 && strings.Contains(out, `"acao": "inativar"`) && strings.Contains(out, `"sub": "operador-1"`), "acoes: %s", out)
}
