// Package navegador starts Debian's chromium, headless, for the tests that
// drive d6a's pages in a real browser (chromedp).
package navegador

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Abrir starts chromium with a fresh profile and returns its context. It
// skips only when chromium is missing and D6A_REQUIRE_CHROMIUM is unset
// (.ci/run sets it, so CI never skips silently).
func Abrir(t testing.TB) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("D6A_REQUIRE_CHROMIUM") != "" {
			t.Fatalf("D6A_REQUIRE_CHROMIUM is set but chromium is not installed: %v", err)
		}
		t.Skip("chromium not installed (apt-get install -y chromium); set D6A_REQUIRE_CHROMIUM=1 to make this a failure")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		// Without these, chromium's own connections are refused by a
		// closed network, many at a time.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1100, 1400),
		chromedp.UserDataDir(t.TempDir()),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	// A guard against a hung browser, not a timing check: a fresh profile's
	// first start, under make test's parallel packages on two cores, has
	// taken over 90 s here.
	ctx, cancelT := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// Capturar saves a full-page screenshot of what ctx shows to
// D6A_SCREENSHOTS/nome (PNG: quality 100) when that variable names a directory (how the
// screenshots in docs/ are made), and does nothing otherwise.
func Capturar(t testing.TB, ctx context.Context, nome string) {
	t.Helper()
	dir := os.Getenv("D6A_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(dir+"/"+nome, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Pagina opens url on a fresh document and waits until the verifier page
// is ready (it marks body[data-pronta] once its handlers are set and its
// panels have loaded): a click by position lands on the old document when
// navigating from the page to its own URL, and misses its button while the
// panels above it still grow.
func Pagina(url string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(url),
		chromedp.WaitReady(chromedp.CSS("body[data-pronta]")),
	)
}
