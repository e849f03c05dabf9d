// Package testemunha submits the transparency log's checkpoints to
// independent witnesses by C2SP tlog-witness (add-checkpoint, with the
// consistency proof from the size each witness last cosigned) and keeps
// the cosignatures they return (C2SP tlog-cosignature), which the
// checkpoint route serves appended (CONTRACT §7 "Witnesses", issue 23).
//
// A witness cosigns a checkpoint only if it is consistent with every
// checkpoint it cosigned before, so a reader who requires K cosignatures
// cannot be shown a fork unless K witnesses collude.
//
// Submissions never sit on the draw path: each witness has its own
// goroutine, at most one request in flight, always for the latest
// checkpoint; a witness that is down, slow or refusing only ages its
// latest cosignature (the metric and the alert say so).
package testemunha

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	fnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// Testemunha is one configured witness.
type Testemunha struct {
	// URL is the witness's base URL; it answers URL/add-checkpoint.
	URL string
	// Chave is its cosignature/v1 verifier key.
	Chave string
	// Nome is the key's name.
	Nome string

	verificador note.Verifier
}

// Analisar parses D6A_LOG_TESTEMUNHAS: comma-separated "URL VKEY" entries
// (CONTRACT §2).
func Analisar(s string) ([]Testemunha, error) {
	var out []Testemunha
	vistas := map[string]bool{}
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		campos := strings.Fields(e)
		if len(campos) != 2 {
			return nil, fmt.Errorf("%q: want \"URL VKEY\"", e)
		}
		u := campos[0]
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return nil, fmt.Errorf("%q: the URL must start with http:// or https://", u)
		}
		if !strings.HasSuffix(u, "/") {
			u += "/"
		}
		v, err := registro.VerificadorTestemunha(campos[1])
		if err != nil {
			return nil, err
		}
		if vistas[campos[1]] {
			return nil, fmt.Errorf("witness key %s listed twice", v.Name())
		}
		vistas[campos[1]] = true
		out = append(out, Testemunha{URL: u, Chave: campos[1], Nome: v.Name(), verificador: v})
	}
	return out, nil
}

// Observador is told each witness's outcomes (metrics).
type Observador interface {
	// Acompanhar starts a witness's age at desde, its latest cosignature
	// or, when it never cosigned, the start: a witness that never answers
	// ages too.
	Acompanhar(nome string, desde time.Time)
	Cossinou(nome string, em time.Time)
	Recusou(nome string, status int)
}

type nopObservador struct{}

func (nopObservador) Acompanhar(string, time.Time) {}
func (nopObservador) Cossinou(string, time.Time)   {}
func (nopObservador) Recusou(string, int)          {}

// Enviador submits the latest checkpoint to every witness.
type Enviador struct {
	DB          transparencia.DBTX
	Testemunhas []Testemunha
	HTTP        *http.Client
	Log         *slog.Logger
	Observador  Observador
	// Intervalo between two looks at the latest checkpoint when nothing
	// wakes a witness's goroutine (default 5 s): it is how soon a witness
	// that was down catches up.
	Intervalo time.Duration
	Now       func() time.Time

	mu       sync.Mutex
	acordar  []chan struct{}
	iniciado bool
}

// Acordar tells every witness's goroutine a checkpoint was signed; it
// never blocks.
func (e *Enviador) Acordar() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.acordar {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// Run submits until ctx ends.
func (e *Enviador) Run(ctx context.Context) {
	if e.HTTP == nil {
		e.HTTP = &http.Client{Timeout: 10 * time.Second}
	}
	if e.Log == nil {
		e.Log = slog.Default()
	}
	if e.Observador == nil {
		e.Observador = nopObservador{}
	}
	if e.Intervalo <= 0 {
		e.Intervalo = 5 * time.Second
	}
	if e.Now == nil {
		e.Now = time.Now
	}
	e.mu.Lock()
	for range e.Testemunhas {
		e.acordar = append(e.acordar, make(chan struct{}, 1))
	}
	e.mu.Unlock()
	var wg sync.WaitGroup
	for i, t := range e.Testemunhas {
		wg.Go(func() { e.seguir(ctx, t, e.acordar[i]) })
	}
	wg.Wait()
}

// seguir is one witness's goroutine.
func (e *Enviador) seguir(ctx context.Context, t Testemunha, acordar chan struct{}) {
	log := e.Log.With("testemunha", t.Nome, "url", t.URL)
	// What the witness last cosigned, as far as d6a knows; a 409 corrects it.
	conhecido, em, err := UltimaCossinatura(ctx, e.DB, t.Chave)
	if err != nil {
		log.Warn("testemunha: última cossinatura ilegível; começando do zero", "erro", err)
	}
	if conhecido == 0 {
		em = time.Now()
	}
	e.Observador.Acompanhar(t.Nome, em)
	tique := time.NewTicker(e.Intervalo)
	defer tique.Stop()
	for {
		nota, n, err := transparencia.UltimoCheckpoint(ctx, e.DB)
		if err == nil && n > conhecido {
			conhecido = e.submeter(ctx, log, t, []byte(nota), n, conhecido)
		} else if err != nil && !errors.Is(err, transparencia.ErrNaoEncontrado) && ctx.Err() == nil {
			log.Warn("testemunha: checkpoint ilegível", "erro", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-acordar:
		case <-tique.C:
		}
	}
}

// submeter sends the checkpoint of size n, from the witness's size old,
// and returns what the witness is now known to hold.
func (e *Enviador) submeter(ctx context.Context, log *slog.Logger, t Testemunha, nota []byte, n, old int64) int64 {
	// A 409 names the witness's size; the retry goes from it, once.
	for tentativa := 0; tentativa < 2; tentativa++ {
		status, corpo, err := e.pedir(ctx, t, nota, n, old)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				log.Warn("testemunha: indisponível", "tamanho", n, "erro", err)
				e.Observador.Recusou(t.Nome, 0)
			}
			return old
		case status == http.StatusOK:
			if err := e.guardar(ctx, t, nota, n, corpo); err != nil {
				log.Warn("testemunha: cossinatura inválida ou não gravada", "tamanho", n, "erro", err)
				e.Observador.Recusou(t.Nome, status)
				return old
			}
			log.Debug("testemunha: checkpoint cossinado", "tamanho", n)
			return n
		case status == http.StatusConflict:
			tam, perr := strconv.ParseInt(strings.TrimSpace(string(corpo)), 10, 64)
			if perr != nil || tam < 0 {
				log.Warn("testemunha: 409 sem tamanho legível", "corpo", string(corpo))
				e.Observador.Recusou(t.Nome, status)
				return old
			}
			if tam >= n {
				// It holds this checkpoint or a later one (another
				// instance submitted it): nothing to send.
				return tam
			}
			old = tam
		default:
			// 404 (no such log), 403 (unknown key, bad signature), 422 (not
			// consistent with what it cosigned: a fork, or a witness of
			// another log): a person must look.
			log.Error("testemunha: checkpoint recusado", "tamanho", n, "de", old, "status", status, "resposta", strings.TrimSpace(string(corpo)))
			e.Observador.Recusou(t.Nome, status)
			return old
		}
	}
	return old
}

// pedir posts one add-checkpoint request (C2SP tlog-witness).
func (e *Enviador) pedir(ctx context.Context, t Testemunha, nota []byte, n, old int64) (int, []byte, error) {
	var corpo bytes.Buffer
	fmt.Fprintf(&corpo, "old %d\n", old)
	if old > 0 && old < n {
		prova, err := tlog.ProveTree(n, old, transparencia.Leitor(ctx, e.DB))
		if err != nil {
			return 0, nil, fmt.Errorf("consistency proof %d → %d: %w", old, n, err)
		}
		for _, h := range prova {
			corpo.WriteString(base64.StdEncoding.EncodeToString(h[:]) + "\n")
		}
	}
	corpo.WriteString("\n")
	corpo.Write(nota)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL+"add-checkpoint", &corpo)
	if err != nil {
		return 0, nil, err
	}
	res, err := e.HTTP.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	return res.StatusCode, b, err
}

// guardar checks the witness's answer against its key and the checkpoint,
// and stores each cosignature.
func (e *Enviador) guardar(ctx context.Context, t Testemunha, nota []byte, n int64, corpo []byte) error {
	linhas, err := registro.LinhasCossinatura(corpo)
	if err != nil {
		return err
	}
	// The note with only the witness's lines must open under its key.
	texto, _, ok := bytes.Cut(nota, []byte("\n\n"))
	if !ok {
		return errors.New("checkpoint note without signatures")
	}
	so := append(append(append([]byte{}, texto...), "\n\n"...), strings.Join(linhas, "")...)
	aberta, err := note.Open(so, note.VerifierList(t.verificador))
	if err != nil {
		return fmt.Errorf("cosignature: %w", err)
	}
	for _, s := range aberta.Sigs {
		em, err := cossinadaEm(s)
		if err != nil {
			return err
		}
		c := registro.Cossinatura{Testemunha: s.Name, Chave: t.Chave, Linha: "— " + s.Name + " " + s.Base64 + "\n", Em: em}
		if err := GravarCossinatura(ctx, e.DB, n, c, e.Now().UTC()); err != nil {
			return err
		}
		e.Observador.Cossinou(t.Nome, em)
	}
	return nil
}

// cossinadaEm is the time inside a cosignature/v1.
func cossinadaEm(s note.Signature) (time.Time, error) {
	t, err := fnote.CoSigV1Timestamp(s)
	return t.UTC(), err
}
