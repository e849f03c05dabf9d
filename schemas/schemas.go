// Package schemas holds the JSON Schemas (draft 2020-12) of the events D-6a
// publishes and validates outgoing envelopes against them, so that nothing
// leaves the service in a shape its consumers were not promised.
package schemas

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Event types (tipo) with a schema in this package.
const (
	// TipoConselheiroSorteado is the event of a successful draw (spec 3.7).
	TipoConselheiroSorteado = "conselheiro.sorteado"
	// TipoSorteioSemCandidatos is the event of a draw with no eligible
	// counsellor (spec 3.8).
	TipoSorteioSemCandidatos = "sorteio.sem_candidatos"
	// TipoAtribuicaoRecusada is the response-timeout refusal D-6a publishes
	// (CONTRACT §3, spec 3.4 v1.0.0 with motivo timeout_resposta).
	TipoAtribuicaoRecusada = "conselheiro.atribuicao_recusada"
	// TipoSuspensaoExpirada is published when a suspension ends (spec 8.2).
	TipoSuspensaoExpirada = "conselheiro.suspensao_expirada"
	// TipoVarredura is a sweep D-6a decided on its own, consumed back
	// (CONTRACT §4).
	TipoVarredura = "d6a.varredura"
)

// Consumed phase-2 inputs with a schema here (CONTRACT §8), named by their
// ASCII type (the file name): what D-6a accepts, the decoder's rules
// (internal/evento) written for producers. Fields beyond these are allowed.
const (
	TipoCapacitacaoConcluida    = "capacitacao.concluida"
	TipoVinculoValidado         = "vinculo.validado"
	TipoProgressaoHabilitada    = "progressao.habilitada"
	TipoElegibilidadeAtualizada = "conselheiro.elegibilidade_atualizada"
)

//go:embed *.json
var files embed.FS

// baseURL prefixes every schema's $id; each file must declare
// baseURL + its file name so that compilation resolves to the embedded copy.
const baseURL = "https://github.com/formigueiro/d6a/schemas/"

// compiled compiles every embedded schema once, on first use; the schemas
// are constant, so a failure here is a build defect that the package tests
// catch.
var compiled = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	tipos := []string{TipoConselheiroSorteado, TipoSorteioSemCandidatos, TipoAtribuicaoRecusada, TipoSuspensaoExpirada, TipoVarredura,
		TipoCapacitacaoConcluida, TipoVinculoValidado, TipoProgressaoHabilitada, TipoElegibilidadeAtualizada}
	for _, tipo := range tipos {
		data, err := files.ReadFile(tipo + ".json")
		if err != nil {
			return nil, fmt.Errorf("schemas: %w", err)
		}
		if err := c.AddResource(baseURL+tipo+".json", bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("schemas: loading %s: %w", tipo, err)
		}
	}
	out := make(map[string]*jsonschema.Schema, len(tipos))
	for _, tipo := range tipos {
		s, err := c.Compile(baseURL + tipo + ".json")
		if err != nil {
			return nil, fmt.Errorf("schemas: compiling %s: %w", tipo, err)
		}
		out[tipo] = s
	}
	return out, nil
})

// Validar checks that envelope, a complete published event, is valid JSON
// that conforms to the schema of tipo, one of [TipoConselheiroSorteado],
// [TipoSorteioSemCandidatos], [TipoAtribuicaoRecusada] and
// [TipoSuspensaoExpirada]. It returns an error for an unknown tipo, for
// malformed JSON and for every schema violation; violations are reported on
// one line, each as the JSON pointer of the offending value and the
// validator's message, separated by "; ".
func Validar(tipo string, envelope []byte) error {
	all, err := compiled()
	if err != nil {
		return err
	}
	s, ok := all[tipo]
	if !ok {
		return fmt.Errorf("schemas: unknown tipo %q", tipo)
	}
	dec := json.NewDecoder(bytes.NewReader(envelope))
	// Numbers stay json.Number so that integer checks see the exact text,
	// not a float64 approximation.
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("schemas: %s: invalid JSON: %w", tipo, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("schemas: %s: invalid JSON: data after the top-level value", tipo)
	}
	if err := s.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return fmt.Errorf("schemas: %s: %s", tipo, resumir(ve))
		}
		return fmt.Errorf("schemas: %s: %w", tipo, err)
	}
	return nil
}

// resumir flattens a validation error tree into one line made of its leaf
// causes, which are the messages that name a concrete problem.
func resumir(ve *jsonschema.ValidationError) string {
	var leaves []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := e.InstanceLocation
			if loc == "" {
				loc = "/"
			}
			leaves = append(leaves, loc+": "+strings.ReplaceAll(e.Message, "\n", " "))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(leaves)
	return strings.Join(leaves, "; ")
}
