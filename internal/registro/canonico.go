package registro

// The canonical form without encoding/json's reflection (issue 39): at ten
// million records, decoding each record and encoding it again to prove it
// canonical was most of the verifier's CPU. lerRapido parses a record with
// a scanner of the few shapes records have, encodes the value again with an
// encoder of its own (acrescentar, equal to codificar: the differential
// tests in canonico_test.go), and accepts the bytes only when they come
// back identical, as lerCanonico does. Anything the fast path does not
// know (an escape in a string, an unknown key, a value of another shape,
// bytes that differ) goes to lerCanonico, which accepts or names the
// failure exactly as before: the fast path never accepts what the slow
// one refuses, it only answers sooner for the bytes it would accept.
//
// Each record kind's field switch (campo) and encoder (acrescentar) are
// generated into canonico_gen.go from its struct, the same fields and json
// tags encoding/json reads, so a field added to a record is in both paths
// once go generate runs (TestCanonicoGeradoEmDia fails until it does).
// This file keeps the scanner's and the encoder's building blocks.

//go:generate go run ./gencanonico/cmd/gencanonico

import (
	"bytes"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/google/uuid"
)

// bufCanonico holds the buffers lerRapido encodes into.
var bufCanonico = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// lerRapido is LerRegistravel's fast path: ok false sends data to the slow
// one.
func lerRapido(data []byte) (r Registravel, ok bool) {
	t, canonico := tipoCanonico(data)
	if !canonico {
		return nil, false
	}
	p := bufCanonico.Get().(*[]byte)
	defer bufCanonico.Put(p)
	buf := (*p)[:0]
	switch {
	case t == nil:
		var v Registro
		if !lerObjeto(data, v.campo) {
			return nil, false
		}
		buf, ok = v.acrescentar(buf)
		r = v
	case *t == TipoSemCandidatos:
		var v SemCandidatos
		if !lerObjeto(data, v.campo) {
			return nil, false
		}
		buf, ok = v.acrescentar(buf)
		r = v
	case *t == TipoHierarquia:
		var v Hierarquia
		if !lerObjeto(data, v.campo) {
			return nil, false
		}
		buf, ok = v.acrescentar(buf)
		r = v
	case slices.Contains(tiposEntrada, *t):
		var v Entrada
		if !lerObjeto(data, v.campo) {
			return nil, false
		}
		buf, ok = v.acrescentar(buf)
		r = v
	case *t == TipoRegrasSorteio:
		var v RegrasSorteio
		if !lerObjeto(data, v.campo) {
			return nil, false
		}
		buf, ok = v.acrescentar(buf)
		r = v
	case *t == TipoEliminacao:
		var v Eliminacao
		if !lerObjeto(data, v.campo) {
			return nil, false
		}
		buf, ok = v.acrescentar(buf)
		r = v
	case *t == TipoListaSorteio:
		var v ListaSorteio
		if !lerObjeto(data, v.campo) {
			return nil, false
		}
		buf, ok = v.acrescentar(buf)
		r = v
	case *t == TipoCompromisso:
		var v Compromisso
		if !lerObjeto(data, v.campo) {
			return nil, false
		}
		buf, ok = v.acrescentar(buf)
		r = v
	case *t == TipoCossinaturas:
		var v CossinaturasRegistro
		if !lerObjeto(data, v.campo) {
			return nil, false
		}
		buf, ok = v.acrescentar(buf)
		r = v
	default:
		return nil, false
	}
	*p = buf
	if !ok || !bytes.Equal(buf, data) {
		return nil, false
	}
	return r, true
}

// codificarRapido is Bytes through the hand-written encoder, codificar
// where that one declines (a string it would have to escape).
func codificarRapido(v interface {
	acrescentar([]byte) ([]byte, bool)
}) ([]byte, error) {
	if b, ok := v.acrescentar(make([]byte, 0, 1024)); ok {
		return b, nil
	}
	return codificar(v)
}

// scanner is the fast path's reader of one compact JSON object.
type scanner struct {
	b []byte
	i int
}

// lerObjeto reads data as one JSON object with nothing after it, giving
// each key to campo to read its value; false when any of it is not what
// the fast path reads.
func lerObjeto(data []byte, campo func(s *scanner, chave []byte) bool) bool {
	s := &scanner{b: data}
	if !s.byte('{') {
		return false
	}
	if s.byte('}') {
		return s.i == len(s.b)
	}
	for {
		k, ok := s.str()
		if !ok || !s.byte(':') || !campo(s, k) {
			return false
		}
		if s.byte(',') {
			continue
		}
		return s.byte('}') && s.i == len(s.b)
	}
}

func (s *scanner) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) literal(l string) bool {
	if len(s.b)-s.i >= len(l) && string(s.b[s.i:s.i+len(l)]) == l {
		s.i += len(l)
		return true
	}
	return false
}

// str reads a string without escapes (one with any goes to the slow path).
func (s *scanner) str() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	fim := bytes.IndexByte(s.b[s.i:], '"')
	if fim < 0 {
		return nil, false
	}
	v := s.b[s.i : s.i+fim]
	if bytes.IndexByte(v, '\\') >= 0 {
		return nil, false
	}
	s.i += fim + 1
	return v, true
}

func (s *scanner) texto(dst *string) bool {
	v, ok := s.str()
	*dst = string(v)
	return ok
}

func (s *scanner) id(dst *uuid.UUID) bool {
	v, ok := s.str()
	if !ok {
		return false
	}
	u, err := uuid.ParseBytes(v)
	*dst = u
	return err == nil
}

func (s *scanner) idOuNulo(dst **uuid.UUID) bool {
	if s.literal("null") {
		*dst = nil
		return true
	}
	var u uuid.UUID
	if !s.id(&u) {
		return false
	}
	*dst = &u
	return true
}

func (s *scanner) inteiro(dst *int64) bool {
	ini := s.i
	s.byte('-')
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	if s.i == ini || s.i-ini > 19 {
		return false
	}
	n, err := strconv.ParseInt(string(s.b[ini:s.i]), 10, 64)
	*dst = n
	return err == nil
}

func (s *scanner) inteiroOuNulo(dst **int64) bool {
	if s.literal("null") {
		*dst = nil
		return true
	}
	var n int64
	if !s.inteiro(&n) {
		return false
	}
	*dst = &n
	return true
}

// booleano reads a plain bool, which has no null (see gencanonico.formas).
func (s *scanner) booleano(dst *bool) bool {
	switch {
	case s.literal("true"):
		*dst = true
	case s.literal("false"):
		*dst = false
	default:
		return false
	}
	return true
}

func (s *scanner) boolOuNulo(dst **bool) bool {
	var v bool
	switch {
	case s.literal("null"):
		*dst = nil
		return true
	case s.literal("true"):
		v = true
	case s.literal("false"):
	default:
		return false
	}
	*dst = &v
	return true
}

// lista reads an array, each element by elem; an empty one is non-nil, as
// encoding/json decodes it.
func lista[T any](s *scanner, dst *[]T, elem func(*T) bool) bool {
	if s.literal("null") {
		*dst = nil
		return true
	}
	if !s.byte('[') {
		return false
	}
	out := make([]T, 0, 8)
	if !s.byte(']') {
		for {
			var v T
			if !elem(&v) {
				return false
			}
			out = append(out, v)
			if s.byte(',') {
				continue
			}
			if !s.byte(']') {
				return false
			}
			break
		}
	}
	*dst = out
	return true
}

// The encoder: what codificar writes, field by field in the struct's
// order (acrescentar, generated). ok false when a string holds what
// encoding/json escapes (a quote, a backslash, a control character,
// invalid UTF-8, U+2028 or U+2029).

// enc appends a record's keys, keeping the first refusal.
type enc struct {
	b        []byte
	ok       bool
	primeira bool
}

func novoEnc(b []byte) enc { return enc{b: append(b, '{'), ok: true, primeira: true} }

func (e *enc) chave(k string) {
	if !e.primeira {
		e.b = append(e.b, ',')
	}
	e.primeira = false
	e.b = append(e.b, '"')
	e.b = append(e.b, k...)
	e.b = append(e.b, '"', ':')
}

func (e *enc) texto(k, v string) {
	e.chave(k)
	e.valorTexto(v)
}

func (e *enc) valorTexto(v string) {
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' {
				e.ok = false
				return
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(v[i:])
		if r == utf8.RuneError && n == 1 || r == '\u2028' || r == '\u2029' {
			e.ok = false
			return
		}
		i += n
	}
	e.b = append(e.b, '"')
	e.b = append(e.b, v...)
	e.b = append(e.b, '"')
}

func (e *enc) valorID(u uuid.UUID) {
	e.b = append(e.b, '"')
	var s [36]byte
	uuidEmTexto(&s, u)
	e.b = append(e.b, s[:]...)
	e.b = append(e.b, '"')
}

// uuidEmTexto is uuid.UUID.String without its allocation.
func uuidEmTexto(dst *[36]byte, u uuid.UUID) {
	const hexa = "0123456789abcdef"
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst[j] = '-'
			j++
		}
		dst[j], dst[j+1] = hexa[c>>4], hexa[c&0xf]
		j += 2
	}
}

func (e *enc) id(k string, u uuid.UUID) {
	e.chave(k)
	e.valorID(u)
}

func (e *enc) idOuNulo(k string, u *uuid.UUID) {
	e.chave(k)
	if u == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.valorID(*u)
}

func (e *enc) inteiro(k string, n int64) {
	e.chave(k)
	e.b = strconv.AppendInt(e.b, n, 10)
}

func (e *enc) inteiroOuNulo(k string, n *int64) {
	e.chave(k)
	if n == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = strconv.AppendInt(e.b, *n, 10)
}

func (e *enc) booleano(k string, v bool) {
	e.chave(k)
	e.b = strconv.AppendBool(e.b, v)
}

// textos and inteiros write a nil list as [], as Bytes does (see
// gencanonico.formas).
func (e *enc) textos(k string, vs []string) { escreverLista(e, k, vs, (*enc).valorTexto) }

func (e *enc) inteiros(k string, ns []int64) {
	escreverLista(e, k, ns, func(e *enc, n int64) { e.b = strconv.AppendInt(e.b, n, 10) })
}

// escreverLista writes key k and the array vs, each element by valor
// (lista reads it back).
func escreverLista[T any](e *enc, k string, vs []T, valor func(*enc, T)) {
	e.chave(k)
	e.b = append(e.b, '[')
	for i, v := range vs {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		valor(e, v)
	}
	e.b = append(e.b, ']')
}

// The omitempty keys: omitted when empty, as encoding/json does.
func (e *enc) talvezTexto(k, v string) {
	if v != "" {
		e.texto(k, v)
	}
}

func (e *enc) talvezID(k string, u *uuid.UUID) {
	if u != nil {
		e.idOuNulo(k, u)
	}
}

func (e *enc) talvezInteiro(k string, n *int64) {
	if n != nil {
		e.inteiroOuNulo(k, n)
	}
}

func (e *enc) talvezBool(k string, v *bool) {
	if v != nil {
		e.booleano(k, *v)
	}
}

func (e *enc) talvezIDs(k string, us []uuid.UUID) {
	if len(us) == 0 {
		return
	}
	e.chave(k)
	e.b = append(e.b, '[')
	for i, u := range us {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.valorID(u)
	}
	e.b = append(e.b, ']')
}

func (e *enc) fim() ([]byte, bool) {
	e.b = append(e.b, '}')
	return e.b, e.ok
}
