package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/mod/sumdb/note"

	"github.com/formigueiro/d6a/internal/procstat"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// hostil is a log that signs honestly (the test's key) and serves what the
// case asks for; tile answers the tile routes.
type hostil struct {
	skey, vkey string
	tamanho    int64
	// checkpoint, when set, replaces the signed checkpoint's body.
	checkpoint []byte
	tile       http.HandlerFunc
	outras     http.HandlerFunc
}

func novoHostil(t *testing.T, tamanho int64) *hostil {
	t.Helper()
	skey, vkey, err := transparencia.GerarChave(registro.OrigemPadrao)
	if err != nil {
		t.Fatal(err)
	}
	return &hostil{skey: skey, vkey: vkey, tamanho: tamanho}
}

func (h *hostil) nota(t *testing.T) []byte {
	t.Helper()
	s, err := note.NewSigner(h.skey)
	if err != nil {
		t.Fatal(err)
	}
	cp := registro.Checkpoint{Origem: registro.OrigemPadrao, Tamanho: h.tamanho}
	n, err := note.Sign(&note.Note{Text: cp.Texto()}, s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (h *hostil) servir(t *testing.T) string {
	t.Helper()
	nota := h.nota(t)
	if h.checkpoint != nil {
		nota = h.checkpoint
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := strings.TrimPrefix(r.URL.Path, "/d6a/transparencia")
		switch {
		case p == "/checkpoint":
			_, _ = w.Write(nota)
		case p == "/chave":
			_, _ = io.WriteString(w, h.vkey)
		case p == "/resumo":
			_, _ = io.WriteString(w, `{"gatilho_desde":0}`)
		case strings.HasPrefix(p, "/tile/") && h.tile != nil:
			h.tile(w, r)
		case h.outras != nil:
			h.outras(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// bomba is 64 MiB of zeros, gzipped (64 KiB on the wire).
func bomba(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	z, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for range 64 {
		_, _ = z.Write(zeros)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// rodarMedindo runs the real binary as rodar does, within limite, and
// returns its peak RSS in MB: VmHWM, read every few milliseconds while it
// runs (procstat.PeakRSS says why not getrusage); the last reading is at
// most that long before the exit.
func rodarMedindo(t *testing.T, limite time.Duration, bin string, args ...string) (code int, stdout, stderr string, mb int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limite)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "D6A_") && !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	inicio := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fim := make(chan struct{})
	pico := make(chan int64)
	go func() {
		var kb int64
		for {
			if v, ok := procstat.PeakRSS(cmd.Process.Pid); ok {
				kb = max(kb, v)
			}
			select {
			case <-fim:
				pico <- kb
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	// Wait reaps the child: until then /proc/<pid> stays readable, and
	// the poller's last reading is of the image's final peak only if the
	// exit is not yet reaped; a zombie's status has no VmHWM.
	err := cmd.Wait()
	close(fim)
	mb = <-pico / 1024
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%v: still running after %s: %q", args, limite, e.String())
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatal(err)
	}
	t.Logf("%s: exit %d in %s, peak RSS %d MB", strings.Join(args, " "), code, time.Since(inicio).Round(time.Millisecond), mb)
	return code, o.String(), e.String(), mb
}

// CONTRACT §7 "A hostile log cannot hurt its verifier": against a log that
// signs honestly but serves bombs, oversize tiles, redirect loops, endless
// Retry-After or an absurd size, `verify --url` ends within a minute,
// under 256 MB, exiting 1 (the log failed) or 2 (unreachable), naming what
// it refused.
func TestVerifyURLServidorHostil(t *testing.T) {
	bin := d6aBin(t)
	gz := bomba(t)
	// A bundle as large as a bundle can be: 256 entries of 65,535 bytes.
	var maximo []byte
	for range 256 {
		maximo = binary.BigEndian.AppendUint16(maximo, 0xFFFF)
		maximo = append(maximo, bytes.Repeat([]byte{'x'}, 0xFFFF)...)
	}
	zeros := make([]byte, 1<<20)
	casos := []struct {
		nome    string
		tamanho int64
		prep    func(h *hostil)
		extra   []string
		code    int
		nomeia  string
	}{
		{"gzip bomb, Content-Encoding gzip", 4096, func(h *hostil) {
			h.tile = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Encoding", "gzip")
				_, _ = w.Write(gz)
			}
		}, nil, 1, "read no further"},
		{"gzip bomb as a raw body", 4096, func(h *hostil) {
			h.tile = func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(gz) }
		}, nil, 1, "resposta /tile/0/000"},
		{"64 MiB of zeros, no length", 4096, func(h *hostil) {
			h.tile = func(w http.ResponseWriter, r *http.Request) {
				for range 64 {
					if _, err := w.Write(zeros); err != nil {
						return
					}
				}
			}
		}, nil, 1, "more than 8192 bytes"},
		{"bundles of the largest size", 256 * 32, func(h *hostil) {
			h.tile = func(w http.ResponseWriter, r *http.Request) {
				if strings.Contains(r.URL.Path, "/entries/") {
					_, _ = w.Write(maximo)
					return
				}
				_, _ = w.Write(make([]byte, 256*32))
			}
		}, nil, 1, "FALHA"},
		{"redirect loop", 4096, func(h *hostil) {
			h.tile = func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, r.URL.Path, http.StatusFound) }
		}, nil, 2, "redirect loop"},
		{"endless redirects", 4096, func(h *hostil) {
			h.tile = func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, r.URL.Path+"?"+strconv.Itoa(len(r.URL.RawQuery)+1)+r.URL.RawQuery, http.StatusFound)
			}
		}, nil, 2, "more than 5 redirects"},
		{"Retry-After: 999999", 4096, func(h *hostil) {
			h.tile = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "999999")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		}, nil, 2, `Retry-After "999999" refused`},
		{"a tile of the signed tree missing", 4096, func(h *hostil) {
			h.tile = http.NotFound
		}, nil, 1, `tile/0/000: found "not served"`},
		{"size 2^62", 1 << 62, nil, nil, 1, "checkpoint.tamanho"},
		{"size 2^62, mirrored", 1 << 62, nil, []string{"--espelhar", t.TempDir()}, 1, "checkpoint.tamanho"},
		{"gzip bomb, mirrored", 4096, func(h *hostil) {
			h.tile = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Encoding", "gzip")
				_, _ = w.Write(gz)
			}
		}, []string{"--espelhar", t.TempDir()}, 1, "read no further"},
		{"a checkpoint of 1 MiB", 4096, func(h *hostil) {
			h.checkpoint = append(h.nota(t), bytes.Repeat([]byte("— x\n"), 1<<18)...)
		}, nil, 1, "resposta /checkpoint"},
	}
	for _, c := range casos {
		t.Run(c.nome, func(t *testing.T) {
			h := novoHostil(t, c.tamanho)
			if c.prep != nil {
				c.prep(h)
			}
			url := h.servir(t)
			args := append([]string{"verify", "--url", url, "--chave", h.vkey}, c.extra...)
			if c.extra == nil {
				args = append(args, "--all")
			}
			code, out, errOut, mb := rodarMedindo(t, 60*time.Second, bin, args...)
			if code != c.code || !strings.Contains(errOut, c.nomeia) {
				t.Errorf("exit %d, want %d naming %q: %q %q", code, c.code, c.nomeia, out, errOut)
			}
			if mb >= 256 {
				t.Errorf("peak RSS %d MB, want under 256", mb)
			}
		})
	}
}

// A server's text reaches the terminal escaped: an `erro` with escape
// sequences and a forged line is printed as Go escapes.
func TestVerifyURLEscapaTextoDoServidor(t *testing.T) {
	bin := d6aBin(t)
	h := novoHostil(t, 4)
	h.outras = func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"erro":"\u001b[2J\u001b[32mOK\rnada\nd6a verify: OK\u009b\u202e"}`)
	}
	url := h.servir(t)
	code, out, errOut := rodar(t, bin, "verify", "--url", url, "--chave", h.vkey, "--event-id", uuid.NewString())
	if code != 2 || strings.ContainsAny(errOut, "\x1b\r\u009b\u202e") || strings.Count(errOut, "\n") != 1 ||
		!strings.Contains(errOut, `\x1b[2J\x1b[32mOK\x0dnada\x0ad6a verify: OK\u009b\u202e`) {
		t.Errorf("erro printed raw: %d %q %q", code, out, errOut)
	}
}

// `--chave` given the signer's private line by mistake: exit 2, saying
// which kind of key it is, the key never printed back; and a malformed
// key is not echoed either.
func TestVerifyURLChavePrivada(t *testing.T) {
	bin := d6aBin(t)
	h := novoHostil(t, 4)
	url := h.servir(t)
	// PRIVATE+KEY+name+hash+base64: the base64 may itself hold a '+', so
	// the secret is the fifth field whole, never an empty tail that every
	// output "contains".
	segredo := strings.SplitN(h.skey, "+", 5)[4]
	for _, args := range [][]string{
		{"--chave", h.skey, "--all"},
		{"--chave", h.skey + "\n" + h.vkey + "\n", "--all"},
		{"--testemunha", h.skey, "--all"},
	} {
		code, out, errOut := rodar(t, bin, append([]string{"verify", "--url", url}, args...)...)
		if code != 2 || strings.Contains(out+errOut, segredo) || !strings.Contains(errOut, "signer (private) key") {
			t.Errorf("%s: %d %q %q", args[0], code, out, errOut)
		}
	}
	code, out, errOut := rodar(t, bin, "verify", "--url", url, "--chave", "nao-e-chave+"+segredo, "--all")
	if code != 2 || strings.Contains(out+errOut, segredo) || !strings.Contains(errOut, "not a note verifier key") {
		t.Errorf("--chave malformed: %d %q %q", code, out, errOut)
	}
}
