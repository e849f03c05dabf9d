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
			var bundle, hashes []byte
			return js.ValueOf(map[string]any{
				// aplicarTile(bundle, hashes, k, w) → the full tile's root
				// (Uint8Array), null (partial), or {erro}
				"aplicarTile": js.FuncOf(func(_ js.Value, a []js.Value) any {
					bundle, hashes = copiar(bundle, a[0]), copiar(hashes, a[1])
					raiz, err := p.aplicarTile(bundle, hashes, int64(a[2].Int()), a[3].Int())
					if err != nil {
						return js.ValueOf(map[string]any{"erro": err.Error()})
					}
					if raiz == nil {
						return nil
					}
					u := js.Global().Get("Uint8Array").New(len(raiz))
					js.CopyBytesToJS(u, raiz)
					return u
				}),
				"fechar": js.FuncOf(func(js.Value, []js.Value) any { return jsonDe(p.fechar()) }),
			})
		}),
		// conferirRegistro(texto, tamanho, raiz, indice, tiles) → JSON of
		// conferidoPagina: the record, leaf indice of the signed tree
		// (tamanho, raiz in base64); tiles maps the C2SP paths fetched so
		// far to their bytes (Uint8Array), for a long draw's list.
		"conferirRegistro": js.FuncOf(func(_ js.Value, a []js.Value) any {
			arv := &arvorePagina{Tamanho: int64(a[1].Int()), Raiz: a[2].String(), Indice: int64(a[3].Int()), Tiles: map[string][]byte{}}
			chaves := js.Global().Get("Object").Call("keys", a[4])
			for i := range chaves.Length() {
				p := chaves.Index(i).String()
				arv.Tiles[p] = copiar(nil, a[4].Get(p))
			}
			return jsonDe(conferirRegistro([]byte(a[0].String()), arv))
		}),
	}))
	select {}
}

// copiar copies the Uint8Array u into buf's storage, grown as needed.
func copiar(buf []byte, u js.Value) []byte {
	n := u.Get("length").Int()
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	js.CopyBytesToGo(buf, u)
	return buf
}

func jsonDe(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"erro": err.Error()})
	}
	return string(b)
}
