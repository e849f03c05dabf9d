package httpapi

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// A flood of scrapes shares one render per MetricasIntervalo, plain and
// gzipped alike; the next interval's scrape sees what changed since.
func TestMetricasUmaRenderizacaoPorIntervalo(t *testing.T) {
	t.Parallel()
	var renders atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := renders.Add(1)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		fmt.Fprintf(w, "d6a_renders %d\n", n)
	})
	var mu sync.Mutex
	agora := time.Date(2026, 12, 6, 17, 0, 0, 0, time.UTC)
	relogio := func() time.Time { mu.Lock(); defer mu.Unlock(); return agora }
	app := fiber.New()
	app.Get(RotaMetrics, rotaMetricas(h, MetricasIntervalo, relogio))
	pedir := func(gz bool) (string, http.Header) {
		req := httptest.NewRequest(http.MethodGet, RotaMetrics, nil)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		res, err := app.Test(req, 10_000)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var corpo io.Reader = res.Body
		if res.Header.Get("Content-Encoding") == "gzip" {
			if corpo, err = gzip.NewReader(res.Body); err != nil {
				t.Fatal(err)
			}
		}
		b, err := io.ReadAll(corpo)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("status %d, %v", res.StatusCode, err)
		}
		return string(b), res.Header
	}

	var wg sync.WaitGroup
	corpos := make(chan string, 64)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, _ := pedir(i%2 == 0)
			corpos <- c
		}()
	}
	wg.Wait()
	close(corpos)
	for c := range corpos {
		if c != "d6a_renders 1\n" {
			t.Errorf("scrape within the interval: %q, want the one render's", c)
		}
	}
	if n := renders.Load(); n != 1 {
		t.Errorf("64 scrapes within one interval rendered %d times, want 1", n)
	}
	c, hdr := pedir(true)
	if hdr.Get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8" || hdr.Get("Content-Encoding") != "gzip" {
		t.Errorf("headers %v", hdr)
	}
	mu.Lock()
	agora = agora.Add(MetricasIntervalo)
	mu.Unlock()
	if c, _ = pedir(false); c != "d6a_renders 2\n" {
		t.Errorf("after the interval: %q, want a new render", c)
	}
}

// The statistics' answer is encoded once, plain and gzipped, each
// revalidated by its own ETag, weak or strong, as fiber's etag middleware
// would.
func TestCorpoJSONRevalidado(t *testing.T) {
	t.Parallel()
	j, err := novoCorpoJSON(map[string]int{"sorteios": 3})
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New()
	app.Get("/x", func(c *fiber.Ctx) error { return j.enviar(c) })
	pedirComo := func(inm, ae string) *http.Response {
		req := httptest.NewRequest(http.MethodGet, "/x", nil)
		req.Header.Set("Accept-Encoding", ae)
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		res, err := app.Test(req, 10_000)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	pedir := func(inm string) *http.Response { return pedirComo(inm, "") }
	res := pedir("")
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !bytes.Equal(b, []byte(`{"sorteios":3}`)) || res.Header.Get("Content-Type") != "application/json" || res.Header.Get("ETag") != j.etag {
		t.Fatalf("%d %q %v", res.StatusCode, b, res.Header)
	}
	for _, inm := range []string{j.etag, "W/" + j.etag, `"outro", ` + j.etag} {
		if res := pedir(inm); res.StatusCode != http.StatusNotModified {
			t.Errorf("If-None-Match %s: %d, want 304", inm, res.StatusCode)
		}
	}
	if res := pedir(`"0-0"`); res.StatusCode != 200 {
		t.Errorf("a stale ETag: %d, want 200", res.StatusCode)
	}

	res = pedirComo(j.etag, "gzip, br")
	if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "gzip" || res.Header.Get("ETag") != j.etagZ || j.etagZ == j.etag {
		t.Fatalf("gzip asked with the plain ETag: %d %v", res.StatusCode, res.Header)
	}
	z, err := gzip.NewReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(z); err != nil || !bytes.Equal(b, []byte(`{"sorteios":3}`)) {
		t.Errorf("gzipped body %q, %v", b, err)
	}
	if res := pedirComo(j.etagZ, "gzip"); res.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match of the gzipped one: %d, want 304", res.StatusCode)
	}
}
