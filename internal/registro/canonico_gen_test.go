package registro

import (
	"bytes"
	"os"
	"testing"

	"github.com/formigueiro/d6a/internal/registro/gencanonico"
)

// TestCanonicoGeradoEmDia fails when a record struct changed and
// canonico_gen.go was not generated again: the fast path would then read
// and write the old fields.
func TestCanonicoGeradoEmDia(t *testing.T) {
	gerado, err := gencanonico.Gerar(".")
	if err != nil {
		t.Fatal(err)
	}
	emDisco, err := os.ReadFile(gencanonico.Arquivo)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gerado, emDisco) {
		t.Fatalf("%s is stale: run go generate ./internal/registro", gencanonico.Arquivo)
	}
}
