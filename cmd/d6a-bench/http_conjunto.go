package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"io"
	"math"
	"math/big"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/formigueiro/d6a/internal/httpapi"
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
	tokens, err := assinarRS256(chave, append(cids, uuid.New())) // the last: the cache probe
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
	if err := a.encher(ctx, cids, tokens, c.ativos); err != nil {
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

// assinarRS256 signs one token per citizen, 24 h long, under kidConjunto,
// on every core: an RSA-2048 signature costs about 1 ms of a core here,
// so 100,000 take about a minute on 2 cores (docs/bench.md).
func assinarRS256(k *rsa.PrivateKey, cids []uuid.UUID) ([]string, error) {
	out := make([]string, len(cids))
	agora := time.Now()
	w := runtime.NumCPU()
	return out, paralelo(w, func(j int) error {
		for i := j; i < len(cids); i += w {
			t := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.RegisteredClaims{
				Subject: cids[i].String(), IssuedAt: jwt.NewNumericDate(agora), ExpiresAt: jwt.NewNumericDate(agora.Add(24 * time.Hour)),
			})
			t.Header["kid"] = kidConjunto
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

// encher asks each citizen once over -c connections and checks every
// answer: what a citizen's first request costs, and the caches filled.
func (a *ambienteHTTP) encher(ctx context.Context, cids []uuid.UUID, tokens []string, ativos int) error {
	hc := novoCliente(a.enderecoD6A, a.o.c)
	var prox atomic.Int64
	return paralelo(a.o.c, func(int) error {
		req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(res)
		req.SetRequestURI("http://" + a.enderecoD6A + httpapi.RotaSituacao)
		for i := int(prox.Add(1) - 1); i < len(tokens) && ctx.Err() == nil; i = int(prox.Add(1) - 1) {
			req.Header.Set("Authorization", "Bearer "+tokens[i])
			if err := hc.Do(req, res); err != nil {
				return err
			}
			if res.StatusCode() != 200 {
				return fmt.Errorf("citizen %d: status %d: %s", i, res.StatusCode(), res.Body())
			}
			if err := conferirSituacao(res.Body(), cids[i], i < ativos); err != nil {
				return fmt.Errorf("citizen %d: %w", i, err)
			}
		}
		return ctx.Err()
	})
}

// paralelo runs f(0) … f(w-1) at once and returns the first error.
func paralelo(w int, f func(j int) error) error {
	erros := make(chan error, w)
	var wg sync.WaitGroup
	for j := range w {
		wg.Add(1)
		go func() { defer wg.Done(); erros <- f(j) }()
	}
	wg.Wait()
	close(erros)
	for err := range erros {
		if err != nil {
			return err
		}
	}
	return nil
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// acertos is "99.99% hits (h hits, m misses)" of a counter pair.
func acertos(hm [2]float64) string {
	if hm[0]+hm[1] == 0 {
		return "no lookups"
	}
	return fmt.Sprintf("**%.2f%% hits** (%s hits, %s misses)", 100*hm[0]/max(1, hm[0]+hm[1]), milhares(int(hm[0])), milhares(int(hm[1])))
}

// conjuntoTexto is the working-set run's paragraph.
func (r *relatorioHTTP) conjuntoTexto() string {
	c := r.conjunto
	d := c.depois.menos(c.antes)
	var b strings.Builder
	fmt.Fprintf(&b, "**Working set** (the rows of %s citizens and of the bare handler just before it): %s more counsellors registered the same way (%s with an active assignment; seeded in %s), each with its own RS256 token (2048-bit key, `kid` `%s`, signed on %d cores before the runs in %s, %.2f ms per signature) verified through `D6A_JWT_JWKS_URL`, a JWKS the bench serves on loopback. The other runs' server process is stopped and a new one started with the JWKS in place of the secret (the caches at their defaults: `D6A_TOKENS_CACHE` and `D6A_SITUACAO_CACHE`, %s each). Each citizen then asked once, every answer checked (%s, %.0f requests/s: a first request pays an RS256 verification and a database read); then the bare handler was measured again on the new process, and the closed loop sent each request with a citizen drawn uniformly at random. ",
		milhares(c.n), milhares(c.n), milhares(c.ativos), c.semear.Round(time.Second), kidConjunto, runtime.NumCPU(), c.assinar.Round(time.Second),
		float64(c.assinar.Milliseconds())*float64(runtime.NumCPU())/float64(max(1, c.n+1)), milhares(r.a.tamanhoCache),
		c.encher.Round(time.Second), float64(c.n)/max(0.001, c.encher.Seconds()))
	caches := func(m metricasHTTP) string {
		return fmt.Sprintf("verified tokens %s, situacao %s, JWKS keys %s", acertos(m.tokens), acertos([2]float64{m.hit, m.miss}), acertos(m.jwks))
	}
	fmt.Fprintf(&b, "Caches (`d6a_tokens_cache_total`, `d6a_situacao_cache_total`, `d6a_jwks_cache_total`: one kid lookup per signature verified; from the server's /metrics): over the first requests %s; **over the random run** (warm-up included) %s. A situacao entry older than `httpapi.CacheTTL` (%s) is read again, so situacao misses grow with the time since a citizen's first request. ",
		caches(c.cheio.menos(c.inicio)), caches(d), httpapi.CacheTTL)
	fmt.Fprintf(&b, "**Memory** of the server process (VmRSS, which includes the Go heap's headroom under the default GOGC; the process also holds the idle cache-off and bare apps): %s started, %s once the %s citizens' tokens and situations were cached (each cache bounded at %s entries), %s after the run (peak %s): about %s bytes per citizen for its cached token and situation.",
		mib(c.memInicio.RSS), mib(c.memCheia.RSS), milhares(c.n), milhares(r.a.tamanhoCache), mib(c.memFim.RSS), mib(c.memFim.HWM),
		milhares(int(c.memCheia.RSS-c.memInicio.RSS)/max(1, c.n)))
	return b.String()
}

func veredito(ok bool, por string) string {
	if ok {
		return "**met** — met by " + por
	}
	return "**missed** — missed by " + por
}

// alvosConjunto are the working-set run's targets.
func (r *relatorioHTTP) alvosConjunto() []alvo {
	x, bare := r.conjunto.rodada, r.conjunto.bare
	razao := x.Vazao() / max(1, bare.Vazao())
	a1 := alvo{
		Nome:   fmt.Sprintf("working set (%s citizens, RS256 through a JWKS): req/s ≥ 50%% of the bare fiber handler's measured just before (closed loop)", milhares(r.conjunto.n)),
		Medido: fmt.Sprintf("**%.1f%%** (%s ÷ %s req/s)", 100*razao, milhares(int(x.Vazao())), milhares(int(bare.Vazao()))),
		Ok:     razao >= alvoRazaoConjunto && x.Erros == 0,
	}
	a1.Veredito = veredito(a1.Ok, fmt.Sprintf("%.1f points", 100*math.Abs(razao-alvoRazaoConjunto)))
	limite := time.Duration(alvoP99Conjunto * float64(bare.Lat.P99))
	a2 := alvo{
		Nome:   "working set: p99 ≤ 2× the bare fiber handler's p99 (closed loop)",
		Medido: fmt.Sprintf("**%s ms** (bare %s ms, so at most %s ms)", msn(x.Lat.P99), msn(bare.Lat.P99), msn(limite)),
		Ok:     x.Lat.P99 <= limite && x.Erros == 0,
	}
	a2.Veredito = veredito(a2.Ok, msn(max(limite-x.Lat.P99, x.Lat.P99-limite))+" ms")
	if x.Erros > 0 {
		a1.Veredito += fmt.Sprintf("; %d errors", x.Erros)
		a2.Veredito += fmt.Sprintf("; %d errors", x.Erros)
	}
	return []alvo{a1, a2}
}
