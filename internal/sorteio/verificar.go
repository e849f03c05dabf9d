package sorteio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Alegacao is the file read by d6a verify --json (CONTRACT §1): the public
// inputs of a draw and, optionally, the outcome someone claims it had.
// The claimed fields are pointers or nil-able slices so that an absent claim
// (not checked) differs from a claimed empty value (checked, and wrong).
type Alegacao struct {
	// Base is the base of the seed: the id of the last bus event, or the
	// fallback UUID.
	Base string `json:"base"`
	// Timestamp is the draw time T, exactly as published.
	Timestamp string `json:"timestamp"`
	// Elegiveis are the eligible counsellor ids, in any order and case.
	Elegiveis []string `json:"elegiveis"`
	// Randomness is the beacon round's value (CONTRACT §4a), when the draw
	// was made under the beacon rule.
	Randomness string `json:"randomness,omitempty"`

	// Seed is the claimed seed, if any.
	Seed *string `json:"seed,omitempty"`
	// Ordenados is the claimed shuffled list, if any.
	Ordenados []string `json:"ordenados,omitempty"`
	// Selecionado is the claimed winner, if any.
	Selecionado *string `json:"selecionado,omitempty"`
	// ListaHash is the claimed lista_elegiveis_hash, if any.
	ListaHash *string `json:"lista_elegiveis_hash,omitempty"`
}

// Divergencia reports the first claimed field of an [Alegacao] that differs
// from the recomputed draw. Fields are checked in the order seed, ordenados,
// selecionado, lista_elegiveis_hash: the seed comes first because every
// later value derives from it, so its mismatch is the root cause.
type Divergencia struct {
	// Campo is the JSON name of the field: "seed", "ordenados",
	// "selecionado" or "lista_elegiveis_hash".
	Campo string
	// Posicao is, for ordenados, the first position whose id differs, or -1
	// when the lists differ in length (then Alegado and Calculado hold the
	// two lengths, e.g. "4 ids"). It is -1 for every other field.
	Posicao int
	// Alegado is the claimed value (for ordenados, the claimed id at
	// Posicao).
	Alegado string
	// Calculado is the recomputed value (for ordenados, the computed id at
	// Posicao).
	Calculado string
}

// Error returns a one-line description such as
// `selecionado: claimed "x", computed "y"`.
func (d *Divergencia) Error() string {
	switch {
	case d.Campo == "ordenados" && d.Posicao >= 0:
		return fmt.Sprintf("ordenados[%d]: claimed %q, computed %q", d.Posicao, d.Alegado, d.Calculado)
	case d.Campo == "ordenados":
		return fmt.Sprintf("ordenados: claimed %s, computed %s", d.Alegado, d.Calculado)
	default:
		return fmt.Sprintf("%s: claimed %q, computed %q", d.Campo, d.Alegado, d.Calculado)
	}
}

// Verificar recomputes the draw described by a and compares it with the
// claimed fields that a carries (CONTRACT §1). It returns the recomputed
// Resultado together with a *Divergencia for the first claimed field that
// differs, or with nil when every claim holds. Any other error means the
// inputs themselves are unusable (see [Sortear]); the Resultado is then
// zero.
//
// Claimed ids are lowercased before comparing, exactly like the input ids,
// because a UUID names the same counsellor in either case. The seed and the
// hash are compared verbatim: the contract fixes them as lowercase hex.
func Verificar(a Alegacao) (Resultado, error) {
	res, err := SortearComRodada(a.Base, a.Timestamp, a.Randomness, a.Elegiveis)
	if err != nil {
		return Resultado{}, err
	}
	if a.Seed != nil && *a.Seed != res.Seed {
		return res, &Divergencia{Campo: "seed", Posicao: -1, Alegado: *a.Seed, Calculado: res.Seed}
	}
	if a.Ordenados != nil {
		if d := compararOrdenados(a.Ordenados, res.Ordenados); d != nil {
			return res, d
		}
	}
	if a.Selecionado != nil && strings.ToLower(*a.Selecionado) != res.Selecionado {
		return res, &Divergencia{Campo: "selecionado", Posicao: -1, Alegado: *a.Selecionado, Calculado: res.Selecionado}
	}
	if a.ListaHash != nil && *a.ListaHash != res.ListaHash {
		return res, &Divergencia{Campo: "lista_elegiveis_hash", Posicao: -1, Alegado: *a.ListaHash, Calculado: res.ListaHash}
	}
	return res, nil
}

// compararOrdenados returns the first difference between the claimed and the
// computed order, or nil.
func compararOrdenados(alegado, calculado []string) *Divergencia {
	if len(alegado) != len(calculado) {
		return &Divergencia{
			Campo:     "ordenados",
			Posicao:   -1,
			Alegado:   strconv.Itoa(len(alegado)) + " ids",
			Calculado: strconv.Itoa(len(calculado)) + " ids",
		}
	}
	for i := range alegado {
		if strings.ToLower(alegado[i]) != calculado[i] {
			return &Divergencia{Campo: "ordenados", Posicao: i, Alegado: alegado[i], Calculado: calculado[i]}
		}
	}
	return nil
}

// VerificarJSON decodes an [Alegacao] from r, verifies it with [Verificar]
// and writes the recomputed Resultado to w as indented JSON (CONTRACT §1).
// The result is written whenever it could be computed, including on a
// mismatch, so that the reader sees the correct values next to the error.
//
// The returned error is nil when all claims hold, a *Divergencia (returned
// unwrapped) when a claim is wrong, and any other error when the file is
// malformed, the inputs are unusable or w fails. The file must be a single
// JSON object with base, timestamp and elegiveis; unknown fields are
// rejected, because a misspelled claim such as "selecionada" would otherwise
// be silently left unchecked and the file reported as correct.
func VerificarJSON(r io.Reader, w io.Writer) error {
	a, err := decodeAlegacao(r)
	if err != nil {
		return err
	}
	res, verr := Verificar(a)
	var div *Divergencia
	if verr != nil && !errors.As(verr, &div) {
		return verr
	}
	out, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("sorteio: encoding result: %w", err)
	}
	if _, err := w.Write(append(out, '\n')); err != nil {
		return fmt.Errorf("sorteio: writing result: %w", err)
	}
	return verr
}

// decodeAlegacao reads exactly one JSON object describing a draw.
func decodeAlegacao(r io.Reader) (Alegacao, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Alegacao{}, fmt.Errorf("sorteio: reading verify file: %w", err)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return Alegacao{}, errors.New("sorteio: verify file is empty")
	}
	if trimmed[0] != '{' {
		return Alegacao{}, fmt.Errorf("sorteio: verify file must hold a JSON object with base, timestamp and elegiveis, found %s", jsonKind(trimmed[0]))
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	var a Alegacao
	if err := dec.Decode(&a); err != nil {
		return Alegacao{}, fmt.Errorf("sorteio: decoding verify file: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Alegacao{}, errors.New("sorteio: verify file holds data after the JSON object")
	}
	var missing []string
	if a.Base == "" {
		missing = append(missing, "base")
	}
	if a.Timestamp == "" {
		missing = append(missing, "timestamp")
	}
	if a.Elegiveis == nil {
		missing = append(missing, "elegiveis")
	}
	if len(missing) > 0 {
		return Alegacao{}, fmt.Errorf("sorteio: verify file is missing %s", strings.Join(missing, ", "))
	}
	return a, nil
}

// jsonKind names the kind of JSON value that starts with b, for error
// messages.
func jsonKind(b byte) string {
	switch {
	case b == '[':
		return "an array"
	case b == '"':
		return "a string"
	case b == 't' || b == 'f':
		return "a boolean"
	case b == 'n':
		return "null"
	case b == '-' || (b >= '0' && b <= '9'):
		return "a number"
	default:
		return "something that is not JSON"
	}
}
