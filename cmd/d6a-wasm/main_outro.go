//go:build !(js && wasm)

package main

import (
	"fmt"
	"os"
)

// main elsewhere than js/wasm says how this command is built.
func main() {
	fmt.Fprintln(os.Stderr, "d6a-wasm runs in the verifier page: build it with `make generate` (GOOS=js GOARCH=wasm)")
	os.Exit(2)
}
