package sorteio

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// fiveEligible is the "five eligible" case of testdata/vectors.json.
func fiveEligible() (Alegacao, Resultado) {
	seed := "23b282cc347afc3c84fb8999452a77f36c8eb1edb610336e1b1694aea46f2ad6"
	ordenados := []string{
		"f0000001-0000-4000-8000-0000000000a3",
		"f0000001-0000-4000-8000-0000000000a1",
		"f0000001-0000-4000-8000-0000000000a4",
		"f0000001-0000-4000-8000-0000000000a2",
		"f0000001-0000-4000-8000-0000000000a5",
	}
	sel := ordenados[0]
	hash := "6f24412cf61adca3ca21212a1ea1e760400cd05cf7365a74a0d97ab915022037"
	entrada := slices.Sorted(slices.Values(ordenados))
	a := Alegacao{
		Base:        "ultimo-evt-barramento",
		Timestamp:   "2026-08-11T19:17:28.000Z",
		Elegiveis:   []string{entrada[4], entrada[2], entrada[0], entrada[3], entrada[1]},
		Seed:        &seed,
		Ordenados:   slices.Clone(ordenados),
		Selecionado: &sel,
		ListaHash:   &hash,
	}
	return a, Resultado{Seed: seed, Entrada: entrada, Ordenados: ordenados, Selecionado: sel, ListaHash: hash}
}

func ptr(s string) *string { return &s }

func TestVerificarCorrectClaims(t *testing.T) {
	a, want := fiveEligible()
	got, err := Verificar(a)
	if err != nil {
		t.Fatalf("Verificar(correct claims) = %v, want nil", err)
	}
	assertResultado(t, got, want)

	// No claims at all is a plain recomputation.
	bare := Alegacao{Base: a.Base, Timestamp: a.Timestamp, Elegiveis: a.Elegiveis}
	if _, err := Verificar(bare); err != nil {
		t.Errorf("Verificar(no claims) = %v, want nil", err)
	}

	// Ids name the same counsellor in either case.
	upper := a
	upper.Selecionado = ptr(strings.ToUpper(*a.Selecionado))
	if _, err := Verificar(upper); err != nil {
		t.Errorf("Verificar(uppercase selecionado) = %v, want nil", err)
	}
}

func TestVerificarTamperedFields(t *testing.T) {
	_, want := fiveEligible()
	swapped := slices.Clone(want.Ordenados)
	swapped[2], swapped[3] = swapped[3], swapped[2]

	tests := []struct {
		name       string
		tamper     func(*Alegacao)
		campo      string
		posicao    int
		alegado    string
		calculado  string
		wantString string
	}{
		{
			name:      "seed",
			tamper:    func(a *Alegacao) { a.Seed = ptr(strings.Repeat("0", 64)) },
			campo:     "seed",
			posicao:   -1,
			alegado:   strings.Repeat("0", 64),
			calculado: want.Seed,
		},
		{
			name:       "ordenados order",
			tamper:     func(a *Alegacao) { a.Ordenados = swapped },
			campo:      "ordenados",
			posicao:    2,
			alegado:    swapped[2],
			calculado:  want.Ordenados[2],
			wantString: `ordenados[2]: claimed "` + swapped[2] + `", computed "` + want.Ordenados[2] + `"`,
		},
		{
			name:       "ordenados length",
			tamper:     func(a *Alegacao) { a.Ordenados = a.Ordenados[:4] },
			campo:      "ordenados",
			posicao:    -1,
			alegado:    "4 ids",
			calculado:  "5 ids",
			wantString: "ordenados: claimed 4 ids, computed 5 ids",
		},
		{
			name:      "ordenados claimed empty",
			tamper:    func(a *Alegacao) { a.Ordenados = []string{} },
			campo:     "ordenados",
			posicao:   -1,
			alegado:   "0 ids",
			calculado: "5 ids",
		},
		{
			name:       "selecionado",
			tamper:     func(a *Alegacao) { a.Selecionado = ptr(want.Ordenados[1]) },
			campo:      "selecionado",
			posicao:    -1,
			alegado:    want.Ordenados[1],
			calculado:  want.Selecionado,
			wantString: `selecionado: claimed "` + want.Ordenados[1] + `", computed "` + want.Selecionado + `"`,
		},
		{
			name:      "selecionado claimed empty",
			tamper:    func(a *Alegacao) { a.Selecionado = ptr("") },
			campo:     "selecionado",
			posicao:   -1,
			alegado:   "",
			calculado: want.Selecionado,
		},
		{
			name:      "lista_elegiveis_hash",
			tamper:    func(a *Alegacao) { a.ListaHash = ptr(strings.ToUpper(want.ListaHash)) },
			campo:     "lista_elegiveis_hash",
			posicao:   -1,
			alegado:   strings.ToUpper(want.ListaHash),
			calculado: want.ListaHash,
		},
		{
			// Several wrong claims: the seed is reported, being checked
			// first.
			name: "seed and selecionado",
			tamper: func(a *Alegacao) {
				a.Seed = ptr("beef")
				a.Selecionado = ptr("nobody")
			},
			campo:     "seed",
			posicao:   -1,
			alegado:   "beef",
			calculado: want.Seed,
		},
		{
			// A different timestamp is a different draw: the seed no longer
			// matches.
			name:      "timestamp",
			tamper:    func(a *Alegacao) { a.Timestamp = "2026-08-11T19:17:28.001Z" },
			campo:     "seed",
			posicao:   -1,
			alegado:   want.Seed,
			calculado: Seed("ultimo-evt-barramento", "2026-08-11T19:17:28.001Z"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := fiveEligible()
			tt.tamper(&a)
			_, err := Verificar(a)
			var d *Divergencia
			if !errors.As(err, &d) {
				t.Fatalf("Verificar = %v (%T), want *Divergencia", err, err)
			}
			if d.Campo != tt.campo || d.Posicao != tt.posicao || d.Alegado != tt.alegado || d.Calculado != tt.calculado {
				t.Errorf("Divergencia = %+v, want campo %q posicao %d alegado %q calculado %q",
					*d, tt.campo, tt.posicao, tt.alegado, tt.calculado)
			}
			if tt.wantString != "" && d.Error() != tt.wantString {
				t.Errorf("Error() = %q, want %q", d.Error(), tt.wantString)
			}
		})
	}
}

func TestVerificarUnusableInput(t *testing.T) {
	a, _ := fiveEligible()
	a.Elegiveis = append(a.Elegiveis, a.Elegiveis[0])
	_, err := Verificar(a)
	var d *Divergencia
	if err == nil || errors.As(err, &d) {
		t.Fatalf("Verificar(duplicate elegiveis) = %v, want a non-Divergencia error", err)
	}
}

func TestVerificarJSON(t *testing.T) {
	a, want := fiveEligible()
	file, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if err := VerificarJSON(bytes.NewReader(file), &out); err != nil {
		t.Fatalf("VerificarJSON(correct file) = %v, want nil", err)
	}
	assertOutput(t, out.Bytes(), want)

	// On a mismatch the computed result is still printed.
	a.Selecionado = ptr(want.Ordenados[4])
	file, _ = json.Marshal(a)
	out.Reset()
	err = VerificarJSON(bytes.NewReader(file), &out)
	d, ok := err.(*Divergencia)
	if !ok || d.Campo != "selecionado" {
		t.Fatalf("VerificarJSON(wrong selecionado) = %v, want unwrapped *Divergencia on selecionado", err)
	}
	assertOutput(t, out.Bytes(), want)

	// Only the inputs: a plain recomputation.
	out.Reset()
	in := `{"base":"ultimo-evt-barramento","timestamp":"2026-08-11T19:17:28.000Z","elegiveis":["f0000001-0000-4000-8000-0000000000a5","F0000001-0000-4000-8000-0000000000A1","f0000001-0000-4000-8000-0000000000a2","f0000001-0000-4000-8000-0000000000a3","f0000001-0000-4000-8000-0000000000a4"]}`
	if err := VerificarJSON(strings.NewReader(in), &out); err != nil {
		t.Fatalf("VerificarJSON(inputs only) = %v", err)
	}
	assertOutput(t, out.Bytes(), want)
}

func TestVerificarJSONMalformed(t *testing.T) {
	const okInputs = `"base":"b","timestamp":"2026-08-11T19:17:28.000Z","elegiveis":["x"]`
	tests := []struct {
		name, in, wantInErr string
	}{
		{"empty", "  ", "empty"},
		{"array", `[{"base":"b"}]`, "found an array"},
		{"string", `"hello"`, "found a string"},
		{"null", `null`, "found null"},
		{"not json", `base=b`, "not JSON"},
		{"truncated", `{"base":"b"`, "decoding"},
		{"unknown field", `{` + okInputs + `,"selecionada":"x"}`, "selecionada"},
		{"wrong type", `{"base":"b","timestamp":"2026-08-11T19:17:28.000Z","elegiveis":"x"}`, "decoding"},
		{"trailing data", `{` + okInputs + `} {}`, "after the JSON object"},
		{"missing base", `{"timestamp":"2026-08-11T19:17:28.000Z","elegiveis":["x"]}`, "missing base"},
		{"missing everything", `{}`, "missing base, timestamp, elegiveis"},
		{"elegiveis null", `{"base":"b","timestamp":"2026-08-11T19:17:28.000Z","elegiveis":null}`, "missing elegiveis"},
		{"elegiveis empty", `{"base":"b","timestamp":"2026-08-11T19:17:28.000Z","elegiveis":[]}`, "empty list"},
		{"bad timestamp", `{"base":"b","timestamp":"2026-08-11T19:17:28Z","elegiveis":["x"]}`, "timestamp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := VerificarJSON(strings.NewReader(tt.in), &out)
			var d *Divergencia
			if err == nil || errors.As(err, &d) {
				t.Fatalf("VerificarJSON = %v, want a non-Divergencia error", err)
			}
			if !strings.Contains(err.Error(), tt.wantInErr) {
				t.Errorf("error %q does not mention %q", err, tt.wantInErr)
			}
			if out.Len() != 0 {
				t.Errorf("wrote %q for unusable input, want nothing", out.String())
			}
		})
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestVerificarJSONWriteError(t *testing.T) {
	a, _ := fiveEligible()
	file, _ := json.Marshal(a)
	err := VerificarJSON(bytes.NewReader(file), failingWriter{})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("VerificarJSON to a failing writer = %v, want the write error", err)
	}
}

func assertOutput(t *testing.T, out []byte, want Resultado) {
	t.Helper()
	if !bytes.HasSuffix(out, []byte("}\n")) || !bytes.Contains(out, []byte("\n  \"seed\"")) {
		t.Errorf("output is not indented JSON ending in a newline:\n%s", out)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	var got Resultado
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("output does not parse back into Resultado: %v\n%s", err, out)
	}
	assertResultado(t, got, want)
}

func assertResultado(t *testing.T, got, want Resultado) {
	t.Helper()
	if got.Seed != want.Seed || got.Selecionado != want.Selecionado || got.ListaHash != want.ListaHash ||
		!slices.Equal(got.Entrada, want.Entrada) || !slices.Equal(got.Ordenados, want.Ordenados) {
		t.Errorf("Resultado:\n got  %+v\n want %+v", got, want)
	}
}
