// The HTTP mode (d6a-bench http) measures GET /d6a/conselheiros/me/situacao
// against a bare fiber handler in the same run, on a server process (this
// binary re-executed: servir); the report ("HTTP: situacao route" of
// docs/bench.md) says how each run is set up.

package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	_ "net/http/pprof" // served only with -cpuprofile
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/formigueiro/d6a/internal/childproc"
	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/httpapi"
	"github.com/formigueiro/d6a/internal/metrics"
	"github.com/formigueiro/d6a/internal/store"
)

type opcoesHTTP struct {
	d, aquecimento, silencio       time.Duration
	c, taxa, conexoesAbrt          int
	conselheiros, ativos, cidadaos int // cidadaos: the working-set run's (0: none)
	perfil, doc, comando, alg      string
	diag, escrever, rapido         bool
}

func lerFlagsHTTP(args []string) (opcoesHTTP, error) {
	fs := flag.NewFlagSet("d6a-bench http", flag.ContinueOnError)
	var o opcoesHTTP
	q := rapido(args)
	fs.DurationVar(&o.d, "d", se(q, time.Second, 10*time.Second), "measured duration of each run")
	fs.DurationVar(&o.aquecimento, "warmup", se(q, 500*time.Millisecond, 2*time.Second), "warm-up before each run, not measured")
	fs.IntVar(&o.c, "c", 32, "concurrent keep-alive connections of the closed-loop runs")
	fs.IntVar(&o.taxa, "rate", 1000, "requests/s of the open-loop (paced) run on the situacao route")
	fs.IntVar(&o.conexoesAbrt, "open-c", 128, "connections (and senders) available to the open-loop run")
	fs.IntVar(&o.conselheiros, "conselheiros", 300, "registered counsellors, one token each")
	fs.IntVar(&o.ativos, "ativos", 100, "how many of them have an active assignment")
	fs.IntVar(&o.cidadaos, "cidadaos", se(q, 1000, 100000), "counsellors of the working-set run, each with an RS256 token through a JWKS the bench serves, asked at random (same share with an assignment; 0: no such run)")
	fs.DurationVar(&o.silencio, "wait-quiet", se(q, 0, time.Minute), "before each run, wait up to this long for other processes to use under 0.25 cores (0: don't wait)")
	fs.StringVar(&o.perfil, "cpuprofile", "", "write the server process's CPU profile during the closed-loop situacao run to this file (go tool pprof)")
	fs.BoolVar(&o.diag, "diag", true, "also measure the d6a app without the database and the database transaction alone")
	fs.BoolVar(&o.rapido, "quick", false, "1 s runs with a 0.5 s warm-up, a working set of 1,000 citizens, no -wait-quiet (unless given); docs are not written unless -doc is given")
	// RS256 is the cost of an identity provider's tokens (a 2048-bit key
	// through D6A_JWT_PUBLIC_KEY_FILE); the verified-token cache keeps it cheap.
	fs.StringVar(&o.alg, "alg", "HS256", "session token algorithm: HS256 or RS256")
	fs.StringVar(&o.doc, "doc", "docs/bench.md", "markdown file whose \"## HTTP: situacao route\" section is rewritten (empty: none)")
	dado, err := analisarFlags(fs, args)
	if err != nil {
		return o, err
	}
	o.escrever = o.doc != "" && (!o.rapido || dado["doc"])
	for _, v := range []struct {
		mal bool
		msg string
	}{{o.d <= 0, "-d must be positive"}, {o.aquecimento < 0, "-warmup must not be negative"}, {o.silencio < 0, "-wait-quiet must not be negative"},
		{o.c < 1, "-c must be at least 1"}, {o.taxa < 1, "-rate must be at least 1"}, {o.conexoesAbrt < 1, "-open-c must be at least 1"},
		{o.conselheiros < 1, "-conselheiros must be at least 1"}, {o.ativos < 0 || o.ativos > o.conselheiros, "-ativos must be between 0 and -conselheiros"},
		{o.cidadaos < 0, "-cidadaos must not be negative"}, {o.alg != "HS256" && o.alg != "RS256", "-alg must be HS256 or RS256"}} {
		if v.mal {
			return o, errors.New(v.msg)
		}
	}
	o.comando = strings.TrimSpace("go run ./cmd/d6a-bench http " + strings.Join(args, " "))
	return o, nil
}

func executarHTTP(ctx context.Context, o opcoesHTTP) error {
	inicio := time.Now()
	a, err := prepararAmbiente(ctx, o)
	defer a.encerrar()
	if err != nil {
		return err
	}
	r := &relatorioHTTP{o: o, a: a, data: inicio.UTC()}

	// What the machine does without us: other processes share the cores.
	esperarSossego(a.medidos(), o.silencio, "the runs")
	s := a.amostrar()
	select {
	case <-time.After(2 * time.Second):
	case <-ctx.Done():
		return ctx.Err()
	}
	r.fundo = calcularUso(s, a.amostrar(), 0)
	logf("before the runs, other processes use %.2f of %d cores", r.fundo.Outros, r.fundo.Nucleos)

	// The first failed run stops the others (falha is sticky).
	var falha error
	correr := func(nome, addr string, tokens []string, w, taxa, want int) (x resultado) {
		if falha == nil {
			x, falha = a.rodarHTTP(ctx, nome, addr, tokens, w, taxa, want, false)
		}
		return x
	}
	r.bare = correr("bare fiber handler", a.enderecoBare, a.tokens, o.c, 0, 200)
	perfil, antes := make(chan error, 1), a.caches()
	go func() { perfil <- a.perfilar(ctx) }()
	r.situacao = correr("situacao route", a.enderecoD6A, a.tokens, o.c, 0, 200)
	r.cacheRodada = a.caches().menos(antes)
	if err := <-perfil; err != nil && falha == nil {
		falha = fmt.Errorf("-cpuprofile: %w", err)
	}
	r.aberto = correr("situacao route", a.enderecoD6A, a.tokens, o.conexoesAbrt, o.taxa, 200)
	if o.diag {
		r.semBanco = correr("situacao route, 401 (no database)", a.enderecoD6A, a.tokensInvalidos, o.c, 0, 401)
		for _, f := range formasConsulta {
			if falha == nil {
				x, err := a.fechadoBanco(ctx, f)
				r.banco, falha = append(r.banco, x), err
			}
		}
		r.semCache = correr(nomeSemCache, a.enderecoSemCache, a.tokens, o.c, 0, 200)
	}
	if falha == nil && o.cidadaos > 0 {
		// The working-set run replaces the server process: read its log first.
		r.avisos, r.pedidos = lerLog(a.servidor.Log)
		r.conjunto, falha = a.rodarConjunto(ctx)
	}
	if err := cmp.Or(falha, ctx.Err()); err != nil {
		return err
	}
	r.dur = time.Since(inicio)
	avisos, pedidos := lerLog(a.servidor.Log)
	r.avisos, r.pedidos = append(r.avisos, avisos...), r.pedidos+pedidos

	md := r.markdown()
	return publicar(a.raiz, md, o.escrever, map[string]func(string) error{o.doc: func(p string) error { return reescrever(p, "http", tituloHTTP, md) }})
}

// ambienteHTTP is what the measurements run against.
type ambienteHTTP struct {
	*base
	o            opcoesHTTP
	url          string
	st           *store.Store // the load generator's own pool, for the database-only runs
	poolMax      int32
	servidor     *childproc.Process
	tamanhoCache int // cfg.SituacaoCache of the server (D6A_SITUACAO_CACHE)
	// The d6a app as `d6a serve` runs it (situacao cache on), the same app
	// with Cache nil, the bare app, pprof (-cpuprofile only).
	enderecoD6A, enderecoSemCache, enderecoBare, enderecoPprof string
	// The cached app's counters after the answers check, before any run
	// (the server's readiness probe included).
	cacheInicial    metricasHTTP
	tokens          []string         // one per counsellor, registered counsellors only
	tokensInvalidos []string         // same subjects, signed with another key
	cidadaos        []uuid.UUID      // the first -ativos with an active assignment
	jwks            *httptest.Server // the working-set run's identity provider
}

// prepararAmbiente starts PostgreSQL, seeds it and starts the server
// process. The returned ambiente (even with an error) must be closed.
func prepararAmbiente(ctx context.Context, o opcoesHTTP) (*ambienteHTTP, error) {
	a := &ambienteHTTP{o: o}
	var err error
	pctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if a.base, err = abrirBase(pctx, "", nil); err != nil {
		return a, err
	}
	if err := a.pg.CreateDatabase(pctx, "d6a", ""); err != nil {
		return a, err
	}
	a.url = a.pg.URL("d6a")
	if a.st, err = store.Open(pctx, a.url); err != nil {
		return a, err
	}
	a.poolMax = a.st.Pool.Config().MaxConns
	if err := store.Migrate(pctx, a.st.Pool); err != nil {
		return a, err
	}
	if a.cidadaos, err = a.semear(pctx, o.conselheiros, o.ativos); err != nil {
		return a, fmt.Errorf("seed: %w", err)
	}
	logf("%d counsellors registered, %d with an active assignment; starting the server process", len(a.cidadaos), o.ativos)
	if err := a.iniciarServidor(); err != nil {
		return a, fmt.Errorf("server process: %w", err)
	}
	if err := a.conferir(pctx); err != nil {
		return a, fmt.Errorf("answers check: %w", err)
	}
	return a, nil
}

// semear registers n counsellors with the row conselheiro.cadastrado writes
// (InserirConselheiro: id = cidadao_id); the first ativos have an active
// assignment (InserirAtribuicao's row) and are ocupado as a draw leaves them
// (MarcarConselheiroOcupado). One statement: 100,000 in a few seconds.
func (a *ambienteHTTP) semear(ctx context.Context, n, ativos int) ([]uuid.UUID, error) {
	cids, agora := make([]uuid.UUID, n), time.Now().UTC()
	for i := range cids {
		cids[i] = uuid.New()
	}
	_, err := a.st.Pool.Exec(ctx, `WITH s AS (SELECT c, i <= $2 AS ativa, 1 + (i - 1) % 4 AS nivel, gen_random_uuid() AS uc, gen_random_uuid() AS ev
			FROM unnest($1::uuid[]) WITH ORDINALITY AS t(c, i)),
		k AS (INSERT INTO d6a.conselheiros (id, cidadao_id, unidade_civica_id, nivel_atuacao, status, capacitacao_concluida, data_cadastro,
				data_ultima_atribuicao, event_id_cadastro, event_id_ultima_alteracao, atualizado_em)
			SELECT c, c, uc, nivel, CASE WHEN ativa THEN 'ocupado' ELSE 'disponivel' END, true, $3::timestamptz, CASE WHEN ativa THEN $4::timestamptz END,
				ev, CASE WHEN ativa THEN gen_random_uuid() ELSE ev END, CASE WHEN ativa THEN $4 ELSE $3 END FROM s)
		INSERT INTO d6a.atribuicoes (conselheiro_id, demanda_id, unidade_civica_id, seed_publico, posicao_sorteada, total_elegiveis,
			lista_elegiveis_hash, data_sorteio, event_id_sorteio, score_final, categoria_id, nivel_precedencia, criado_em)
		SELECT c, gen_random_uuid(), uc, repeat('ab', 32), 0, 7, repeat('cd', 32), $4, gen_random_uuid(), 87.5, 'SAU', 2, $4 FROM s WHERE ativa`,
		cids, ativos, agora.Add(-30*24*time.Hour), agora.Add(-time.Hour))
	if err == nil {
		_, err = a.st.Pool.Exec(ctx, "ANALYZE")
	}
	return cids, err
}

// Environment of the server process.
const (
	envPapel      = "D6A_HTTPBENCH_ROLE"
	papelServidor = "server"
	envPprof      = "D6A_HTTPBENCH_PPROF"
	// envSonda carries the cache probe's token to the server process (it
	// cannot sign RS256 tokens: it only has the public key).
	envSonda = "D6A_HTTPBENCH_PROBE_TOKEN"
)

type assinadorHTTP func(uuid.UUID) (string, error)

// iniciarServidor starts the server process. Each counsellor gets a token
// of this run's key and one of another key (the diagnostic 401 tokens);
// RS256's public key goes in a PEM file for D6A_JWT_PUBLIC_KEY_FILE.
func (a *ambienteHTTP) iniciarServidor() error {
	var boa, ruim assinadorHTTP
	var chaveEnv string
	if a.o.alg == "RS256" {
		k, err1 := rsa.GenerateKey(rand.Reader, 2048)
		outra, err2 := rsa.GenerateKey(rand.Reader, 2048)
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
		arquivo := filepath.Join(a.dir, "jwt-rs256.pem")
		if err == nil {
			err = os.WriteFile(arquivo, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600)
		}
		if err != nil {
			return err
		}
		boa, ruim, chaveEnv = assinadorRS256(k, ""), assinadorRS256(outra, ""), "D6A_JWT_PUBLIC_KEY_FILE="+arquivo
	} else {
		// 52 characters: the app asks HMAC keys of at least 32 bytes.
		chave, outra, agora := rand.Text()+rand.Text(), rand.Text()+rand.Text(), time.Now()
		hs := func(s string) assinadorHTTP {
			return func(cid uuid.UUID) (string, error) { return httpapi.TokenSessao(s, cid, agora, 24*time.Hour, "", "") }
		}
		boa, ruim, chaveEnv = hs(chave), hs(outra), "D6A_JWT_SECRET="+chave
	}
	var sonda string
	var err1, err2 error
	a.tokens, sonda, err1 = assinarTodos(a.cidadaos, boa)
	a.tokensInvalidos, _, err2 = assinarTodos(a.cidadaos, ruim)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	return a.lancar(chaveEnv, sonda, "server.log")
}

// emissorBench is the iss and aud of the bench's RS256 tokens: d6a asks
// for both with a public key or a JWKS (D6A_JWT_ISSUER, D6A_JWT_AUDIENCE).
const emissorBench = "d6a-bench"

// assinadorRS256 signs 24 h tokens with k, under kid (if any).
func assinadorRS256(k *rsa.PrivateKey, kid string) assinadorHTTP {
	agora := time.Now()
	return func(cid uuid.UUID) (string, error) {
		t := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.RegisteredClaims{
			Subject: cid.String(), IssuedAt: jwt.NewNumericDate(agora), ExpiresAt: jwt.NewNumericDate(agora.Add(24 * time.Hour)),
			Issuer: emissorBench, Audience: jwt.ClaimStrings{emissorBench},
		})
		if kid != "" {
			t.Header["kid"] = kid
		}
		return t.SignedString(k)
	}
}

// assinarTodos signs one token per citizen, and sonda for a citizen never
// registered (the server's cache probe), on every core: an RSA-2048
// signature costs about 1 ms of a core here, so 100,000 take about a
// minute on 2 cores (docs/bench.md).
func assinarTodos(cids []uuid.UUID, assinar assinadorHTTP) (tokens []string, sonda string, err error) {
	cids = append(slices.Clip(cids), uuid.New())
	out, w := make([]string, len(cids)), runtime.NumCPU()
	err = paralelo(w, func(j int) error {
		for i := j; i < len(cids); i += w {
			var err error
			if out[i], err = assinar(cids[i]); err != nil {
				return err
			}
		}
		return nil
	})
	return out[:len(cids)-1], out[len(cids)-1], err
}

// lancar starts this binary as the server process (its own Go runtime, as
// `d6a serve` runs) with the session key chaveEnv and the probe token sonda,
// logging to nome in the work directory, and reads its addresses.
func (a *ambienteHTTP) lancar(chaveEnv, sonda, nome string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	// Only what this run sets: no D6A_* of the caller's environment leaks in.
	env := append(ambienteLimpo(), envPapel+"="+papelServidor, "D6A_DATABASE_URL="+a.url, chaveEnv, envSonda+"="+sonda,
		"D6A_THROTTLE_POR_MINUTO=0", "D6A_LOG_LEVEL=info", "D6A_LOG_FORMAT=json", envPprof+"="+se(a.o.perfil != "", "1", ""))
	if !strings.HasPrefix(chaveEnv, "D6A_JWT_SECRET=") {
		env = append(env, "D6A_JWT_ISSUER="+emissorBench, "D6A_JWT_AUDIENCE="+emissorBench)
	}
	if a.servidor, err = childproc.Start("server process", filepath.Join(a.dir, nome), env, exe); err != nil {
		return err
	}
	l, err := a.servidor.WaitLine("listening ", time.Minute)
	if err != nil {
		return err
	}
	if _, err := fmt.Sscanf(l, "listening %s %s %s %s %d", &a.enderecoD6A, &a.enderecoSemCache, &a.enderecoBare, &a.enderecoPprof, &a.tamanhoCache); err != nil {
		return fmt.Errorf("bad address line %q: %w", l, err)
	}
	a.enderecoPprof = se(a.enderecoPprof == "-", "", a.enderecoPprof)
	return nil
}

// conferir checks both d6a apps answer each token with its counsellor's own
// situation as seeded and the other key's tokens with 401; the cached app is
// asked twice, a miss (PostgreSQL) then a hit that must give the same answer.
func (a *ambienteHTTP) conferir(ctx context.Context) error {
	ok, antes := situacoes(a.cidadaos, a.o.ativos), a.caches()
	bare := func(_ int, corpo []byte) error {
		return se(string(corpo) == string(corpoBare), nil, fmt.Errorf("bare handler: %s", corpo))
	}
	for _, v := range []struct {
		addr   string
		tokens []string
		want   int
		checar func(int, []byte) error
	}{{a.enderecoD6A, a.tokens, 200, ok}, {a.enderecoD6A, a.tokens, 200, ok}, {a.enderecoD6A, a.tokensInvalidos, 401, nil},
		{a.enderecoSemCache, a.tokens, 200, ok}, {a.enderecoSemCache, a.tokensInvalidos, 401, nil}, {a.enderecoBare, a.tokens[:1], 200, bare}} {
		if err := pedirTodos(ctx, v.addr, a.o.c, v.tokens, v.want, v.checar); err != nil {
			return err
		}
	}
	a.cacheInicial = a.caches()
	n, d := len(a.tokens), a.cacheInicial.menos(antes).situacao
	if d != [2]float64{float64(n), float64(n)} {
		return fmt.Errorf("d6a app: asking %d tokens twice counted %.0f cache hits and %.0f misses, want %d of each", n, d[0], d[1], n)
	}
	return nil
}

// pedirTodos asks addr once with each token over conns connections and
// checks every status is want and, with checar, every answer.
func pedirTodos(ctx context.Context, addr string, conns int, tokens []string, want int, checar func(i int, corpo []byte) error) error {
	hc := novoCliente(addr, conns)
	var prox atomic.Int64
	return paralelo(conns, func(int) error {
		var req fasthttp.Request
		var res fasthttp.Response
		req.SetRequestURI("http://" + addr + httpapi.RotaSituacao)
		for i := int(prox.Add(1) - 1); i < len(tokens) && ctx.Err() == nil; i = int(prox.Add(1) - 1) {
			req.Header.Set("Authorization", "Bearer "+tokens[i])
			err := hc.Do(&req, &res)
			if err == nil && res.StatusCode() != want {
				err = fmt.Errorf("status %d, want %d: %s", res.StatusCode(), want, res.Body())
			}
			if err == nil && checar != nil {
				err = checar(i, res.Body())
			}
			if err != nil {
				return fmt.Errorf("%s, token %d: %w", addr, i, err)
			}
		}
		return ctx.Err()
	})
}

// situacoes checks answer i is counsellor cids[i]'s own, with an active
// assignment when i < ativos.
func situacoes(cids []uuid.UUID, ativos int) func(int, []byte) error {
	return func(i int, corpo []byte) error {
		var s httpapi.Situacao
		if err := json.Unmarshal(corpo, &s); err != nil {
			return err
		}
		if !s.Cadastrado || s.ConselheiroID != cids[i] || (s.AtribuicaoAtiva != nil) != (i < ativos) {
			return fmt.Errorf("unexpected answer %s", corpo)
		}
		return nil
	}
}

func (a *ambienteHTTP) encerrar() {
	if a.servidor != nil {
		if err := a.servidor.Stop(syscall.SIGTERM, 10*time.Second); err != nil {
			logf("server process: %v", err)
		}
	}
	if a.jwks != nil {
		a.jwks.Close()
	}
	if a.st != nil {
		a.st.Close()
	}
	if a.base != nil {
		a.fechar(false)
	}
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

// The working-set run (issue 24): -cidadaos more counsellors, each with
// an RS256 token whose kid the server finds in a JWKS the bench serves
// (D6A_JWT_JWKS_URL), asked uniformly at random, so the route's caches
// hold the whole working set instead of a few hot entries. Its targets are
// against the bare handler measured just before it, on the same process.
const (
	alvoRazaoConjunto = 0.50 // req/s ≥ 50% of the bare handler's
	alvoP99Conjunto   = 2.0  // closed-loop p99 ≤ 2× the bare handler's
	kidConjunto       = "d6a-bench"
)

type conjuntoHTTP struct {
	n, ativos               int
	semear, assinar, encher time.Duration
	bare, rodada            resultado
	// The server's cache counters over each citizen's first request, and
	// over the run (warm-up included).
	primeiros, aleatorios metricasHTTP
	// The server's memory: started, once every citizen asked once, after the run.
	memInicio, memCheia, memFim memoria
}

// rodarConjunto seeds and signs the working set, replaces the server process
// with one using the JWKS, asks every citizen once (answers checked), then
// runs the bare handler and the closed loop over random citizens.
func (a *ambienteHTTP) rodarConjunto(ctx context.Context) (*conjuntoHTTP, error) {
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
	t = time.Now() // the signatures alone
	tokens, sonda, err := assinarTodos(cids, assinadorRS256(chave, kidConjunto))
	if err != nil {
		return nil, err
	}
	c.assinar = time.Since(t)
	logf("    %s tokens signed in %s", milhares(len(tokens)), c.assinar.Round(time.Millisecond))

	a.jwks = httptest.NewServer(jwks(&chave.PublicKey))
	// The other runs' process stops before (left to right) the one with the JWKS starts.
	if err := errors.Join(a.servidor.Stop(syscall.SIGTERM, 10*time.Second), a.lancar("D6A_JWT_JWKS_URL="+a.jwks.URL, sonda, "server-jwks.log")); err != nil {
		return nil, fmt.Errorf("server process (JWKS): %w", err)
	}
	pid, inicio := a.servidor.Pid(), a.caches()
	c.memInicio, t = lerMemoria(pid), time.Now()
	if err := pedirTodos(ctx, a.enderecoD6A, o.c, tokens, 200, situacoes(cids, c.ativos)); err != nil {
		return nil, fmt.Errorf("working set, first requests: %w", err)
	}
	c.encher, c.primeiros, c.memCheia = time.Since(t), a.caches().menos(inicio), lerMemoria(pid)
	logf("    every citizen asked once in %s; server RSS %s", c.encher.Round(time.Millisecond), mib(c.memCheia.RSS))
	if c.bare, err = a.rodarHTTP(ctx, "bare fiber handler, just before the working set", a.enderecoBare, tokens, o.c, 0, 200, true); err != nil {
		return nil, err
	}
	antes := a.caches()
	if c.rodada, err = a.rodarHTTP(ctx, fmt.Sprintf("situacao route, %s citizens at random (RS256 through a JWKS)", milhares(c.n)), a.enderecoD6A, tokens, o.c, 0, 200, true); err != nil {
		return nil, err
	}
	c.aleatorios, c.memFim = a.caches().menos(antes), lerMemoria(pid)
	return c, nil
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

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", mb(b)) }

// corpoBare is the bare handler's constant answer, the size of the
// situacao route's answer for a citizen who never registered.
var corpoBare = []byte(`{"cadastrado":false}`)

// novoBare is the yardstick: fiber with the d6a app's server limits and one
// handler on the same path, no middleware, no authentication, no database.
func novoBare() *fiber.App {
	app := fiber.New(fiber.Config{DisableStartupMessage: true, CaseSensitive: true, BodyLimit: httpapi.BodyLimit, ReadBufferSize: httpapi.ReadBufferSize,
		ReadTimeout: httpapi.ReadTimeout, WriteTimeout: httpapi.WriteTimeout, IdleTimeout: httpapi.IdleTimeout})
	app.Get(httpapi.RotaSituacao, func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(corpoBare)
	})
	return app
}

// servir is the server process, configured from the environment as `d6a
// serve` is: the d6a app (httpapi.New as `d6a serve` assembles it, on a
// store of its own) with httpapi.NovoCache(cfg.SituacaoCache) and its
// Escutar, served as d6a serves it (httpapi.Servir); the same app on its own
// store and metrics with Cache nil (the "cache off" diagnostic); the bare
// app. Once the cache answers it prints "listening <d6a> <d6a cache off>
// <bare> <pprof or -> <cache size>".
func servir() error {
	cfg, err := config.FromEnv()
	if err == nil {
		err = cfg.RequireDatabase()
	}
	if err != nil {
		return err
	}
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel})))
	// The bench stops this process with SIGTERM, which ends Escutar too.
	ctx, pare := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer pare()
	var apps []*fiber.App
	for _, cache := range []*httpapi.Cache{httpapi.NovoCache(cfg.SituacaoCache), nil} {
		st, err := store.Open(context.Background(), cfg.DatabaseURL)
		if err != nil {
			return err
		}
		defer st.Close()
		app, err := httpapi.New(httpapi.Options{Config: cfg, Store: st, Metrics: metrics.New(metrics.StoreFonte(st, nil)),
			Ready: func(context.Context) error { return nil }, Cache: cache})
		if err != nil {
			return err
		}
		if apps = append(apps, app); cache != nil {
			go cache.Escutar(ctx, st.Pool)
		}
	}
	servidores := []func(net.Listener) error{func(ln net.Listener) error { return httpapi.Servir(apps[0], ln) }, apps[1].Listener, novoBare().Listener}
	if os.Getenv(envPprof) != "" {
		servidores = append(servidores, func(ln net.Listener) error { return http.Serve(ln, nil) })
	}
	enderecos, erros := []string{"-", "-", "-", "-"}, make(chan error, len(servidores))
	for i, s := range servidores {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		enderecos[i] = ln.Addr().String()
		go func() { erros <- s(ln) }()
	}
	if err := esperarCache(ctx, enderecos[0]); err != nil {
		return err
	}
	fmt.Printf("listening %s %d\n", strings.Join(enderecos, " "), cfg.SituacaoCache)
	select {
	case <-ctx.Done():
		return nil
	case err := <-erros:
		return err
	}
}

// esperarCache returns once the d6a app at addr has answered from its cache,
// which it only does while Escutar's LISTEN connection is open: a hit in
// d6a_situacao_cache_total proves it, with no race. The probe (envSonda) is
// a token of a never-registered citizen, whose answer is cached like any.
func esperarCache(ctx context.Context, addr string) error {
	const limite = 30 * time.Second
	sonda := []string{os.Getenv(envSonda)} // the bench always sets it
	for prazo := time.Now().Add(limite); ; time.Sleep(20 * time.Millisecond) {
		if err := pedirTodos(ctx, addr, 1, sonda, 200, nil); err != nil {
			return fmt.Errorf("cache probe: %w", err)
		}
		if lerCaches(raspar(addr)).situacao[0] > 0 {
			return nil
		}
		if time.Now().After(prazo) {
			return fmt.Errorf("the situacao cache did not answer within %s: its LISTEN %s connection never opened (see the log)", limite, httpapi.CanalSituacao)
		}
	}
}
