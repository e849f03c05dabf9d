// Command gencanonico writes canonico_gen.go in the current directory, the
// registro package's (its go:generate directive runs it there).
package main

import (
	"fmt"
	"os"

	"github.com/formigueiro/d6a/internal/registro/gencanonico"
)

func main() {
	b, err := gencanonico.Gerar(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(gencanonico.Arquivo, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
