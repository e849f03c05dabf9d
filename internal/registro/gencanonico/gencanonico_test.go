package gencanonico

import (
	"go/ast"
	"go/parser"
	"strings"
	"testing"
)

// A field the generated code could not encode as encoding/json does is an
// error, not a guess.
func TestCamposRecusados(t *testing.T) {
	for _, c := range []struct{ campo, erro string }{
		{"X float64 `json:\"x\"`", "no canonical form"},
		{"X int64 `json:\"x,omitempty\"`", "has no encoder"},
		{"X *bool `json:\"x\"`", "has no encoder"},
		{"X int64", "no json tag"},
		{"X int64 `json:\"-\"`", "want a key"},
		{"X int64 `json:\"x,string\"`", "want a key"},
		{"X int64 `json:\",omitempty\"`", "want a key"},
		{"x int64 `json:\"x\"`", "unexported"},
		{"Interno", "embedded"},
		{"X, Y int64 `json:\"x\"`", "twice"},
	} {
		expr, err := parser.ParseExpr("struct{" + c.campo + "}")
		if err != nil {
			t.Fatal(err)
		}
		_, err = lerCampos("T", expr.(*ast.StructType))
		if err == nil || !strings.Contains(err.Error(), c.erro) {
			t.Errorf("%s: %v, want %q", c.campo, err, c.erro)
		}
	}
}

// The field table is the struct's, in its order, omitempty included.
func TestCampos(t *testing.T) {
	expr, err := parser.ParseExpr("struct{ A string `json:\"a\"`; B *int64 `json:\"b,omitempty\"`\n D []uuid.UUID `json:\"d,omitempty\"` }")
	if err != nil {
		t.Fatal(err)
	}
	campos, err := lerCampos("T", expr.(*ast.StructType))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range campos {
		got = append(got, c.nome+":"+c.chave+":"+c.metodo())
	}
	if want := "A:a:texto B:b:talvezInteiro D:d:talvezIDs"; strings.Join(got, " ") != want {
		t.Fatalf("%s, want %s", strings.Join(got, " "), want)
	}
}
