package colonia_test

// Helpers of the administration tests (issue 13): requests to the running
// colony's console, signed operator tokens.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
)

// resp is an HTTP answer of the colony.
type resp struct {
	status int
	body   []byte
}

func (r resp) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("answer %d is not a JSON object: %s", r.status, r.body)
	}
	return m
}

// tokenDe signs a session token at the colony's clock with claims added.
func (c *harness) tokenDe(sub string, extra map[string]any) string {
	c.t.Helper()
	agora := c.agora()
	claims := jwt.MapClaims{"sub": sub, "iat": agora.Unix(), "exp": agora.Add(time.Hour).Unix()}
	for k, v := range extra {
		claims[k] = v
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(c.cfg.JWTSecret))
	if err != nil {
		c.t.Fatal(err)
	}
	return tok
}

// tokenAdmin is an operator's token.
func (c *harness) tokenAdmin() string {
	return c.tokenDe("operador-1", map[string]any{"papel": "admin"})
}

// http sends a request with token (none when empty) and body (none when
// nil; a string is sent as is, anything else as JSON).
func (c *harness) http(method, path, token string, body any) resp {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://"+c.w.Addr.String()+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, body: data}
}

// admin is c.http with the operator's token.
func (c *harness) admin(method, path string, body any) resp {
	c.t.Helper()
	return c.http(method, "/d6a/admin/"+path, c.tokenAdmin(), body)
}

// esperarStatus fails unless r has the status; error answers must carry
// {"erro"}.
func esperarStatus(t *testing.T, r resp, status int, what string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: status %d, want %d: %s", what, r.status, status, r.body)
	}
	if status >= 400 {
		if e, _ := r.obj(t)["erro"].(string); e == "" {
			t.Fatalf("%s: %d without {\"erro\"}: %s", what, status, r.body)
		}
	}
}

// corpoGrande POSTs a JSON body of n bytes over a raw connection and reads
// the answer: the server may refuse it from the Content-Length and close
// before the body is sent, which net/http's client reports as a write
// error instead of the answer.
func (c *harness) corpoGrande(path string, n int) resp {
	c.t.Helper()
	conn, err := net.DialTimeout("tcp", c.w.Addr.String(), 5*time.Second)
	if err != nil {
		c.t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: d6a\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		path, c.tokenAdmin(), n)
	go func() { // the body, for a server that reads it before answering
		corpo := `{"justificativa": "` + strings.Repeat("a", n-21) + `"}`
		_, _ = io.WriteString(conn, corpo)
	}()
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		c.t.Fatalf("answer to a %d-byte body: %v", n, err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, body: data}
}

func justificativa(s string) map[string]any { return map[string]any{"justificativa": s} }

// admTabelas are the tables bad input must leave untouched.
var admTabelas = append(append([]string{}, h3tabelas...), "config", "acoes_administrativas", "suspensoes", "atribuicoes_iniciadas")

// admHashes is h3hashes over admTabelas.
func admHashes(c *harness) map[string]string {
	c.t.Helper()
	out := make(map[string]string, len(admTabelas))
	for _, tb := range admTabelas {
		out[tb] = h3linha(c, `SELECT coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '-') || ' rows=' || count(*) FROM d6a.`+tb+` t`)
	}
	return out
}

func uuidDe(t *testing.T, v any) uuid.UUID {
	t.Helper()
	s, _ := v.(string)
	id, err := uuid.Parse(s)
	if err != nil {
		t.Fatalf("%v is not a UUID", v)
	}
	return id
}
