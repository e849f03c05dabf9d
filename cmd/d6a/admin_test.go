package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// pedido is what the fake API received.
type pedido struct {
	metodo, caminho, query, auth string
	corpo                        map[string]any
}

// apiFalsa records each request and answers status with body.
func apiFalsa(t *testing.T, status int, body string) (*httptest.Server, func() []pedido) {
	t.Helper()
	var mu sync.Mutex
	var got []pedido
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		p := pedido{metodo: r.Method, caminho: r.URL.Path, query: r.URL.RawQuery, auth: r.Header.Get("Authorization")}
		if len(b) > 0 {
			if err := json.Unmarshal(b, &p.corpo); err != nil {
				t.Errorf("body %q is not JSON", b)
			}
		}
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []pedido { mu.Lock(); defer mu.Unlock(); return append([]pedido(nil), got...) }
}

// Each subcommand calls its route of CONTRACT §6 with the token and the
// justification, and prints the answer.
func TestAdminChamaAsRotas(t *testing.T) {
	const id = "0f6e6d1a-1111-4c1b-9a6a-000000000001"
	casos := []struct {
		args                   []string
		metodo, caminho, query string
		corpo                  map[string]any
	}{
		{[]string{"ocupados", "--mais-de", "72h"}, "GET", "/d6a/admin/ocupados", "mais_de=72h", nil},
		{[]string{"timeout", "--event-id-sorteio", id, "--justificativa", "sem resposta"}, "POST", "/d6a/admin/atribuicoes/" + id + "/timeout", "", map[string]any{"justificativa": "sem resposta"}},
		{[]string{"fila", "--uc", id}, "GET", "/d6a/admin/fila", "uc=" + id, nil},
		{[]string{"sortear", "--demanda", id, "--justificativa", "j"}, "POST", "/d6a/admin/fila/" + id + "/sortear", "", map[string]any{"justificativa": "j"}},
		{[]string{"inativar", "--conselheiro", id, "--justificativa", "j"}, "POST", "/d6a/admin/conselheiros/" + id + "/inativar", "", map[string]any{"justificativa": "j"}},
		{[]string{"reativar", "--conselheiro", id, "--justificativa", "j"}, "POST", "/d6a/admin/conselheiros/" + id + "/reativar", "", map[string]any{"justificativa": "j"}},
		{[]string{"parametros"}, "GET", "/d6a/admin/parametros", "", nil},
		{[]string{"parametros", "--n-recusas", "4", "--t-suspensao-dias", "60", "--timeout-horas", "96", "--justificativa", "j"}, "POST", "/d6a/admin/parametros", "",
			map[string]any{"n_recusas_suspensao": 4.0, "t_suspensao_dias": 60.0, "timeout_resposta_horas": 96.0, "justificativa": "j"}},
		{[]string{"acoes", "--depois-de", "7", "--limite", "10"}, "GET", "/d6a/admin/acoes", "depois_de=7&limite=10", nil},
	}
	for _, k := range casos {
		srv, pedidos := apiFalsa(t, 200, `{"ok":true}`)
		var out, errb bytes.Buffer
		args := append([]string{"--url", srv.URL + "/", "--token", "tok"}, k.args...)
		if code := rodarAdmin(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", k.args, code, errb.String())
		}
		ps := pedidos()
		if len(ps) != 1 {
			t.Fatalf("%v: %d requests", k.args, len(ps))
		}
		p := ps[0]
		if p.metodo != k.metodo || p.caminho != k.caminho || p.query != k.query || p.auth != "Bearer tok" {
			t.Errorf("%v: %s %s?%s auth %q", k.args, p.metodo, p.caminho, p.query, p.auth)
		}
		if (k.corpo == nil) != (p.corpo == nil) || (k.corpo != nil && !igual(k.corpo, p.corpo)) {
			t.Errorf("%v: body %v, want %v", k.args, p.corpo, k.corpo)
		}
		if !strings.Contains(out.String(), `"ok": true`) {
			t.Errorf("%v: output %q", k.args, out.String())
		}
	}
}

func igual(a, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// An HTTP error exits 1 naming status and {"erro"}; bad flags exit 2
// without a request.
func TestAdminErros(t *testing.T) {
	srv, pedidos := apiFalsa(t, 409, `{"erro":"atribuição não está ativa"}`)
	var out, errb bytes.Buffer
	code := rodarAdmin([]string{"--url", srv.URL, "--token", "t", "timeout", "--event-id-sorteio", "0f6e6d1a-1111-4c1b-9a6a-000000000001", "--justificativa", "x"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "HTTP 409: atribuição não está ativa") {
		t.Errorf("409: exit %d, stderr %q", code, errb.String())
	}
	for _, args := range [][]string{
		{"--url", srv.URL, "--token", "t", "timeout", "--event-id-sorteio", "nao-uuid", "--justificativa", "x"},
		{"--url", srv.URL, "--token", "t", "timeout", "--event-id-sorteio", "0f6e6d1a-1111-4c1b-9a6a-000000000001"},
		{"--url", srv.URL, "--token", "t", "inativar", "--justificativa", "x"},
		{"--url", srv.URL, "--token", "t", "parametros", "--n-recusas", "3", "--justificativa", "x"},
		{"--url", srv.URL, "--token", "t", "desconhecido"},
		{"--url", "ftp://x", "--token", "t", "fila"},
		{"--url", srv.URL, "fila"},
		{"--url", srv.URL, "--token", "t", "fila", "extra"},
	} {
		errb.Reset()
		t.Setenv("D6A_TOKEN", "")
		if code := rodarAdmin(args, &out, &errb); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, errb.String())
		}
	}
	if n := len(pedidos()); n != 1 {
		t.Errorf("%d requests, want only the 409 one", n)
	}
}
