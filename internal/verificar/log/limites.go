package log

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/tiles"
)

// A hostile log cannot hurt its verifier (CONTRACT §7): every answer is
// read up to what its kind can hold, after decompression, and no further;
// waits and redirects are bounded; a checkpoint of absurd size is refused
// before any tile is listed (docs/decisions.md).
const (
	// TamanhoMaximo is the largest tree a checkpoint may claim: 2^40
	// records is a thousand times any civic lottery, and far below the
	// sizes whose tile counts overflow a walk.
	TamanhoMaximo = int64(1) << 40
	// LimiteCheckpoint is a signed checkpoint's body: three lines and a
	// few signature lines (a hundred cosignatures fit).
	LimiteCheckpoint = 16 << 10
	// LimiteChave is a verifier key line.
	LimiteChave = 4 << 10
	// LimiteJSON is a JSON answer: a draw with its record (at most 64 KiB,
	// escaped) and proof, the summary.
	LimiteJSON = 1 << 20
	// LimiteEstatisticas is /estatisticas, one line per counsellor.
	LimiteEstatisticas = 16 << 20
	// LimiteErro is what is read of an answer other than 200.
	LimiteErro = 4 << 10
	// OrcamentoTiles is how many bytes of tile bodies a walk holds at once
	// (fetched and not yet consumed), beyond the one tile that is always
	// let through: TilesEmVoo bundles of the largest size (16 MiB each)
	// would be 270 MB.
	OrcamentoTiles = 64 << 20
	// Redirecionamentos is how many redirects one request follows.
	Redirecionamentos = 5
)

// EsperaMaxima is the most a request waits out 429s in all: a Retry-After
// beyond it is refused at once (waiting could not succeed within it), one
// within it is honoured until the sum reaches it. The service's own limit
// is per minute, so two windows.
var EsperaMaxima = 2 * time.Minute

// limiteDe is the most bytes path's answer may hold.
func limiteDe(path string) int64 {
	switch {
	case path == "/checkpoint":
		return LimiteCheckpoint
	case path == "/chave":
		return LimiteChave
	case path == "/estatisticas":
		return LimiteEstatisticas
	case strings.HasPrefix(path, "/tile/"):
		t, err := tiles.ParsePath(path[1:])
		if err != nil {
			return LimiteErro
		}
		if t.L == tiles.Entries {
			return tiles.MaxBundle(t.W)
		}
		return int64(t.W) * tlog.HashSize
	}
	return LimiteJSON
}

// redirecionar is the HTTP client's redirect policy: at most
// Redirecionamentos hops, and a URL seen twice is a loop.
func redirecionar(req *http.Request, via []*http.Request) error {
	for _, v := range via {
		if v.URL.String() == req.URL.String() {
			return fmt.Errorf("redirect loop: %s redirected back to itself", registro.Limpo(req.URL.String()))
		}
	}
	if len(via) > Redirecionamentos {
		return fmt.Errorf("more than %d redirects (last to %s)", Redirecionamentos, registro.Limpo(req.URL.String()))
	}
	return nil
}

// ErrGrande is in the error of an answer bigger than its kind can hold.
var ErrGrande = errors.New("answer too large")

// lerAte reads r up to limite bytes; one more is ErrGrande. reservar, when
// set, is asked for each growth of the buffer before it is made (the
// walk's orcamento); the buffer's capacity is returned for its release.
func lerAte(r io.Reader, limite, tamanho int64, reservar func(n int64) error) (b []byte, reservado int64, err error) {
	inicial := int64(32 << 10)
	if tamanho >= 0 && tamanho <= limite {
		// Content-Length is a hint: a body longer than it is read on.
		inicial = tamanho + 1
	}
	inicial = min(inicial, limite+1)
	crescer := func(n int64) error {
		if reservar != nil {
			if err := reservar(n); err != nil {
				return err
			}
		}
		reservado += n
		return nil
	}
	if err := crescer(inicial); err != nil {
		return nil, reservado, err
	}
	b = make([]byte, 0, inicial)
	for {
		if len(b) == cap(b) {
			if int64(len(b)) > limite {
				return nil, reservado, ErrGrande
			}
			novo := min(2*int64(cap(b)), limite+1)
			if err := crescer(novo - int64(cap(b))); err != nil {
				return nil, reservado, err
			}
			b = append(make([]byte, 0, novo), b...)
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if errors.Is(err, io.EOF) {
			if int64(len(b)) > limite {
				return nil, reservado, ErrGrande
			}
			return b, reservado, nil
		}
		if err != nil {
			return nil, reservado, err
		}
	}
}

// orcamento bounds the bytes of tile bodies a walk holds at once. Each
// fetch has a turn (its tile's place in the walk); a fetch waits while the
// budget is spent, except the one whose turn is vez, the oldest the walk
// has not consumed: it always goes on, so the walk never waits on itself,
// and the memory held is the budget plus that one tile.
type orcamento struct {
	mu     sync.Mutex
	limite int64
	usado  int64
	vez    int64
	mudou  chan struct{}
}

func novoOrcamento(limite int64) *orcamento {
	return &orcamento{limite: limite, mudou: make(chan struct{})}
}

// reservar takes n bytes for the fetch of turn t.
func (o *orcamento) reservar(ctx context.Context, t, n int64) error {
	for {
		o.mu.Lock()
		if o.usado+n <= o.limite || t <= o.vez {
			o.usado += n
			o.mu.Unlock()
			return nil
		}
		ch := o.mudou
		o.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (o *orcamento) avisar() {
	close(o.mudou)
	o.mudou = make(chan struct{})
}

// liberar gives back n bytes.
func (o *orcamento) liberar(n int64) {
	o.mu.Lock()
	o.usado -= n
	o.avisar()
	o.mu.Unlock()
}

// avancar makes t the turn that always goes on.
func (o *orcamento) avancar(t int64) {
	o.mu.Lock()
	o.vez = t
	o.avisar()
	o.mu.Unlock()
}

// reserva is the hook lerAte asks for the fetch of turn t; nil for no
// budget.
func (o *orcamento) reserva(ctx context.Context, t int64) func(int64) error {
	if o == nil {
		return nil
	}
	return func(n int64) error { return o.reservar(ctx, t, n) }
}

// conferirTamanho refuses a checkpoint of absurd size before anything is
// fetched for it.
func conferirTamanho(cp registro.Checkpoint) error {
	if cp.Tamanho > TamanhoMaximo {
		return registro.NovaFalha("checkpoint.tamanho", cp.Tamanho, fmt.Sprintf("at most %d (2^40): refused before any tile is fetched", TamanhoMaximo))
	}
	return nil
}
