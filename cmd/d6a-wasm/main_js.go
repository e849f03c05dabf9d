//go:build js && wasm

package main

import (
	"encoding/json"
	"syscall/js"
)

// main exposes globalThis.d6a to the page and its Web Worker, then waits
// for their calls. Results cross as JSON text (one JSON.parse on the JS
// side), errors as {erro: "..."}.
func main() {
	js.Global().Set("d6a", js.ValueOf(map[string]any{
		// novoReplay(conselheiro, demanda) → {aplicarBundle(u8, primeiro, w) → null | "erro", fechar() → JSON}
		"novoReplay": js.FuncOf(func(_ js.Value, a []js.Value) any {
			p, err := novoReplayPagina(a[0].String(), a[1].String())
			if err != nil {
				return js.ValueOf(map[string]any{"erro": err.Error()})
			}
			var buf []byte
			return js.ValueOf(map[string]any{
				"aplicarBundle": js.FuncOf(func(_ js.Value, a []js.Value) any {
					n := a[0].Get("length").Int()
					if cap(buf) < n {
						buf = make([]byte, n)
					}
					buf = buf[:n]
					js.CopyBytesToGo(buf, a[0])
					if err := p.aplicarBundle(buf, int64(a[1].Int()), a[2].Int()); err != nil {
						return err.Error()
					}
					return nil
				}),
				"fechar": js.FuncOf(func(js.Value, []js.Value) any { return jsonDe(p.fechar()) }),
			})
		}),
		// conferirRegistro(texto) → JSON of conferidoPagina
		"conferirRegistro": js.FuncOf(func(_ js.Value, a []js.Value) any {
			return jsonDe(conferirRegistro([]byte(a[0].String())))
		}),
	}))
	select {}
}

func jsonDe(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"erro": err.Error()})
	}
	return string(b)
}
