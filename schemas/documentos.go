package schemas

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// The machine-readable interfaces (CONTRACT §9), written in YAML and served
// as JSON.
var (
	//go:embed openapi.yaml
	openapiYAML []byte
	//go:embed asyncapi.yaml
	asyncapiYAML []byte
)

// OpenAPIJSON returns schemas/openapi.yaml, the OpenAPI 3.1 document of
// every HTTP route, as JSON (GET /d6a/openapi.json).
func OpenAPIJSON() ([]byte, error) { return openapiJSON() }

// AsyncAPIJSON returns schemas/asyncapi.yaml, the AsyncAPI 3.0 document of
// the bus interface, as JSON (GET /d6a/asyncapi.json). Each reference to a
// file of this package ("./conselheiro.sorteado.json") is bundled: the file
// becomes components.schemas["conselheiro.sorteado"], less its $schema and
// $id, with its own "#/$defs/…" references rewritten to point inside it, and
// the reference points there. So the published envelopes have one source,
// the files the service validates against before publishing.
func AsyncAPIJSON() ([]byte, error) { return asyncapiJSON() }

var openapiJSON = sync.OnceValues(func() ([]byte, error) {
	doc, err := yamlParaJSON(openapiYAML)
	if err != nil {
		return nil, fmt.Errorf("schemas: openapi.yaml: %w", err)
	}
	return json.Marshal(doc)
})

var asyncapiJSON = sync.OnceValues(func() ([]byte, error) {
	doc, err := yamlParaJSON(asyncapiYAML)
	if err != nil {
		return nil, fmt.Errorf("schemas: asyncapi.yaml: %w", err)
	}
	raiz, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schemas: asyncapi.yaml is not an object")
	}
	componentes, _ := raiz["components"].(map[string]any)
	if componentes == nil {
		componentes = map[string]any{}
		raiz["components"] = componentes
	}
	esquemas, _ := componentes["schemas"].(map[string]any)
	if esquemas == nil {
		esquemas = map[string]any{}
		componentes["schemas"] = esquemas
	}
	b := empacotador{esquemas: esquemas}
	novo, err := b.visitar(raiz)
	if err != nil {
		return nil, fmt.Errorf("schemas: asyncapi.yaml: %w", err)
	}
	return json.Marshal(novo)
})

// empacotador bundles the file references of a document into its
// components.schemas.
type empacotador struct {
	esquemas map[string]any
}

func (b *empacotador) visitar(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok && strings.HasPrefix(ref, "./") {
			if len(x) != 1 {
				return nil, fmt.Errorf("$ref %q has siblings", ref)
			}
			nome, err := b.incluir(strings.TrimPrefix(ref, "./"))
			if err != nil {
				return nil, err
			}
			return map[string]any{"$ref": "#/components/schemas/" + nome}, nil
		}
		chaves := make([]string, 0, len(x))
		for k := range x {
			chaves = append(chaves, k)
		}
		sort.Strings(chaves)
		for _, k := range chaves {
			n, err := b.visitar(x[k])
			if err != nil {
				return nil, err
			}
			x[k] = n
		}
		return x, nil
	case []any:
		for i := range x {
			n, err := b.visitar(x[i])
			if err != nil {
				return nil, err
			}
			x[i] = n
		}
		return x, nil
	}
	return v, nil
}

// incluir adds the embedded schema file arquivo to components.schemas, once,
// and returns its component name.
func (b *empacotador) incluir(arquivo string) (string, error) {
	nome, ok := strings.CutSuffix(arquivo, ".json")
	if !ok || strings.ContainsAny(nome, "/\\") {
		return "", fmt.Errorf("$ref %q is not a schema file of this package", "./"+arquivo)
	}
	if _, feito := b.esquemas[nome]; feito {
		return nome, nil
	}
	data, err := files.ReadFile(arquivo)
	if err != nil {
		return "", fmt.Errorf("$ref %q: %w", "./"+arquivo, err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		return "", fmt.Errorf("%s: %w", arquivo, err)
	}
	delete(s, "$schema")
	delete(s, "$id")
	reescreverRefs(s, "#/components/schemas/"+nome)
	b.esquemas[nome] = s
	return nome, nil
}

// reescreverRefs points a schema's document-local references ("#/…") at
// the place the schema now has in the bundle.
func reescreverRefs(v any, base string) {
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok && strings.HasPrefix(ref, "#") {
			x["$ref"] = base + strings.TrimPrefix(ref, "#")
		}
		for _, e := range x {
			reescreverRefs(e, base)
		}
	case []any:
		for _, e := range x {
			reescreverRefs(e, base)
		}
	}
}

// yamlParaJSON decodes a YAML document into values encoding/json writes:
// mappings with string keys only.
func yamlParaJSON(data []byte) (any, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return paraJSON(v)
}

func paraJSON(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			n, err := paraJSON(e)
			if err != nil {
				return nil, err
			}
			x[k] = n
		}
		return x, nil
	case map[any]any:
		return nil, fmt.Errorf("a mapping key that is not a string: %v", x)
	case []any:
		for i, e := range x {
			n, err := paraJSON(e)
			if err != nil {
				return nil, err
			}
			x[i] = n
		}
		return x, nil
	}
	return v, nil
}
