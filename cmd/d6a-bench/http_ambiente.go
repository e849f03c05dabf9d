package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/formigueiro/d6a/internal/httpapi"
	"github.com/formigueiro/d6a/internal/store"
)

// ambiente is what the measurements run against.
type ambienteHTTP struct {
	*base
	o       opcoesHTTP
	url     string
	st      *store.Store // the load generator's own pool, for the database-only runs
	poolMax int32

	servidor    *processo
	logServidor string

	enderecoD6A      string // the app as `d6a serve` runs it: situacao cache on
	enderecoSemCache string // the same app with Cache nil (diagnostic)
	enderecoBare     string
	enderecoPprof    string // -cpuprofile only
	tamanhoCache     int    // cfg.SituacaoCache of the server (D6A_SITUACAO_CACHE)
	// The cached app's cache counters after the answers check, before
	// any run (the server's readiness probe included).
	cacheInicial metricasHTTP

	tokens          []string // one per counsellor, registered counsellors only
	tokensInvalidos []string // same subjects, signed with another key
	cidadaos        []uuid.UUID
	comAtribuicao   int

	jwks *httptest.Server // the working-set run's identity provider
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
	a.comAtribuicao = o.ativos
	logf("%d counsellors registered, %d with an active assignment; starting the server process", len(a.cidadaos), a.comAtribuicao)
	if err := a.iniciarServidor(); err != nil {
		return a, fmt.Errorf("server process: %w", err)
	}
	if err := a.conferir(pctx); err != nil {
		return a, fmt.Errorf("answers check: %w", err)
	}
	return a, nil
}

func segredo() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// semear registers n counsellors the way the conselheiro.cadastrado
// handler does (id = cidadao_id) and gives the first ativos an active
// assignment, marking them ocupado as a draw does.
func (a *ambienteHTTP) semear(ctx context.Context, n, ativos int) ([]uuid.UUID, error) {
	agora := time.Now().UTC()
	var cids []uuid.UUID
	err := a.st.InTx(ctx, func(tx store.Tx) error {
		for i := range n {
			cid, uc := uuid.New(), uuid.New()
			err := tx.InserirConselheiro(ctx, store.InserirConselheiroParams{
				CidadaoID: cid, UnidadeCivicaID: uc, NivelAtuacao: int32(1 + i%4), Status: "disponivel",
				CapacitacaoConcluida: true, Agora: agora.Add(-30 * 24 * time.Hour), EventID: uuid.New(),
			})
			if err != nil {
				return err
			}
			if i < ativos {
				hash := strings.Repeat("cd", 32)
				if _, err := tx.InserirAtribuicao(ctx, store.InserirAtribuicaoParams{
					ConselheiroID: cid, DemandaID: uuid.New(), UnidadeCivicaID: uc,
					SeedPublico: strings.Repeat("ab", 32), PosicaoSorteada: 0, TotalElegiveis: 7,
					ListaElegiveisHash: &hash, DataSorteio: agora.Add(-time.Hour), EventIDSorteio: uuid.New(),
					ScoreFinal: 87.5, CategoriaID: "SAU", NivelPrecedencia: 2,
				}); err != nil {
					return err
				}
				n, err := tx.MarcarConselheiroOcupado(ctx, store.MarcarConselheiroOcupadoParams{Agora: agora.Add(-time.Hour), EventID: uuid.New(), ID: cid})
				if err != nil {
					return err
				}
				if n != 1 {
					return fmt.Errorf("marcar ocupado: %d rows", n)
				}
			}
			cids = append(cids, cid)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	_, err = a.st.Pool.Exec(ctx, "ANALYZE")
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

// iniciarServidor starts this binary as the server process: the d6a app and
// the bare app in their own Go runtime (GOMAXPROCS = nproc, own GC), as
// `d6a serve` would run, with the request log on stderr going to a file.
// Each counsellor gets a token of this run's key and one of another key
// (the diagnostic 401 tokens); RS256's public key goes in a PEM file for
// D6A_JWT_PUBLIC_KEY_FILE.
func (a *ambienteHTTP) iniciarServidor() error {
	cids, n := append(slices.Clone(a.cidadaos), uuid.New()), len(a.cidadaos) // the last: the cache probe
	var boas, ruins []string
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
		if err == nil {
			boas, err = assinarRS256(k, "", cids)
		}
		if err == nil {
			ruins, err = assinarRS256(outra, "", cids[:n])
		}
		if err != nil {
			return err
		}
		chaveEnv = "D6A_JWT_PUBLIC_KEY_FILE=" + arquivo
	} else {
		chave, outra, agora := segredo(), segredo(), time.Now()
		for _, cid := range cids {
			t1, err1 := httpapi.TokenSessao(chave, cid, agora, 24*time.Hour, "", "")
			t2, err2 := httpapi.TokenSessao(outra, cid, agora, 24*time.Hour, "", "")
			if err := errors.Join(err1, err2); err != nil {
				return err
			}
			boas, ruins = append(boas, t1), append(ruins, t2)
		}
		chaveEnv = "D6A_JWT_SECRET=" + chave
	}
	a.tokens, a.tokensInvalidos = boas[:n], ruins[:n]
	return a.lancar(chaveEnv, boas[n], "server.log")
}

// lancar starts the server process with the session key chaveEnv and the
// cache probe's token sonda, logging to the file nome of the work
// directory, and reads its addresses.
func (a *ambienteHTTP) lancar(chaveEnv, sonda, nome string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	// Only what this run sets: no D6A_* of the caller's environment leaks in.
	env := append(ambienteLimpo(),
		envPapel+"="+papelServidor,
		"D6A_DATABASE_URL="+a.url,
		chaveEnv,
		envSonda+"="+sonda,
		"D6A_THROTTLE_POR_MINUTO=0",
		"D6A_LOG_LEVEL=info",
		"D6A_LOG_FORMAT=json",
	)
	if a.o.perfil != "" {
		env = append(env, envPprof+"=1")
	}
	a.logServidor = filepath.Join(a.dir, nome)
	if a.servidor, err = iniciar("server process", a.logServidor, env, exe); err != nil {
		return err
	}
	// "listening <d6a> <d6a cache off> <bare> <pprof or -> <cache size>"
	l, err := esperarLinha(a.servidor, "listening ", time.Minute)
	if err != nil {
		return err
	}
	f := strings.Fields(l)
	if len(f) != 6 {
		return fmt.Errorf("bad address line %q", l)
	}
	if a.tamanhoCache, err = strconv.Atoi(f[5]); err != nil {
		return fmt.Errorf("bad address line %q", l)
	}
	a.enderecoD6A, a.enderecoSemCache, a.enderecoBare = f[1], f[2], f[3]
	if f[4] != "-" {
		a.enderecoPprof = f[4]
	}
	return nil
}

// conferir asks every token, on both d6a apps, and checks the answers are
// the counsellor's own, with or without the assignment as seeded, and that
// the other key's tokens get 401. The cached app is asked twice: the first
// answer is read from PostgreSQL (a miss), the second must come from the
// cache (a hit), and be the same.
func (a *ambienteHTTP) conferir(ctx context.Context) error {
	ok, c := situacoes(a.cidadaos, a.o.ativos), a.o.c
	antes := a.metricasServidor()
	for _, addr := range []string{a.enderecoD6A, a.enderecoSemCache} {
		if err := pedirTodos(ctx, addr, c, a.tokens, 200, ok); err != nil {
			return err
		}
		if err := pedirTodos(ctx, addr, c, a.tokensInvalidos, 401, nil); err != nil {
			return err
		}
		if addr != a.enderecoD6A {
			break
		}
		if err := pedirTodos(ctx, addr, c, a.tokens, 200, ok); err != nil {
			return err
		}
		a.cacheInicial = a.metricasServidor()
		n := float64(len(a.tokens))
		if h, m := a.cacheInicial.hit-antes.hit, a.cacheInicial.miss-antes.miss; h != n || m != n {
			return fmt.Errorf("d6a app: asking %d tokens twice counted %.0f cache hits and %.0f misses, want %d of each", len(a.tokens), h, m, len(a.tokens))
		}
	}
	return pedirTodos(ctx, a.enderecoBare, 1, a.tokens[:1], 200, func(_ int, corpo []byte) error {
		return se(string(corpo) == string(corpoBare), nil, fmt.Errorf("bare handler: %s", corpo))
	})
}

// pedirTodos asks addr once with each token over conns connections and
// checks every status is want and, with checar, every answer.
func pedirTodos(ctx context.Context, addr string, conns int, tokens []string, want int, checar func(i int, corpo []byte) error) error {
	hc := novoCliente(addr, conns)
	var prox atomic.Int64
	return paralelo(conns, func(int) error {
		req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(res)
		req.SetRequestURI("http://" + addr + httpapi.RotaSituacao)
		for i := int(prox.Add(1) - 1); i < len(tokens) && ctx.Err() == nil; i = int(prox.Add(1) - 1) {
			req.Header.Set("Authorization", "Bearer "+tokens[i])
			if err := hc.Do(req, res); err != nil {
				return err
			}
			if res.StatusCode() != want {
				return fmt.Errorf("%s, token %d: status %d, want %d: %s", addr, i, res.StatusCode(), want, res.Body())
			}
			if checar != nil {
				if err := checar(i, res.Body()); err != nil {
					return fmt.Errorf("%s, token %d: %w", addr, i, err)
				}
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
	if err := a.servidor.parar(10 * time.Second); err != nil {
		logf("server process: %v", err)
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
