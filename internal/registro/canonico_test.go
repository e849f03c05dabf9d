package registro

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// textosDificeis are strings encoding/json writes raw, escapes, or
// replaces: the hand-written encoder must write the first as it does and
// decline the rest.
var textosDificeis = []string{
	"", "disponivel", "conselheiro.ciclo_concluído", "capacitação.concluída", "a<b>&c", "ünïcødé ✓ 𝄞",
	`quo"te`, `back\slash`, "tab\there", "nl\n", "\x00", "\x7f", "inválido\xff", "\u2028", "\u2029", "\u2027",
	"2026-11-30T00:00:00.000Z", "00000000-0000-0000-0000-000000000000",
}

// preencher gives every field of the struct v points to a random value
// (pointers and slices nil or empty at times), by reflection, so a field
// added to a record type is exercised without this test knowing it.
func preencher(rng *rand.Rand, v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			preencher(rng, v.Field(i))
		}
	case reflect.Array: // uuid.UUID
		for i := range v.Len() {
			v.Index(i).SetUint(uint64(rng.IntN(256)))
		}
	case reflect.Pointer:
		if rng.IntN(4) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		preencher(rng, p.Elem())
		v.Set(p)
	case reflect.Slice:
		switch rng.IntN(5) {
		case 0:
			v.SetZero()
			return
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			return
		}
		s := reflect.MakeSlice(v.Type(), 1+rng.IntN(4), 4)
		for i := range s.Len() {
			preencher(rng, s.Index(i))
		}
		v.Set(s)
	case reflect.String:
		switch rng.IntN(3) {
		case 0:
			v.SetString(textosDificeis[rng.IntN(len(textosDificeis))])
		case 1:
			v.SetString(uuid.New().String())
		default:
			v.SetString(fmt.Sprint(rng.Int64()))
		}
	case reflect.Int64:
		v.SetInt([]int64{0, 1, -1, rng.Int64(), -rng.Int64(), 1 << 62, -1 << 63}[rng.IntN(7)])
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	default:
		panic("preencher: kind " + v.Kind().String())
	}
}

// bytesLento is what Bytes wrote before the hand-written encoder:
// encoding/json over the value, with the draw's nil lists as empty ones.
func bytesLento(r Registravel) ([]byte, error) {
	switch v := r.(type) {
	case Registro:
		for _, l := range []*[]string{&v.ElegiveisEntrada, &v.Ordenados, &v.Cadeia} {
			if *l == nil {
				*l = []string{}
			}
		}
		return codificar(v)
	case SemCandidatos:
		if v.Cadeia == nil {
			v.Cadeia = []string{}
		}
		return codificar(v)
	case Eliminacao:
		if v.Indices == nil {
			v.Indices = []int64{}
		}
		return codificar(v)
	case CossinaturasRegistro:
		if v.Assinaturas == nil {
			v.Assinaturas = []string{}
		}
		return codificar(v)
	case ListaSorteio:
		if v.Elegiveis == nil {
			v.Elegiveis = []string{}
		}
		return codificar(v)
	}
	return codificar(r)
}

type acrescentavel interface {
	Registravel
	acrescentar([]byte) ([]byte, bool)
}

func aleatorio(rng *rand.Rand, k int) acrescentavel {
	switch k % 8 {
	case 0:
		var v Registro
		preencher(rng, reflect.ValueOf(&v).Elem())
		return v
	case 1:
		var v SemCandidatos
		preencher(rng, reflect.ValueOf(&v).Elem())
		v.Tipo = TipoSemCandidatos
		return v
	case 2:
		var v Hierarquia
		preencher(rng, reflect.ValueOf(&v).Elem())
		v.Tipo = TipoHierarquia
		return v
	case 3:
		var v Eliminacao
		preencher(rng, reflect.ValueOf(&v).Elem())
		v.Tipo = TipoEliminacao
		return v
	case 4:
		var v ListaSorteio
		preencher(rng, reflect.ValueOf(&v).Elem())
		v.Tipo = TipoListaSorteio
		return v
	case 5:
		var v Compromisso
		preencher(rng, reflect.ValueOf(&v).Elem())
		v.Tipo = TipoCompromisso
		return v
	case 6:
		var v CossinaturasRegistro
		preencher(rng, reflect.ValueOf(&v).Elem())
		v.Tipo = TipoCossinaturas
		return v
	default:
		var v Entrada
		preencher(rng, reflect.ValueOf(&v).Elem())
		v.Tipo = tiposEntrada[rng.IntN(len(tiposEntrada))]
		return v
	}
}

// The hand-written encoder writes exactly what encoding/json writes, for
// every field of every record type, or declines (and then encoding/json
// had to escape something).
func TestCodificadorIgualAoJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 1))
	recusas := 0
	for k := range 40_000 {
		v := aleatorio(rng, k)
		lento, err := bytesLento(v)
		if err != nil {
			t.Fatal(err)
		}
		rapido, ok := v.acrescentar(nil)
		if !ok {
			recusas++
			if !bytes.ContainsRune(lento, '\\') && !bytes.Contains(lento, []byte("\ufffd")) {
				t.Fatalf("%T: declined, but encoding/json escapes nothing in %s", v, lento)
			}
			continue
		}
		if !bytes.Equal(rapido, lento) {
			t.Fatalf("%T:\n fast %s\n json %s", v, rapido, lento)
		}
		viaBytes, err := v.Bytes()
		if err != nil || !bytes.Equal(viaBytes, lento) {
			t.Fatalf("%T.Bytes: %s, %v; want %s", v, viaBytes, err, lento)
		}
	}
	if recusas == 0 || recusas > 30_000 {
		t.Fatalf("%d of 40,000 declined: the test does not exercise both paths", recusas)
	}
}

// mutacoes are the bytes of a canonical record changed in the ways a
// rigged or careless log would: each a different record, or the same one
// written otherwise.
func mutacoes(b []byte, rng *rand.Rand) [][]byte {
	s := string(b)
	out := [][]byte{
		[]byte(strings.Replace(s, `,"`, `, "`, 1)),
		[]byte(strings.Replace(s, `":`, `" :`, 1)),
		[]byte(s + " "),
		[]byte(" " + s),
		[]byte(s + "\n"),
		[]byte(strings.ToUpper(s)),
		[]byte(strings.Replace(s, "a", "A", 1)),
		[]byte(strings.Replace(s, "-", "", 4)),
		[]byte(strings.Replace(s, `":"`, `":"\u0030`, 1)),
		[]byte(strings.Replace(s, `"`, `\"`, 1)),
		[]byte(strings.Replace(s, "null", "0", 1)),
		[]byte(strings.Replace(s, "[]", "null", 1)),
		[]byte(strings.Replace(s, ":1", ":+1", 1)),
		[]byte(strings.Replace(s, ":1", ":1.0", 1)),
		[]byte(strings.Replace(s, ":1", ":01", 1)),
		[]byte(strings.Replace(s, ":true", ":1", 1)),
		[]byte(s[:len(s)-1] + `,"extra":1}`),
		[]byte(s[:len(s)-1] + `,"tipo":"x"}`),
		[]byte(s[:len(s)/2]),
		{},
	}
	// Two keys swapped.
	if i := strings.Index(s, `,"`); i > 0 {
		if j := strings.Index(s[i+1:], `,"`); j > 0 {
			a, b := s[1:i], s[i+1:i+1+j]
			out = append(out, []byte("{"+b+","+a+s[i+1+j:]))
		}
	}
	for range 24 {
		m := bytes.Clone(b)
		m[rng.IntN(len(m))] = byte(rng.IntN(256))
		out = append(out, m)
		m = bytes.Clone(b)
		i := rng.IntN(len(m))
		out = append(out, append(m[:i:i], m[i+1:]...))
	}
	return out
}

// conferirIgual checks LerRegistravel (fast path first) gives exactly what
// the encoding/json path gives: the same value, or the same failure.
func conferirIgual(t *testing.T, data []byte) (aceito bool) {
	t.Helper()
	lento, errLento := lerRegistravelLento(data)
	rapido, ok := lerRapido(data)
	if ok && (errLento != nil || !reflect.DeepEqual(rapido, lento)) {
		t.Fatalf("fast path accepted %q as %#v; encoding/json: %#v, %v", data, rapido, lento, errLento)
	}
	r, err := LerRegistravel(data)
	if fmt.Sprint(err) != fmt.Sprint(errLento) || !reflect.DeepEqual(r, lento) {
		t.Fatalf("LerRegistravel(%q) = %#v, %v; encoding/json: %#v, %v", data, r, err, lento, errLento)
	}
	if d, isReg := lento.(Registro); isReg || errLento != nil {
		r2, err2 := LerRegistro(data)
		if errLento == nil && (err2 != nil || !reflect.DeepEqual(r2, d)) {
			t.Fatalf("LerRegistro(%q) = %v, %v", data, r2, err2)
		}
		if errLento != nil && err2 == nil {
			t.Fatalf("LerRegistro(%q) accepted what LerRegistravel refuses (%v)", data, errLento)
		}
	}
	return errLento == nil
}

// LerRegistravel is exactly as strict as before the fast path: over the
// synthetic history's records, random records of every type, and each of
// them mutated, it accepts the same bytes as the encoding/json path, with
// the same value, and fails the rest with the same failure.
func TestLerRapidoIgualAoLento(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 2))
	var registros [][]byte
	for _, r := range HistoriaSintetica("canonico", 40) {
		b, err := r.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		registros = append(registros, b)
	}
	for i := range 20 {
		b, _ := RegistroSintetico("canonico", i).Bytes()
		registros = append(registros, b)
	}
	sem := NovoSemCandidatos(uuid.New(), uuid.New(), uuid.New(), nil, "2026-11-30T00:00:00.000Z", "sem_cadastrados", []uuid.UUID{uuid.New()}, 0, 0, nil)
	b, _ := sem.Bytes()
	registros = append(registros, b)
	b, _ = NovaSuspensao(uuid.New(), nil, uuid.New(), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)).Bytes()
	registros = append(registros, b)
	b, _ = NovaEliminacao(70, []int64{12, 3, 12, 40}).Bytes()
	registros = append(registros, b)
	// 1,500 random records of every kind: each with its mutations, the
	// slow path's cost under -race bounds the count.
	for k := range 1500 {
		v := aleatorio(rng, k)
		b, err := bytesLento(v)
		if err != nil {
			t.Fatal(err)
		}
		registros = append(registros, b)
	}
	aceitos, rapidos := 0, 0
	for _, b := range registros {
		if conferirIgual(t, b) {
			aceitos++
		}
		if _, ok := lerRapido(b); ok {
			rapidos++
		}
		for _, m := range mutacoes(b, rng) {
			if conferirIgual(t, m) && !bytes.Equal(m, b) {
				aceitos++
			}
		}
	}
	// The canonical records of the history take the fast path.
	for _, b := range registros[:60] {
		if _, ok := lerRapido(b); !ok {
			t.Fatalf("a canonical record the fast path declines: %s", b)
		}
	}
	if rapidos < len(registros)/2 {
		t.Fatalf("only %d of %d canonical records took the fast path", rapidos, len(registros))
	}
	t.Logf("%d records, %d accepted, %d by the fast path", len(registros), aceitos, rapidos)
}

// FuzzLerRegistravel: whatever the bytes, the fast path accepts nothing
// the encoding/json path refuses, and LerRegistravel answers as it does.
func FuzzLerRegistravel(f *testing.F) {
	for _, r := range HistoriaSintetica("fuzz", 3) {
		b, _ := r.Bytes()
		f.Add(b)
	}
	b, _ := RegistroSintetico("fuzz", 4).Bytes()
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		conferirIgual(t, data)
	})
}

func BenchmarkLerRegistravel(b *testing.B) {
	var registros [][]byte
	for _, r := range HistoriaSintetica("bench", 200) {
		x, _ := r.Bytes()
		registros = append(registros, x)
	}
	for _, caso := range []struct {
		nome string
		ler  func([]byte) (Registravel, error)
	}{{"rapido", LerRegistravel}, {"encoding_json", lerRegistravelLento}} {
		b.Run(caso.nome, func(b *testing.B) {
			for i := range b.N {
				if _, err := caso.ler(registros[i%len(registros)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
