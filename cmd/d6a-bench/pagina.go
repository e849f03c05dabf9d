package main

// `d6a-bench pagina` (issue 39): the verifier page's whole-log replay at
// scale. The synthetic history of `d6a-bench verificar` is written as a
// static C2SP tiles mirror, served by Go's http.FileServer beside the
// embedded page, and replayed by the page's Web Worker in headless
// Chromium; the real d6a binary's `verify --url --all --replay` over the
// same mirror, in the same run, is the yardstick.

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/httpapi"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/transparencia"
)

func executarPagina(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("d6a-bench pagina", flag.ContinueOnError)
	registros := fs.Int("registros", 1_000_000, "records in the synthetic log (at least 10,000)")
	limite := fs.Duration("limite", time.Hour, "how long the page may take")
	bin := fs.String("d6a", "", "the d6a binary for the yardstick (default: built from ./cmd/d6a)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	n := *registros
	if n < 10_000 {
		return errors.New("-registros must be ≥ 10,000")
	}
	if httpapi.SemWasm() {
		return errors.New("built without the verifier page's WebAssembly: run `make wasm` first")
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		return fmt.Errorf("chromium not installed (apt-get install -y chromium): %w", err)
	}
	raiz, err := os.MkdirTemp("", "d6a-bench-pagina-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(raiz)
	if *bin == "" {
		*bin = filepath.Join(raiz, "d6a")
		if out, err := exec.Command("go", "build", "-o", *bin, "./cmd/d6a").CombinedOutput(); err != nil {
			return fmt.Errorf("building d6a: %v\n%s", err, out)
		}
	}
	skey, _, err := transparencia.GerarChave(registro.OrigemPadrao)
	if err != nil {
		return err
	}
	chave, err := transparencia.NovaChave(skey)
	if err != nil {
		return err
	}
	e := &escritorTiles{raiz: filepath.Join(raiz, "espelho", "d6a", "transparencia"), chave: chave}
	if err := os.MkdirAll(e.raiz, 0o755); err != nil {
		return err
	}
	inicio := time.Now()
	pararEm := errors.New("size reached")
	// The history stops at the first draw at or after n records, so its
	// last cycle end has its sweep: n is rounded up to that.
	decisoes := 0
	if err := historico.CadaHistoriaSintetica("bench-pagina", n, func(r registro.Registravel) error {
		if _, ok := r.(registro.Registro); ok {
			if e.fr.N >= int64(n) {
				return pararEm
			}
			decisoes++
		}
		return e.anexar(r)
	}); err != nil && !errors.Is(err, pararEm) {
		return err
	}
	n = int(e.fr.N)
	cp, err := e.publicar()
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "pagina: %d records written as tiles (%.0f MB) in %.1f s\n", cp.Tamanho, float64(e.bytes)/1e6, time.Since(inicio).Seconds())

	// The page at its route, the mirror's files everywhere else.
	arquivos := http.FileServer(http.Dir(filepath.Join(raiz, "espelho")))
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == httpapi.RotaTransparencia+"/" {
			w.Header().Set("Content-Security-Policy", httpapi.CSPVerificador)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(httpapi.PaginaVerificador())
			return
		}
		if corpo, tipo, ok := httpapi.ArquivoVerificador(strings.TrimPrefix(r.URL.Path, httpapi.RotaTransparencia+"/")); ok {
			w.Header().Set("Content-Type", tipo)
			_, _ = w.Write(corpo)
			return
		}
		arquivos.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	url := "http://" + ln.Addr().String()

	// The yardstick: the Go verifier over the same mirror.
	r, err := rodarD6a(ctx, *bin, "verify", "--url", url, "--all", "--replay", "--chave", chave.Verificador)
	if err != nil {
		return err
	}
	if want := fmt.Sprintf("replay: registros=%d decisoes=%d divergencias=0 ", n, decisoes); !strings.Contains(r.saida, want) {
		return fmt.Errorf("verify --all --replay: want %q in\n%s", want, r.saida)
	}

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("enable-precise-memory-info", true),
		chromedp.UserDataDir(filepath.Join(raiz, "perfil")),
	}
	actx, cancelA := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	bctx, cancelT := context.WithTimeout(bctx, *limite)
	defer cancelT()
	if err := chromedp.Do(bctx, chromedp.Navigate(url+httpapi.RotaTransparencia+"/"), chromedp.WaitVisible(chromedp.CSS("#reproduzir"))); err != nil {
		return fmt.Errorf("opening the page: %w", err)
	}
	t0 := time.Now()
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS("#reproduzir")), chromedp.WaitVisible(chromedp.CSS("#replay[data-estado] [data-resumo]"))); err != nil {
		return fmt.Errorf("the page's replay: %w", err)
	}
	segundos := time.Since(t0).Seconds()
	res, err := chromedp.Run(bctx, chromedp.Evaluate[map[string]string](`({
		estado: document.getElementById("replay").dataset.estado,
		resumo: document.querySelector("#replay [data-resumo]").textContent,
		heapPagina: String(performance.memory ? performance.memory.usedJSHeapSize : "")})`))
	if err != nil {
		return err
	}
	if res["estado"] != "ok" || !strings.Contains(res["resumo"], fmt.Sprintf(" %d registros reproduzidos", n)) {
		return fmt.Errorf("the page's replay: %s %q", res["estado"], res["resumo"])
	}
	heapPagina, _ := strconv.ParseFloat(res["heapPagina"], 64)
	// The worker's heap is not in the page's performance.memory (a worker
	// is its own isolate, and Chromium does not expose performance.memory
	// there): its bound is the peak RSS of the renderer process that runs
	// the page and its worker, which holds both heaps.
	renderer, err := picoRenderer(filepath.Join(raiz, "perfil"))
	if err != nil {
		return err
	}
	fmt.Printf("pagina: registros=%d segundos=%.2f registros_por_s=%.0f renderer_pico_rss_mb=%.1f heap_pagina_mb=%.1f cli_segundos=%.2f cli_pico_rss_mb=%.1f razao_pagina_cli=%.2f\n",
		n, segundos, float64(n)/segundos, renderer, heapPagina/(1<<20), r.segundos, r.rssMB, segundos/r.segundos)
	return nil
}

// picoRenderer is the largest peak RSS (VmHWM, MiB) among the chromium
// renderer processes of the profile in perfil.
func picoRenderer(perfil string) (float64, error) {
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		return 0, err
	}
	pico := 0.0
	for _, p := range procs {
		cmd, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(cmd, []byte("--type=renderer")) || !bytes.Contains(cmd, []byte(perfil)) {
			continue
		}
		st, err := os.ReadFile(filepath.Join(filepath.Dir(p), "status"))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(st), "\n") {
			if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
				kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
				pico = max(pico, kb/1024)
			}
		}
	}
	if pico == 0 {
		return 0, errors.New("no chromium renderer process of this profile found in /proc")
	}
	return pico, nil
}
