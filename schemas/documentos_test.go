package schemas_test

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/formigueiro/d6a/internal/apispec"
	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/schemas"
)

// The served AsyncAPI document is valid against the AsyncAPI 3.0.0 JSON
// Schema (testdata/asyncapi-3.0.0.json, from @asyncapi/specs).
func TestAsyncAPIValidoNoEsquemaOficial(t *testing.T) {
	meta, err := os.ReadFile("testdata/asyncapi-3.0.0.json")
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const url = "http://asyncapi.com/definitions/3.0.0/asyncapi.json"
	if err := c.AddResource(url, bytes.NewReader(meta)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("compiling the AsyncAPI 3.0.0 schema: %v", err)
	}
	doc, err := schemas.AsyncAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Fatalf("asyncapi.yaml is not a valid AsyncAPI 3.0.0 document: %#v", err)
	}
	// The check can fail: a channel without its address is refused.
	ruim := jsonClone(t, v)
	delete(ruim["channels"].(map[string]any)["conselheiroSorteado"].(map[string]any), "address")
	ruim["channels"].(map[string]any)["conselheiroSorteado"].(map[string]any)["endereco"] = "x"
	if err := s.Validate(ruim); err == nil {
		t.Fatal("a channel with an unknown field validated: the check cannot fail")
	}
}

func jsonClone(t *testing.T, v any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(v)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// The published payloads have one source: every published type's message
// is its schemas/*.json file, bundled byte for byte less $schema and $id,
// and no reference to a file is left in the served document.
func TestAsyncAPIPublicadosVemDeSchemas(t *testing.T) {
	doc, err := schemas.AsyncAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(doc, []byte(`"./`)) {
		t.Fatal("the served AsyncAPI document still refers to a file")
	}
	var raw struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &raw); err != nil {
		t.Fatal(err)
	}
	for _, tipo := range evento.Publicados {
		arquivo, err := os.ReadFile(string(tipo) + ".json")
		if err != nil {
			t.Fatalf("%s: %v", tipo, err)
		}
		var want map[string]any
		if err := json.Unmarshal(arquivo, &want); err != nil {
			t.Fatal(err)
		}
		delete(want, "$schema")
		delete(want, "$id")
		var got map[string]any
		if err := json.Unmarshal(raw.Components.Schemas[string(tipo)], &got); err != nil {
			t.Fatalf("components.schemas[%q] missing from the served AsyncAPI document: %v", tipo, err)
		}
		// Refs are rewritten to the bundle; compare with them put back.
		if a, b := semRefs(t, want), semRefs(t, got); a != b {
			t.Errorf("components.schemas[%q] differs from %s.json:\n got %s\nwant %s", tipo, tipo, b, a)
		}
	}
}

func semRefs(t *testing.T, v map[string]any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, tipo := range evento.Publicados {
		s = strings.ReplaceAll(s, `"#/components/schemas/`+string(tipo)+`/`, `"#/`)
	}
	return s
}

// Every subject the code consumes or publishes is a channel, and every
// channel is one the code uses: receive operations on exactly the consumed
// subjects (evento.Consumidos), send operations on exactly the published
// ones (evento.Publicados) and the dead letters (evento.PrefixoDLQ).
func TestAsyncAPICanaisSaoOsDoCodigo(t *testing.T) {
	cfg, err := config.Parse(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	a, err := apispec.LoadAsyncAPI()
	if err != nil {
		t.Fatal(err)
	}
	var recebe, envia, enderecos []string
	for _, c := range a.Channels {
		enderecos = append(enderecos, c.Address)
		if len(c.Receive) > 0 {
			recebe = append(recebe, c.Address)
		}
		if len(c.Send) > 0 {
			envia = append(envia, c.Address)
		}
	}
	var consumidos, publicados []string
	for _, tipo := range evento.Consumidos {
		consumidos = append(consumidos, tipo.Subject(cfg.SubjectPrefix))
	}
	for _, tipo := range evento.Publicados {
		publicados = append(publicados, tipo.Subject(cfg.SubjectPrefix))
	}
	publicados = append(publicados, evento.PrefixoDLQ+".{tipo}")
	usados := uniq(append(slices.Clone(consumidos), publicados...))

	iguais(t, "channel addresses", "subjects the code consumes or publishes", uniq(enderecos), usados)
	iguais(t, "channels with a receive operation", "consumed subjects (evento.Consumidos)", uniq(recebe), uniq(consumidos))
	iguais(t, "channels with a send operation", "published subjects (evento.Publicados and the DLQ)", uniq(envia), uniq(publicados))
	if len(enderecos) != len(uniq(enderecos)) {
		t.Errorf("two channels share an address: %v", enderecos)
	}

	// The JetStream facts in the x-d6a-jetstream extensions are the code's.
	x := a.Raw["components"].(map[string]any)["x-d6a"].(map[string]any)
	consumo, publicacao := x["consumo"].(map[string]any), x["publicacao"].(map[string]any)
	dlq := consumo["deadLetter"].(map[string]any)
	for _, c := range []struct{ campo, got, want string }{
		{"consumo.stream", consumo["stream"].(string), cfg.Stream},
		{"consumo.durable", consumo["durable"].(string), evento.DurableEntradas},
		{"publicacao.stream", publicacao["stream"].(string), cfg.Stream},
		{"consumo.deadLetter.stream", dlq["stream"].(string), bus.DLQStream},
	} {
		if c.got != c.want {
			t.Errorf("x-d6a.%s = %q, the code uses %q", c.campo, c.got, c.want)
		}
	}
	cabecalhos := func(m map[string]any) []string {
		var out []string
		for k := range m["headers"].(map[string]any) {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	iguais(t, "x-d6a.publicacao.headers", "the publishing headers", cabecalhos(publicacao), uniq([]string{"Nats-Msg-Id", bus.HeaderEntradaSeq}))
	iguais(t, "x-d6a.consumo.deadLetter.headers", "the DLQ headers", cabecalhos(dlq), uniq([]string{bus.HeaderErro, bus.HeaderSubjectOriginal, bus.HeaderSeqOriginal}))
	servidor := a.Raw["servers"].(map[string]any)["nats"].(map[string]any)["x-d6a-jetstream"].(map[string]any)
	if servidor["stream"] != cfg.Stream || servidor["subjects"] != cfg.SubjectPrefix+".>" {
		t.Errorf("servers.nats.x-d6a-jetstream = %v, the code uses stream %s on %s.>", servidor, cfg.Stream, cfg.SubjectPrefix)
	}
}

func uniq(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return slices.Compact(s)
}

func iguais(t *testing.T, oque, doCodigo string, doc, codigo []string) {
	t.Helper()
	for _, s := range doc {
		if !slices.Contains(codigo, s) {
			t.Errorf("asyncapi.yaml: %s include %q, which is not among the %s", oque, s, doCodigo)
		}
	}
	for _, s := range codigo {
		if !slices.Contains(doc, s) {
			t.Errorf("asyncapi.yaml: %s lack %q, one of the %s", oque, s, doCodigo)
		}
	}
}

// The validator the integration tests use rejects an envelope that its
// schema rejects, and accepts one the service would publish.
func TestAsyncAPIValidaPublicado(t *testing.T) {
	env := map[string]any{
		"event_id": "6f1c3a2e-9b4d-4e8a-a1f0-2c3d4e5f6a7b", "tipo": "conselheiro.suspensao_expirada",
		"origem": "D-6a", "versao_schema": "1.0.0", "correlacao_id": nil, "timestamp": "2026-08-11T19:17:28.042Z",
		"payload": map[string]any{
			"conselheiro_id": "f0000001-0000-4000-8000-0000000000a3", "data_suspensao_ate": "2026-08-11T19:17:28.000Z",
			"timestamp": "2026-08-11T19:17:28.042Z",
		},
	}
	b, _ := json.Marshal(env)
	if err := schemas.Validar(schemas.TipoSuspensaoExpirada, b); err != nil {
		t.Fatalf("the sample is not what the service publishes: %v", err)
	}
	subject := evento.SuspensaoExpirada.Subject("eventos")
	if err := apispec.CheckPublished(subject, b); err != nil {
		t.Fatalf("a valid envelope was refused: %v", err)
	}
	delete(env["payload"].(map[string]any), "conselheiro_id")
	b, _ = json.Marshal(env)
	if err := apispec.CheckPublished(subject, b); err == nil {
		t.Fatal("an envelope without payload.conselheiro_id was accepted")
	}
	if err := apispec.CheckPublished("eventos.agenda.item_disponivel", b); err == nil {
		t.Fatal("a consumed-only subject was accepted as published")
	}
	if err := apispec.CheckPublishedHeaders(subject, map[string]string{"Nats-Msg-Id": "x", bus.HeaderEntradaSeq: "12"}); err != nil {
		t.Fatalf("valid headers refused: %v", err)
	}
	if err := apispec.CheckPublishedHeaders(subject, map[string]string{bus.HeaderEntradaSeq: "12"}); err == nil {
		t.Fatal("headers without Nats-Msg-Id accepted")
	}
	if err := apispec.CheckPublishedHeaders(subject, map[string]string{"Nats-Msg-Id": "x", bus.HeaderEntradaSeq: "doze"}); err == nil {
		t.Fatal("a D6a-Entrada-Seq that is not a number accepted")
	}
}
