package beacon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cloudflare/circl/ecc/bls12381"
)

// Errors of Cliente, for errors.Is.
var (
	// ErrCadeiaDiferente: a relay's /info is another chain (key or scheme).
	ErrCadeiaDiferente = errors.New("beacon: relay serves a different chain")
	// ErrNaoPublicada: no relay has the round yet (404/425).
	ErrNaoPublicada = errors.New("beacon: round not published yet")
)

// Defaults of Cliente.
const (
	TimeoutPadrao     = 2 * time.Second
	TentativasPadrao  = 2    // passes over the relay list per call
	CapacidadeCache   = 4096 // verified rounds kept
	ParalelismoPadrao = 8    // concurrent fetches in Rodadas
	limiteResposta    = 1 << 16
)

// Opcao configures a Cliente.
type Opcao func(*Cliente)

// ComTimeout bounds each HTTP request (default 2 s).
func ComTimeout(d time.Duration) Opcao { return func(c *Cliente) { c.timeout = d } }

// ComHTTP sets the http.Client (its own Timeout, if any, also applies).
func ComHTTP(h *http.Client) Opcao { return func(c *Cliente) { c.http = h } }

// ComTentativas sets how many passes over the relays a call makes (default 2).
func ComTentativas(n int) Opcao {
	return func(c *Cliente) {
		if n > 0 {
			c.tentativas = n
		}
	}
}

// Cliente reads one chain from several relays, tried in order. Every round
// it returns has been verified under the configured key; a relay that
// serves something else is skipped, never believed.
type Cliente struct {
	urls       []string
	chave      []byte
	pk         *bls12381.G2
	http       *http.Client
	timeout    time.Duration
	tentativas int

	mu     sync.Mutex
	cadeia *Cadeia
	cache  map[uint64]Rodada
	ordem  []uint64 // insertion order, for FIFO eviction
}

// NovoCliente makes a client for the chain whose public key is chave,
// served by the relays at urls (base URLs such as
// https://api.drand.sh/52db9ba7…, tried in order).
func NovoCliente(urls []string, chave []byte, opts ...Opcao) (*Cliente, error) {
	c := &Cliente{http: http.DefaultClient, timeout: TimeoutPadrao, tentativas: TentativasPadrao, cache: make(map[uint64]Rodada)}
	for _, u := range urls {
		u = strings.TrimRight(strings.TrimSpace(u), "/")
		if u == "" {
			continue
		}
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return nil, fmt.Errorf("beacon: relay URL %q is not http(s)", u)
		}
		c.urls = append(c.urls, u)
	}
	if len(c.urls) == 0 {
		return nil, errors.New("beacon: no relay URL")
	}
	pk, err := chaveDecodificada(chave)
	if err != nil {
		return nil, err
	}
	c.pk = pk
	c.chave = append([]byte(nil), chave...)
	for _, o := range opts {
		o(c)
	}
	if c.timeout <= 0 {
		c.timeout = TimeoutPadrao
	}
	return c, nil
}

// Cadeia fetches /info from the first relay that answers and checks it is
// the configured chain (same public key and scheme); the result is cached.
// A relay that answers with another chain is a configuration error and is
// refused at once (ErrCadeiaDiferente) rather than skipped.
func (c *Cliente) Cadeia(ctx context.Context) (Cadeia, error) {
	c.mu.Lock()
	if c.cadeia != nil {
		cad := *c.cadeia
		c.mu.Unlock()
		return cad, nil
	}
	c.mu.Unlock()

	var cad Cadeia
	err := c.percorrer(ctx, "/info", func(u string, corpo []byte) error {
		var x Cadeia
		if err := json.Unmarshal(corpo, &x); err != nil {
			return fmt.Errorf("beacon: %s/info: %w", u, err)
		}
		if x.Esquema != Esquema {
			return pararCom(fmt.Errorf("%w: %s/info has scheme %q, want %q", ErrCadeiaDiferente, u, x.Esquema, Esquema))
		}
		if !bytes.Equal(x.ChavePublica, c.chave) {
			return pararCom(fmt.Errorf("%w: %s/info has public key %x…, configured %x…", ErrCadeiaDiferente, u, prefixo(x.ChavePublica), prefixo(c.chave)))
		}
		if err := x.Validar(); err != nil {
			return pararCom(fmt.Errorf("beacon: %s/info: %w", u, err))
		}
		cad = x
		return nil
	})
	if err != nil {
		return Cadeia{}, err
	}
	c.mu.Lock()
	c.cadeia = &cad
	c.mu.Unlock()
	return cad, nil
}

func prefixo(b []byte) []byte {
	if len(b) > 8 {
		return b[:8]
	}
	return b
}

// Rodada fetches round r and returns it only once verified. A relay whose
// answer does not verify (or is another round) is skipped for the next.
func (c *Cliente) Rodada(ctx context.Context, r uint64) (Rodada, error) {
	if r == 0 {
		return Rodada{}, errors.New("beacon: round 0 does not exist")
	}
	if x, ok := c.doCache(r); ok {
		return x, nil
	}
	var res Rodada
	err := c.percorrer(ctx, "/public/"+strconv.FormatUint(r, 10), func(u string, corpo []byte) error {
		x, err := lerRodada(u, r, corpo)
		if err != nil {
			return err
		}
		if err := verificar(c.pk, x); err != nil {
			return fmt.Errorf("beacon: %s: %w", u, err)
		}
		res = x
		return nil
	})
	if err != nil {
		return Rodada{}, err
	}
	c.guardar(res)
	return res, nil
}

func lerRodada(u string, r uint64, corpo []byte) (Rodada, error) {
	var x Rodada
	if err := json.Unmarshal(corpo, &x); err != nil {
		return Rodada{}, fmt.Errorf("beacon: %s round %d: %w", u, r, err)
	}
	if x.Numero != r {
		return Rodada{}, fmt.Errorf("%w: %s answered round %d when asked for %d", ErrAssinatura, u, x.Numero, r)
	}
	return x, nil
}

// Esperar blocks until round r is published and verified: it sleeps until
// the round is due, then fetches, retrying every quarter period until ctx
// ends. On cancellation the error wraps ctx.Err() (errors.Is works) and
// names the last failure, if any.
func (c *Cliente) Esperar(ctx context.Context, r uint64) (Rodada, error) {
	if x, ok := c.doCache(r); ok {
		return x, nil
	}
	cad, err := c.Cadeia(ctx)
	if err != nil {
		return Rodada{}, err
	}
	if err := dormir(ctx, time.Until(cad.PublicadaEm(r))); err != nil {
		return Rodada{}, err
	}
	intervalo := cad.Periodo / 4
	if intervalo < 50*time.Millisecond {
		intervalo = 50 * time.Millisecond
	}
	for {
		x, err := c.Rodada(ctx, r)
		if err == nil {
			return x, nil
		}
		if ctx.Err() != nil {
			return Rodada{}, fmt.Errorf("%w (waiting for round %d; last error: %v)", ctx.Err(), r, err)
		}
		if errCtx := dormir(ctx, intervalo); errCtx != nil {
			return Rodada{}, fmt.Errorf("%w (waiting for round %d; last error: %v)", errCtx, r, err)
		}
	}
}

func dormir(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Rodadas fetches and verifies several rounds for catch-up: up to 8
// fetches at a time, then one batch check (VerificarLote); if the batch
// fails, each round is fetched again one by one from the relays in order,
// so a bad relay cannot make a good round fail. It returns every round
// that verified, and an error naming the first round that did not.
func (c *Cliente) Rodadas(ctx context.Context, rs []uint64) (map[uint64]Rodada, error) {
	res := make(map[uint64]Rodada, len(rs))
	var primeiro error
	var falta []uint64
	for _, r := range rs {
		if r == 0 {
			if primeiro == nil {
				primeiro = errors.New("beacon: round 0 does not exist")
			}
		} else if x, ok := c.doCache(r); ok {
			res[r] = x
		} else {
			falta = append(falta, r)
		}
	}
	falta = unicos(falta)

	brutas := make([]Rodada, len(falta))
	ok := make([]bool, len(falta))
	sem := make(chan struct{}, ParalelismoPadrao)
	var wg sync.WaitGroup
	for i, r := range falta {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ok[i] = c.percorrer(ctx, "/public/"+strconv.FormatUint(r, 10), func(u string, corpo []byte) error {
				x, err := lerRodada(u, r, corpo)
				brutas[i] = x
				return err
			}) == nil
		}()
	}
	wg.Wait()

	var lote []Rodada
	for i := range falta {
		if ok[i] {
			lote = append(lote, brutas[i])
		}
	}
	if verificarLote(c.pk, lote) == nil {
		for _, x := range lote {
			c.guardar(x)
			res[x.Numero] = x
		}
	}
	// What the batch did not settle goes one by one through Rodada, which
	// verifies each relay's answer and moves on to the next relay.
	for _, r := range falta {
		if _, feito := res[r]; feito {
			continue
		}
		x, err := c.Rodada(ctx, r)
		if err != nil {
			if primeiro == nil {
				primeiro = fmt.Errorf("beacon: round %d: %w", r, err)
			}
			continue
		}
		res[r] = x
	}
	return res, primeiro
}

func unicos(rs []uint64) []uint64 {
	vistos := make(map[uint64]bool, len(rs))
	out := rs[:0]
	for _, r := range rs {
		if !vistos[r] {
			vistos[r] = true
			out = append(out, r)
		}
	}
	return out
}

func (c *Cliente) doCache(r uint64) (Rodada, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	x, ok := c.cache[r]
	return x, ok
}

func (c *Cliente) guardar(x Rodada) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cache[x.Numero]; ok {
		return
	}
	if len(c.ordem) >= CapacidadeCache {
		delete(c.cache, c.ordem[0])
		c.ordem = c.ordem[1:]
	}
	c.cache[x.Numero] = x
	c.ordem = append(c.ordem, x.Numero)
}

// parar marks an error that must not fall through to the next relay.
type parar struct{ error }

func (p parar) Unwrap() error { return p.error }

func pararCom(err error) error { return parar{err} }

// percorrer GETs caminho from each relay in order, up to c.tentativas
// passes, until aceitar accepts a 200 body. Each request has its own
// timeout, so a silent relay costs one timeout before the next is tried.
// 404 and 425 mean "not yet" (ErrNaoPublicada if every relay says so).
func (c *Cliente) percorrer(ctx context.Context, caminho string, aceitar func(u string, corpo []byte) error) error {
	var erros []error
	for tentativa := 0; tentativa < c.tentativas; tentativa++ {
		if tentativa > 0 {
			if err := dormir(ctx, 100*time.Millisecond*time.Duration(tentativa)); err != nil {
				return errors.Join(append(erros, err)...)
			}
		}
		erros = erros[:0]
		naoPublicada := true
		for _, u := range c.urls {
			corpo, status, err := c.get(ctx, u+caminho)
			if err == nil && status == http.StatusOK {
				err = aceitar(u, corpo)
				if err == nil {
					return nil
				}
				var p parar
				if errors.As(err, &p) {
					return p.error
				}
				naoPublicada = false
			} else if err == nil {
				err = fmt.Errorf("beacon: GET %s%s: HTTP %d", u, caminho, status)
				if status != http.StatusNotFound && status != http.StatusTooEarly {
					naoPublicada = false
				}
			} else {
				naoPublicada = false
			}
			erros = append(erros, err)
			if ctx.Err() != nil {
				return errors.Join(append(erros, ctx.Err())...)
			}
		}
		if naoPublicada {
			// Every relay said "not yet": retrying now would say it again.
			return fmt.Errorf("%w: %s", ErrNaoPublicada, caminho)
		}
	}
	return errors.Join(erros...)
}

func (c *Cliente) get(ctx context.Context, url string) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	corpo, err := io.ReadAll(io.LimitReader(resp.Body, limiteResposta))
	if err != nil {
		return nil, resp.StatusCode, fmt.Errorf("beacon: GET %s: %w", url, err)
	}
	return corpo, resp.StatusCode, nil
}
