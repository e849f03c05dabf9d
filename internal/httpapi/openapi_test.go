package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/formigueiro/d6a/internal/apispec"
	"github.com/formigueiro/d6a/schemas"
)

var parametroFiber = regexp.MustCompile(`:([A-Za-z0-9_]+)`)

// rotasServidas lists every route the app registers with every option on
// (the console included), as OpenAPI operations: fiber's ":id" written
// "{id}". HEAD is left out: fiber adds it to every GET, and the document
// says so once (apispec.CheckHTTP checks HEAD as its GET).
func rotasServidas(t *testing.T) []apispec.Operation {
	t.Helper()
	s := novoServidor(t, func(o *Options) {
		o.Admin = &administracaoFalsa{}
		o.Config.Admin = true
	})
	var out []apispec.Operation
	gets := map[string]bool{}
	heads := map[string]bool{}
	for _, r := range s.app.GetRoutes(true) {
		op := apispec.Operation{Method: r.Method, Path: parametroFiber.ReplaceAllString(r.Path, "{$1}")}
		if prefixo, ok := strings.CutSuffix(op.Path, "/*"); ok {
			// A wildcard (the C2SP tiles) is described as one path per
			// number of segments it takes: 2 to 6.
			for k := 2; k <= 6; k++ {
				p := prefixo
				for i := 1; i <= k; i++ {
					p += fmt.Sprintf("/{s%d}", i)
				}
				if r.Method == http.MethodHead {
					heads[p] = true
				} else if !slices.Contains(out, apispec.Operation{Method: r.Method, Path: p}) {
					gets[p] = true
					out = append(out, apispec.Operation{Method: r.Method, Path: p})
				}
			}
			continue
		}
		switch r.Method {
		case http.MethodHead:
			heads[op.Path] = true
			continue
		case http.MethodGet:
			gets[op.Path] = true
		}
		if !slices.Contains(out, op) {
			out = append(out, op)
		}
	}
	for p := range heads {
		if !gets[p] {
			t.Errorf("HEAD %s is served without its GET, which openapi.yaml cannot say", p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Every route fiber serves is in schemas/openapi.yaml, and every route the
// document describes is served (CONTRACT §9).
func TestOpenAPIDescreveTodaRotaServida(t *testing.T) {
	t.Parallel()
	servidas := rotasServidas(t)
	descritas, err := apispec.Operations()
	if err != nil {
		t.Fatal(err)
	}
	if len(servidas) < 20 {
		t.Fatalf("only %d routes found: %v", len(servidas), servidas)
	}
	for _, r := range servidas {
		if !slices.Contains(descritas, r) {
			t.Errorf("route %s is served but schemas/openapi.yaml does not describe it", r)
		}
	}
	for _, r := range descritas {
		if !slices.Contains(servidas, r) {
			t.Errorf("route %s is described in schemas/openapi.yaml but not served", r)
		}
	}
}

// Both documents are served, as the JSON of the repository's files.
func TestDocumentosServidos(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, nil)
	for _, c := range []struct {
		rota  string
		ler   func() ([]byte, error)
		campo string
	}{
		{RotaOpenAPI, schemas.OpenAPIJSON, "openapi"},
		{RotaAsyncAPI, schemas.AsyncAPIJSON, "asyncapi"},
	} {
		r := s.get(t, c.rota)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", c.rota, r.status, r.body)
		}
		want, err := c.ler()
		if err != nil {
			t.Fatal(err)
		}
		if string(r.body) != string(want) {
			t.Errorf("GET %s is not the embedded document", c.rota)
		}
		var doc map[string]any
		if err := json.Unmarshal(r.body, &doc); err != nil {
			t.Fatalf("GET %s: %v", c.rota, err)
		}
		if v, _ := doc[c.campo].(string); v == "" {
			t.Errorf("GET %s: no %q version field", c.rota, c.campo)
		}
	}
	if doc, err := apispec.OpenAPI(); err != nil || doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi.yaml: version %v, %v; want a valid 3.1.0 document", doc, err)
	}
}

// The exchange check fails when an answer drifts from the document: an
// undocumented status, a body of another shape, an unknown route answered.
func TestOpenAPIVerificacaoPodeFalhar(t *testing.T) {
	t.Parallel()
	req, _ := http.NewRequest(http.MethodGet, "http://d6a"+RotaHealthz, nil)
	json := http.Header{"Content-Type": {"application/json"}}
	if err := apispec.CheckHTTP(req, nil, 200, json, []byte(`{"status":"ok"}`)); err != nil {
		t.Fatalf("the real answer was refused: %v", err)
	}
	if err := apispec.CheckHTTP(req, nil, 200, json, []byte(`{"status":"ok","mais":1}`)); err == nil {
		t.Error("a body with an undocumented field was accepted")
	}
	if err := apispec.CheckHTTP(req, nil, 418, json, []byte(`{"erro":"x"}`)); err == nil {
		t.Error("an undocumented status was accepted")
	}
	req, _ = http.NewRequest(http.MethodGet, "http://d6a/d6a/nada", nil)
	if err := apispec.CheckHTTP(req, nil, 200, json, []byte(`{}`)); err == nil {
		t.Error("an undocumented route answered 200 was accepted")
	}
	req, _ = http.NewRequest(http.MethodGet, "http://d6a/d6a/transparencia/sorteios/nao-uuid", nil)
	if err := apispec.CheckHTTP(req, nil, 200, json, []byte(`{}`)); err == nil {
		t.Error("an answer of the wrong shape was accepted")
	}
}
