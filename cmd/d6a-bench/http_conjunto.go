package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
)

// The working-set run (issue 24): -cidadaos more counsellors, each with
// an RS256 token whose kid the server finds in a JWKS the bench serves
// (D6A_JWT_JWKS_URL), asked uniformly at random, so the route's caches
// hold the whole working set instead of a few hot entries.

// Targets of the working-set run, against the bare handler of the same run.
const (
	alvoRazaoConjunto = 0.50 // req/s ≥ 50% of the bare handler's
	alvoP99Conjunto   = 2.0  // closed-loop p99 ≤ 2× the bare handler's
)

const kidConjunto = "d6a-bench"

type conjuntoHTTP struct {
	n, ativos               int
	semear, assinar, encher time.Duration
	// The bare handler measured again just before the random run (on the
	// new process, in the same conditions): the targets' yardstick.
	bare, rodada resultado
	// The server's counters before and after each citizen's first
	// request, and around the run (warm-up included).
	inicio, cheio, antes, depois metricasHTTP
	// The server process's memory: started (probe answered), once every
	// citizen asked once, after the run.
	memInicio, memCheia, memFim memoria
}

// rodarConjunto seeds and signs the working set, replaces the server
// process with one configured with the JWKS, asks every citizen once (each
// answer checked) and then runs the closed loop over random citizens.
func (a *ambienteHTTP) rodarConjunto(ctx context.Context, passo func(string)) (*conjuntoHTTP, error) {
	o := a.o
	c := &conjuntoHTTP{n: o.cidadaos, ativos: o.cidadaos * o.ativos / o.conselheiros}
	t := time.Now()
	cids, err := a.semear(ctx, c.n, c.ativos)
	if err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	c.semear = time.Since(t)
	logf("working set: %s more counsellors registered in %s; signing their RS256 tokens", milhares(c.n), c.semear.Round(time.Millisecond))
	chave, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	t = time.Now()
	tokens, err := assinarRS256(chave, kidConjunto, append(cids, uuid.New())) // the last: the cache probe
	if err != nil {
		return nil, err
	}
	c.assinar = time.Since(t)
	sonda, tokens := tokens[len(tokens)-1], tokens[:len(tokens)-1]
	logf("    %s tokens signed in %s", milhares(len(tokens)), c.assinar.Round(time.Millisecond))

	a.jwks = httptest.NewServer(jwks(&chave.PublicKey))
	// The other runs are over: their process gives way to one that takes
	// the identity provider's keys, as d6a serve would.
	if err := a.servidor.parar(10 * time.Second); err != nil {
		return nil, fmt.Errorf("server process: %w", err)
	}
	if err := a.lancar("D6A_JWT_JWKS_URL="+a.jwks.URL, sonda, "server-jwks.log"); err != nil {
		return nil, fmt.Errorf("server process (JWKS): %w", err)
	}
	pid := a.servidor.Pid()
	c.inicio, c.memInicio = a.metricasServidor(), lerMemoria(pid)
	t = time.Now()
	if err := pedirTodos(ctx, a.enderecoD6A, o.c, tokens, 200, situacoes(cids, c.ativos)); err != nil {
		return nil, fmt.Errorf("working set, first requests: %w", err)
	}
	c.encher = time.Since(t)
	c.cheio, c.memCheia = a.metricasServidor(), lerMemoria(pid)
	logf("    every citizen asked once in %s; server RSS %s", c.encher.Round(time.Millisecond), mib(c.memCheia.RSS))

	passo(fmt.Sprintf("closed loop, bare fiber handler again: %d connections, %s + %s warm-up", o.c, o.d, o.aquecimento))
	if c.bare, err = a.rodarHTTP(ctx, "bare fiber handler, just before the working set", a.enderecoBare, tokens, o.c, 0, 200, true); err != nil {
		return nil, err
	}
	passo(fmt.Sprintf("closed loop, situacao route over %s citizens at random (RS256, JWKS): %d connections, %s + %s warm-up", milhares(c.n), o.c, o.d, o.aquecimento))
	c.antes = a.metricasServidor()
	if c.rodada, err = a.rodarHTTP(ctx, fmt.Sprintf("situacao route, %s citizens at random (RS256 through a JWKS)", milhares(c.n)), a.enderecoD6A, tokens, o.c, 0, 200, true); err != nil {
		return nil, err
	}
	c.depois, c.memFim = a.metricasServidor(), lerMemoria(pid)
	return c, nil
}

// assinarRS256 signs one token per citizen, 24 h long, under kid (if any),
// on every core: an RSA-2048 signature costs about 1 ms of a core here,
// so 100,000 take about a minute on 2 cores (docs/bench.md).
func assinarRS256(k *rsa.PrivateKey, kid string, cids []uuid.UUID) ([]string, error) {
	out := make([]string, len(cids))
	agora := time.Now()
	w := runtime.NumCPU()
	return out, paralelo(w, func(j int) error {
		for i := j; i < len(cids); i += w {
			t := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.RegisteredClaims{
				Subject: cids[i].String(), IssuedAt: jwt.NewNumericDate(agora), ExpiresAt: jwt.NewNumericDate(agora.Add(24 * time.Hour)),
			})
			if kid != "" {
				t.Header["kid"] = kid
			}
			var err error
			if out[i], err = t.SignedString(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// jwks serves k as the identity provider's key set.
func jwks(k *rsa.PublicKey) http.Handler {
	b64 := base64.RawURLEncoding.EncodeToString
	corpo := fmt.Sprintf(`{"keys":[{"kty":"RSA","kid":%q,"alg":"RS256","use":"sig","n":%q,"e":%q}]}`,
		kidConjunto, b64(k.N.Bytes()), b64(big.NewInt(int64(k.E)).Bytes()))
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, corpo)
	})
}

// paralelo runs f(0) … f(w-1) at once and returns the first error.
func paralelo(w int, f func(j int) error) error {
	erros := make([]error, w)
	var wg sync.WaitGroup
	for j := range w {
		wg.Go(func() { erros[j] = f(j) })
	}
	wg.Wait()
	return cmp.Or(erros...)
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
