package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// d6aBin builds the real binary into the test's temporary directory.
func d6aBin(t testing.TB) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build d6a: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "d6a")
	if out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building d6a: %v\n%s", err, out)
	}
	return bin
}

// rodar runs d6a with args and an environment without any D6A_ variable.
func rodar(t *testing.T, bin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "D6A_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatal(err)
	}
	return code, o.String(), e.String()
}

type vetor struct {
	Note        string   `json:"note"`
	Base        string   `json:"base"`
	Timestamp   string   `json:"timestamp"`
	Randomness  string   `json:"randomness"`
	Entrada     []string `json:"elegiveis_entrada"`
	Seed        string   `json:"seed"`
	Ordenados   []string `json:"ordenados"`
	Selecionado string   `json:"selecionado"`
	ListaHash   string   `json:"lista_elegiveis_hash"`
}

func vetores(t *testing.T) []vetor {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []vetor `json:"cases"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) == 0 {
		t.Fatal("no cases in testdata/vectors.json")
	}
	return f.Cases
}

// arquivo writes a --json file for v, with the eligible ids reversed (any
// order is accepted) and every claim; mudar may alter the claims.
func arquivo(t *testing.T, v vetor, mudar func(map[string]any)) string {
	t.Helper()
	elegiveis := slices.Clone(v.Entrada)
	slices.Reverse(elegiveis)
	m := map[string]any{
		"base": v.Base, "timestamp": v.Timestamp, "elegiveis": elegiveis,
		"seed": v.Seed, "ordenados": v.Ordenados, "selecionado": v.Selecionado, "lista_elegiveis_hash": v.ListaHash,
	}
	if v.Randomness != "" {
		m["randomness"] = v.Randomness // CONTRACT §4a's vectors
	}
	if mudar != nil {
		mudar(m)
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "sorteio.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestVerify runs the real binary (built once) on the published vectors and
// on broken invocations: exit 0 when the claims hold, 1 naming the first
// claim that differs, 2 for anything unusable.
func TestVerify(t *testing.T) {
	bin := d6aBin(t)
	t.Run("json_vetores_ok", func(t *testing.T) { verifyJSONVetoresOK(t, bin) })
	t.Run("json_divergencias", func(t *testing.T) { verifyJSONDivergencias(t, bin) })
	t.Run("uso", func(t *testing.T) { verifyUso(t, bin) })
}

func verifyJSONVetoresOK(t *testing.T, bin string) {
	for _, v := range vetores(t) {
		t.Run(v.Note, func(t *testing.T) {
			code, out, errOut := rodar(t, bin, "verify", "--json", arquivo(t, v, nil))
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			var got vetor
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("stdout is not the computed JSON: %v\n%s", err, out)
			}
			if got.Seed != v.Seed || got.Selecionado != v.Selecionado || got.ListaHash != v.ListaHash ||
				!slices.Equal(got.Ordenados, v.Ordenados) || !slices.Equal(got.Entrada, v.Entrada) {
				t.Errorf("computed %+v, want %+v", got, v)
			}
		})
	}
}

func verifyJSONDivergencias(t *testing.T, bin string) {
	var v vetor
	for _, c := range vetores(t) {
		if len(c.Ordenados) > 1 {
			v = c
			break
		}
	}
	casos := []struct {
		nome  string
		campo string
		mudar func(map[string]any)
	}{
		{"selecionado", "selecionado", func(m map[string]any) { m["selecionado"] = v.Ordenados[1] }},
		{"seed", "seed", func(m map[string]any) { m["seed"] = strings.Repeat("0", 64) }},
		{"hash", "lista_elegiveis_hash", func(m map[string]any) { m["lista_elegiveis_hash"] = strings.Repeat("f", 64) }},
		{"ordenados", "ordenados[0]", func(m map[string]any) {
			o := slices.Clone(v.Ordenados)
			o[0], o[1] = o[1], o[0]
			m["ordenados"] = o
		}},
	}
	for _, c := range casos {
		t.Run(c.nome, func(t *testing.T) {
			code, out, errOut := rodar(t, bin, "verify", "--json", arquivo(t, v, c.mudar))
			if code != 1 {
				t.Fatalf("exit %d, want 1 (stderr %q)", code, errOut)
			}
			if !strings.Contains(errOut, "mismatch: "+c.campo+":") {
				t.Errorf("stderr %q does not name %s", errOut, c.campo)
			}
			// The correct values are still printed next to the error.
			var got vetor
			if err := json.Unmarshal([]byte(out), &got); err != nil || got.Selecionado != v.Selecionado {
				t.Errorf("stdout %q lacks the computed draw (%v)", out, err)
			}
		})
	}
}

func verifyUso(t *testing.T, bin string) {
	dir := t.TempDir()
	lixo := filepath.Join(dir, "lixo.json")
	if err := os.WriteFile(lixo, []byte("isto não é JSON\x00\xff"), 0o644); err != nil {
		t.Fatal(err)
	}
	incompleto := filepath.Join(dir, "incompleto.json")
	if err := os.WriteFile(incompleto, []byte(`{"base":"b","elegiveis":["a"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	casos := []struct {
		nome    string
		args    []string
		contido string
	}{
		{"lixo", []string{"verify", "--json", lixo}, "lixo.json"},
		{"sem_timestamp", []string{"verify", "--json", incompleto}, "timestamp"},
		{"arquivo_inexistente", []string{"verify", "--json", filepath.Join(dir, "nada.json")}, "nada.json"},
		{"sem_flags", []string{"verify"}, "exactly one of"},
		{"duas_flags", []string{"verify", "--json", lixo, "--event-id", "8d3c2a51-6b0e-4a44-9d0b-6f2a1f3e9c10"}, "exactly one of"},
		{"flag_desconhecida", []string{"verify", "--jsn", lixo}, "jsn"},
		{"argumento_sobrando", []string{"verify", "--json", lixo, "extra"}, "extra"},
		{"event_id_invalido", []string{"verify", "--event-id", "nao-e-uuid"}, "not a UUID"},
		{"sem_banco", []string{"verify", "--event-id", "8d3c2a51-6b0e-4a44-9d0b-6f2a1f3e9c10"}, "D6A_DATABASE_URL"},
	}
	for _, c := range casos {
		t.Run(c.nome, func(t *testing.T) {
			code, out, errOut := rodar(t, bin, c.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2 (stdout %q, stderr %q)", code, out, errOut)
			}
			if !strings.Contains(errOut, c.contido) {
				t.Errorf("stderr %q does not mention %q", errOut, c.contido)
			}
		})
	}
}
