package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/valyala/fasthttp"

	"github.com/formigueiro/d6a/internal/httpapi"
	"github.com/formigueiro/d6a/internal/latency"
	"github.com/formigueiro/d6a/internal/store"
)

// resultado is one measured run.
type resultado struct {
	Nome      string
	Detalhe   string // database-only runs: the statements
	Viagens   int    // database-only runs: round trips per read
	Modo      string // "closed" or "open"
	Conexoes  int
	Janela    time.Duration // measured window
	OK, Erros int           // answers with the expected status; transport errors and other statuses
	Status    map[int]int   // unexpected statuses
	Lat       latency.Summary
	CPU       usoCPU
	// Open loop only.
	LatEnvio    latency.Summary // from the actual send, not the schedule: the server's share
	Taxa        int             // offered requests/s
	NaoEnviadas int             // scheduled but not sent before the deadline
	Atrasadas   int             // sent more than 1 ms after their scheduled time
	AtrasoMax   time.Duration   // worst send delay
}

func (r resultado) Vazao() float64 { return razao(float64(r.OK+r.Erros), max(0, r.Janela.Seconds())) }

func (r resultado) resumo() string {
	c := r.CPU
	s := fmt.Sprintf("%.0f req/s, p50 %s, p99 %s, max %s, %d errors; CPU load generator %.2f + server %.2f + PostgreSQL %.2f + irq/softirq %.2f + others %.2f cores (machine %.0f%% busy)",
		r.Vazao(), msHTTP(r.Lat.P50), msHTTP(r.Lat.P99), msHTTP(r.Lat.Max), r.Erros, c.Eu, c.D6A, c.PG, c.Kernel, c.Outros, 100*c.Ocupacao())
	if c.Contadas > 0 {
		s += fmt.Sprintf("; the d6a app timed %.0f situacao requests in the window (load generator: %d)", c.Contadas, r.OK+r.Erros)
	}
	if h, ok := c.RazaoCache(); ok {
		s += fmt.Sprintf("; cache %.0f hits / %.0f misses (%.2f%% hits)", c.CacheHit, c.CacheMiss, 100*h)
	}
	if r.Viagens == 0 {
		s += fmt.Sprintf("; server read(2)/write(2) per request %.1f/%.1f", c.Por(c.Lidas), c.Por(c.Escritas))
	}
	if r.Modo == "open" {
		s += fmt.Sprintf("; %d sent > 1 ms late (worst %s), %d not sent; from the actual send p50 %s, p99 %s",
			r.Atrasadas, msHTTP(r.AtrasoMax), r.NaoEnviadas, msHTTP(r.LatEnvio.P50), msHTTP(r.LatEnvio.P99))
	}
	return s
}

func msHTTP(d time.Duration) string { return msn(d) + " ms" }

// RazaoCache is the share of the window's situacao reads the cache
// answered; ok is false when the cache counted none.
func (c usoCPU) RazaoCache() (r float64, ok bool) {
	n := c.CacheHit + c.CacheMiss
	return c.CacheHit / max(1, n), n > 0
}

func novoCliente(addr string, conns int) *fasthttp.HostClient {
	return &fasthttp.HostClient{Addr: addr, MaxConns: conns, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second,
		MaxIdleConnDuration: time.Minute, MaxConnWaitTimeout: 10 * time.Second}
}

// rodar runs w workers, each made by novo, over requests 0, 1, 2… in turn,
// -warmup uncounted then -d: preparar readies request i outside the timed
// interval, fazer sends it (a failure counts under its status, 0 for a
// transport or database error). With taxa 0 a worker sends as soon as its
// previous request ends (closed loop); else request i is scheduled at
// start + i/taxa and its latency runs from then (open loop), so a request
// that waited for a free worker (a stalled server) is charged the wait.
func (a *ambienteHTTP) rodar(ctx context.Context, w, taxa int, novo func() (preparar func(i int), fazer func() (status int, ok bool))) (resultado, error) {
	inicio := time.Now().Add(50 * time.Millisecond)
	medir, fim := inicio.Add(a.o.aquecimento), inicio.Add(a.o.aquecimento+a.o.d)
	nAquec, total := 0, math.MaxInt
	var agendado func(i int) time.Time
	if taxa > 0 {
		intervalo := float64(time.Second) / float64(taxa)
		nAquec = int(a.o.aquecimento.Seconds() * float64(taxa))
		total = nAquec + int(a.o.d.Seconds()*float64(taxa))
		agendado = func(i int) time.Time { return inicio.Add(time.Duration(float64(i) * intervalo)) }
		// A request not sent 10 s after the schedule ends is given up.
		medir, fim = agendado(nAquec), agendado(total).Add(10*time.Second)
	}
	type coletor struct {
		resultado
		lat, envio []time.Duration // envio: from the actual send
	}
	var prox atomic.Int64
	cs := make([]*coletor, w) // one per worker: no sharing between them
	feito := make(chan struct{})
	go func() {
		defer close(feito)
		_ = paralelo(w, func(k int) error {
			col := &coletor{resultado: resultado{Status: map[int]int{}}}
			cs[k] = col
			preparar, fazer := novo()
			for i := int(prox.Add(1) - 1); i < total && ctx.Err() == nil; i = int(prox.Add(1) - 1) {
				preparar(i)
				t := time.Now()
				if agendado != nil {
					t = agendado(i)
					time.Sleep(time.Until(t))
				}
				envio := time.Now()
				if !envio.Before(fim) {
					if agendado == nil {
						return nil
					}
					if i >= nAquec {
						col.NaoEnviadas++
					}
					continue
				}
				status, ok := fazer()
				t1 := time.Now()
				if t.Before(medir) {
					continue
				}
				if atraso := envio.Sub(t); agendado != nil && atraso > time.Millisecond {
					col.Atrasadas++
					col.AtrasoMax = max(col.AtrasoMax, atraso)
				}
				col.lat, col.envio = append(col.lat, t1.Sub(t)), append(col.envio, t1.Sub(envio))
				if ok {
					col.OK++
				} else {
					col.Erros++
					col.Status[status]++
				}
			}
			return nil
		})
	}()
	// CPU is measured over the measured window only.
	select {
	case <-time.After(time.Until(medir)):
	case <-feito:
	}
	antes := a.amostrar()
	<-feito
	if err := ctx.Err(); err != nil {
		return resultado{}, err
	}
	r := resultado{Modo: se(taxa > 0, "open", "closed"), Taxa: taxa, Conexoes: w, Janela: time.Since(medir), Status: map[int]int{}, CPU: calcularUso(antes, a.amostrar(), 0)}
	var lat, envio []time.Duration
	for _, c := range cs {
		lat, envio = append(lat, c.lat...), append(envio, c.envio...)
		r.OK, r.Erros, r.NaoEnviadas, r.Atrasadas = r.OK+c.OK, r.Erros+c.Erros+c.NaoEnviadas, r.NaoEnviadas+c.NaoEnviadas, r.Atrasadas+c.Atrasadas
		r.AtrasoMax = max(r.AtrasoMax, c.AtrasoMax)
		for k, v := range c.Status {
			r.Status[k] += v
		}
	}
	r.Lat, r.LatEnvio = latency.Summarize(lat), latency.Summarize(envio)
	r.CPU.N = r.OK + r.Erros
	return r, nil
}

// rodarHTTP is rodar over HTTP: a keep-alive connection per worker, the
// tokens round-robin (uniformly at random when aleatorio), any status but
// want an error.
func (a *ambienteHTTP) rodarHTTP(ctx context.Context, nome, addr string, tokens []string, w, taxa, want int, aleatorio bool) (resultado, error) {
	hc := novoCliente(addr, w)
	r, err := a.rodar(ctx, w, taxa, func() (func(int), func() (int, bool)) {
		var req fasthttp.Request
		var res fasthttp.Response
		req.SetRequestURI("http://" + addr + httpapi.RotaSituacao)
		preparar := func(i int) {
			if aleatorio {
				i = rand.IntN(len(tokens))
			}
			req.Header.Set("Authorization", "Bearer "+tokens[i%len(tokens)])
		}
		return preparar, func() (int, bool) {
			if err := hc.Do(&req, &res); err != nil {
				return 0, false
			}
			return res.StatusCode(), res.StatusCode() == want
		}
	})
	r.Nome = nome
	if err == nil {
		logf("    %s", r.resumo())
	}
	return r, err
}

// formaConsulta is one way of reading a counsellor and their active
// assignment, run directly with pgx (no HTTP) by the database-only runs.
type formaConsulta struct {
	rotulo  string // the run's name (the table shows nome)
	nome    string
	viagens int // client/server round trips per read
	ler     func(ctx context.Context, st *store.Store, cidadao uuid.UUID) (ativa bool, err error)
	// semDados: the read does not look at the counsellor (SELECT 1); its
	// answer is not checked against the seed.
	semDados bool
}

// formasConsulta: the handler's own query first (store.BuscarSituacao, as
// internal/httpapi lerSituacao runs it), then the floor of one round trip,
// then the 5-statement transaction the handler used before commit 37bcf25,
// in raw SQL so it does not depend on queries the store may drop.
var formasConsulta = []formaConsulta{{
	rotulo: "database only: the handler's query", viagens: 1,
	nome: "the handler's query (`store.BuscarSituacao`: one SELECT … LEFT JOIN LATERAL, outside a transaction)",
	ler: func(ctx context.Context, st *store.Store, cidadao uuid.UUID) (bool, error) {
		r, err := st.Read().BuscarSituacao(ctx, cidadao)
		return r.TemAtribuicao, err
	},
}, {
	rotulo: "database only: SELECT 1", viagens: 1, semDados: true,
	nome: "`SELECT 1`: the floor of one round trip on the same pool",
	ler: func(ctx context.Context, st *store.Store, _ uuid.UUID) (bool, error) {
		var um int
		return false, st.Pool.QueryRow(ctx, "SELECT 1").Scan(&um)
	},
}, {
	rotulo: "database only: previous handler", viagens: 5,
	nome: "the handler before commit 37bcf25: BEGIN; SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; 2 SELECTs; COMMIT",
	ler: func(ctx context.Context, st *store.Store, cidadao uuid.UUID) (ativa bool, err error) {
		// Every column decoded, as sqlc's code did.
		valores := func(r pgx.CollectableRow) ([]any, error) { return r.Values() }
		err = pgx.BeginFunc(ctx, st.Pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"); err != nil {
				return err
			}
			rows, _ := tx.Query(ctx, sqlConselheiro, cidadao)
			c, err := pgx.CollectOneRow(rows, valores) // every counsellor asked is registered: no row is an error
			if err != nil {
				return err
			}
			rows, _ = tx.Query(ctx, sqlAtribuicao, c[0])
			_, err = pgx.CollectOneRow(rows, valores)
			ativa = err == nil
			return se(errors.Is(err, pgx.ErrNoRows), nil, err)
		})
		return ativa, err
	},
}}

// The two queries of the handler before commit 37bcf25 (sqlc's
// BuscarConselheiroPorCidadao and BuscarAtribuicaoAtivaPorConselheiro).
const (
	sqlConselheiro = `SELECT id, cidadao_id, unidade_civica_id, nivel_atuacao, status, capacitacao_concluida, data_cadastro,
       data_ultima_atribuicao, data_suspensao_ate, event_id_cadastro, event_id_ultima_alteracao, atualizado_em
FROM d6a.conselheiros WHERE cidadao_id = $1 ORDER BY data_cadastro, id`
	sqlAtribuicao = `SELECT id, conselheiro_id, demanda_id, unidade_civica_id, seed_publico, metodo_sorteio, posicao_sorteada,
       total_elegiveis, lista_elegiveis_hash, status, data_sorteio, event_id_sorteio, event_id_encerramento, criado_em,
       score_final, categoria_id, nivel_precedencia, grupo_id
FROM d6a.atribuicoes WHERE conselheiro_id = $1 AND status = 'ativa'`
)

// fechadoBanco is a closed loop of database reads: -c goroutines share the
// load generator's pool, of pgxpool's default size like the server's. A read
// fails on an error or, unless f.semDados, an answer other than the seed's.
func (a *ambienteHTTP) fechadoBanco(ctx context.Context, f formaConsulta) (resultado, error) {
	r, err := a.rodar(ctx, a.o.c, 0, func() (func(int), func() (int, bool)) {
		var k int
		return func(i int) { k = i % len(a.cidadaos) }, func() (int, bool) {
			ativa, err := f.ler(ctx, a.st, a.cidadaos[k])
			return 0, err == nil && (f.semDados || ativa == (k < a.o.ativos))
		}
	})
	if err != nil {
		return resultado{}, err
	}
	r.Nome, r.Detalhe, r.Viagens = f.rotulo, f.nome, f.viagens
	logf("    %s", r.resumo())
	return r, nil
}

// passo logs the run about to start and waits for a quiet machine.
func (a *ambienteHTTP) passo(nome string) {
	logf("%s", nome)
	esperarSossego(a.medidos(), a.o.silencio, nome)
}

// medidos are the processes of the HTTP mode's CPU accounting (the server
// runs whenever they are asked for).
func (a *ambienteHTTP) medidos() processosMedidos {
	return processosMedidos{pgDir: a.pg.Dir, d6a: a.servidor.Pid()}
}

// amostrar reads the clocks and the server's counters together.
func (a *ambienteHTTP) amostrar() amostraCPU {
	s := amostrar(a.medidos())
	s.metricas = a.metricasServidor()
	return s
}

// perfilar, with -cpuprofile, writes the server's CPU profile over the
// measured window of the run that starts now.
func (a *ambienteHTTP) perfilar(ctx context.Context) error {
	if a.enderecoPprof == "" {
		return nil
	}
	select {
	case <-time.After(a.o.aquecimento):
		return perfilGo(ctx, a.enderecoPprof, a.o.perfil, max(1, int(a.o.d.Seconds())))
	case <-ctx.Done():
		return ctx.Err()
	}
}

// metricasHTTP is what the HTTP mode reads from a d6a app's /metrics.
type metricasHTTP struct {
	contadas     float64    // situacao requests timed, every status (d6a_http_duracao_segundos_count)
	hit, miss    float64    // d6a_situacao_cache_total
	tokens, jwks [2]float64 // hits, misses: d6a_tokens_cache_total, d6a_jwks_cache_total
}

func (m metricasHTTP) menos(o metricasHTTP) metricasHTTP {
	return metricasHTTP{contadas: m.contadas - o.contadas, hit: m.hit - o.hit, miss: m.miss - o.miss,
		tokens: [2]float64{m.tokens[0] - o.tokens[0], m.tokens[1] - o.tokens[1]},
		jwks:   [2]float64{m.jwks[0] - o.jwks[0], m.jwks[1] - o.jwks[1]}}
}

func situacaoDe(m metricas) metricasHTTP {
	var s metricasHTTP
	for k, v := range m {
		hm := se(strings.Contains(k, `resultado="hit"`), 0, 1)
		switch {
		case strings.HasPrefix(k, `d6a_tokens_cache_total{`):
			s.tokens[hm] += v
		case strings.HasPrefix(k, `d6a_jwks_cache_total{`):
			s.jwks[hm] += v
		case strings.HasPrefix(k, `d6a_http_duracao_segundos_count{`) && strings.Contains(k, `rota="`+httpapi.RotaSituacao+`"`):
			s.contadas += v
		case strings.HasPrefix(k, `d6a_situacao_cache_total{`) && hm == 0:
			s.hit += v
		case strings.HasPrefix(k, `d6a_situacao_cache_total{`) && strings.Contains(k, `resultado="miss"`):
			s.miss += v
		}
	}
	return s
}

// metricasServidor reads both d6a apps' /metrics: the situacao requests
// timed by either (one is driven at a time), the cached app's cache counters.
func (a *ambienteHTTP) metricasServidor() metricasHTTP {
	m := situacaoDe(raspar(a.enderecoD6A))
	m.contadas += situacaoDe(raspar(a.enderecoSemCache)).contadas
	return m
}
