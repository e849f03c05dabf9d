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
	Viagens   int // database-only runs: round trips per read
	Conexoes  int
	Janela    time.Duration // measured window
	OK, Erros int           // answers with the expected status; transport errors and other statuses
	Status    map[int]int   // unexpected statuses
	Lat       latency.Summary
	CPU       usoCPU
	// Open loop only.
	LatEnvio    latency.Summary // from the actual send, not the schedule: the server's share
	Taxa        int             // offered requests/s (0: closed loop)
	NaoEnviadas int             // scheduled but not sent before the deadline
	Atrasadas   int             // sent more than 1 ms after their scheduled time
	AtrasoMax   time.Duration   // worst send delay
}

func (r resultado) Vazao() float64 { return razao(float64(r.OK+r.Erros), max(0, r.Janela.Seconds())) }

func novoCliente(addr string, conns int) *fasthttp.HostClient {
	return &fasthttp.HostClient{Addr: addr, MaxConns: conns, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second,
		MaxIdleConnDuration: time.Minute, MaxConnWaitTimeout: 10 * time.Second}
}

// rodar runs x (its name, workers and rate set) once the machine is quiet,
// and logs its row of the results table: x.Conexoes workers, each made by
// novo, over requests 0, 1, 2… in turn, -warmup uncounted then -d:
// preparar readies request i outside the timed interval, fazer sends it (a
// failure counts under its status, 0 for a transport or database error).
// With x.Taxa 0 a worker sends as soon as its previous request ends (closed
// loop); else request i is scheduled at start + i/taxa and its latency runs
// from then (open loop), so a request that waited for a free worker (a
// stalled server) is charged the wait.
func (a *ambienteHTTP) rodar(ctx context.Context, x resultado, novo func() (preparar func(i int), fazer func() (status int, ok bool))) (resultado, error) {
	passo := fmt.Sprintf("%s: %s, %s + %s warm-up", x.Nome, carga(x), a.o.d, a.o.aquecimento)
	logf("%s", passo)
	esperarSossego(a.medidos(), a.o.silencio, passo)
	inicio := time.Now().Add(50 * time.Millisecond)
	medir, fim := inicio.Add(a.o.aquecimento), inicio.Add(a.o.aquecimento+a.o.d)
	nAquec, total := 0, math.MaxInt
	var agendado func(i int) time.Time
	if x.Taxa > 0 {
		intervalo := float64(time.Second) / float64(x.Taxa)
		nAquec = int(a.o.aquecimento.Seconds() * float64(x.Taxa))
		total = nAquec + int(a.o.d.Seconds()*float64(x.Taxa))
		agendado = func(i int) time.Time { return inicio.Add(time.Duration(float64(i) * intervalo)) }
		// A request not sent 10 s after the schedule ends is given up.
		medir, fim = agendado(nAquec), agendado(total).Add(10*time.Second)
	}
	type coletor struct {
		resultado
		lat, envio []time.Duration // envio: from the actual send
	}
	var prox atomic.Int64
	cs := make([]*coletor, x.Conexoes) // one per worker: no sharing between them
	feito := make(chan struct{})
	go func() {
		defer close(feito)
		_ = paralelo(x.Conexoes, func(k int) error {
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
	r := x
	r.Janela, r.Status, r.CPU = time.Since(medir), map[int]int{}, calcularUso(antes, a.amostrar(), 0)
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
	logf("    %s", r.fila([3]bool{}))
	return r, nil
}

// rodarHTTP is rodar over HTTP: a keep-alive connection per worker, the
// tokens round-robin (uniformly at random when aleatorio), any status but
// want an error.
func (a *ambienteHTTP) rodarHTTP(ctx context.Context, nome, addr string, tokens []string, w, taxa, want int, aleatorio bool) (resultado, error) {
	hc := novoCliente(addr, w)
	return a.rodar(ctx, resultado{Nome: nome, Conexoes: w, Taxa: taxa}, func() (func(int), func() (int, bool)) {
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
}

// formaConsulta is one way of reading a counsellor and their active
// assignment, run directly with pgx (no HTTP) by the database-only runs.
type formaConsulta struct {
	nome    string
	viagens int // client/server round trips per read
	ler     func(ctx context.Context, st *store.Store, cidadao uuid.UUID) (ativa bool, err error)
	// semDados: the read does not look at the counsellor (SELECT 1); its
	// answer is not checked against the seed.
	semDados bool
}

// formasConsulta: the handler's own query first (store.Tx.SituacaoDoCidadao,
// sql/queries' BuscarSituacao, as internal/httpapi lerSituacao runs it), then the floor of one round trip,
// then the 5-statement transaction the handler used before commit 37bcf25,
// in raw SQL so it does not depend on queries the store may drop.
var formasConsulta = []formaConsulta{{
	nome: "the handler's query (`store.Tx.SituacaoDoCidadao`: one SELECT … LEFT JOIN LATERAL, outside a transaction)", viagens: 1,
	ler: func(ctx context.Context, st *store.Store, cidadao uuid.UUID) (bool, error) {
		s, achou, err := st.Read().SituacaoDoCidadao(ctx, cidadao)
		if err == nil && !achou {
			err = pgx.ErrNoRows // every counsellor asked is registered
		}
		return s.Atribuicao != nil, err
	},
}, {
	nome: "`SELECT 1`: the floor of one round trip on the same pool", viagens: 1, semDados: true,
	ler: func(ctx context.Context, st *store.Store, _ uuid.UUID) (bool, error) {
		var um int
		return false, st.Pool.QueryRow(ctx, "SELECT 1").Scan(&um)
	},
}, {
	nome: "the handler before commit 37bcf25: BEGIN; SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; 2 SELECTs; COMMIT", viagens: 5,
	// The two sqlc queries it ran (the counsellors of a citizen, the active
	// assignment of a counsellor), every column decoded as sqlc's code did
	// (* is the columns it listed).
	ler: func(ctx context.Context, st *store.Store, cidadao uuid.UUID) (ativa bool, err error) {
		valores := func(r pgx.CollectableRow) ([]any, error) { return r.Values() }
		err = pgx.BeginFunc(ctx, st.Pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"); err != nil {
				return err
			}
			rows, _ := tx.Query(ctx, "SELECT * FROM d6a.conselheiros WHERE cidadao_id = $1 ORDER BY data_cadastro, id", cidadao)
			c, err := pgx.CollectOneRow(rows, valores) // every counsellor asked is registered: no row is an error
			if err != nil {
				return err
			}
			rows, _ = tx.Query(ctx, "SELECT * FROM d6a.atribuicoes WHERE conselheiro_id = $1 AND status = 'ativa'", c[0])
			_, err = pgx.CollectOneRow(rows, valores)
			ativa = err == nil
			return se(errors.Is(err, pgx.ErrNoRows), nil, err)
		})
		return ativa, err
	},
}}

// fechadoBanco is a closed loop of database reads: -c goroutines share the
// load generator's pool, of pgxpool's default size like the server's. A read
// fails on an error or, unless f.semDados, an answer other than the seed's.
func (a *ambienteHTTP) fechadoBanco(ctx context.Context, f formaConsulta) (resultado, error) {
	nome := fmt.Sprintf("database only, %d %s: %s", f.viagens, se(f.viagens == 1, "round trip", "round trips"), f.nome)
	return a.rodar(ctx, resultado{Nome: nome, Viagens: f.viagens, Conexoes: a.o.c}, func() (func(int), func() (int, bool)) {
		var k int
		return func(i int) { k = i % len(a.cidadaos) }, func() (int, bool) {
			ativa, err := f.ler(ctx, a.st, a.cidadaos[k])
			return 0, err == nil && (f.semDados || ativa == (k < a.o.ativos))
		}
	})
}

// medidos are the processes of the HTTP mode's CPU accounting (the server
// runs whenever they are asked for).
func (a *ambienteHTTP) medidos() processosMedidos {
	return processosMedidos{pgDir: a.pg.Dir, d6a: a.servidor.Pid()}
}

// amostrar reads the clocks and the server's counters together.
func (a *ambienteHTTP) amostrar() amostraCPU {
	s := amostrar(a.medidos())
	s.metricas = a.caches()
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

// metricasHTTP is the hits and misses of the cached d6a app's caches, from
// its /metrics: d6a_situacao_cache_total, d6a_tokens_cache_total and
// d6a_jwks_cache_total.
type metricasHTTP struct{ situacao, tokens, jwks [2]float64 }

func (m metricasHTTP) menos(o metricasHTTP) metricasHTTP {
	d := func(x, y [2]float64) [2]float64 { return [2]float64{x[0] - y[0], x[1] - y[1]} }
	return metricasHTTP{d(m.situacao, o.situacao), d(m.tokens, o.tokens), d(m.jwks, o.jwks)}
}

func lerCaches(m metricas) (c metricasHTTP) {
	for k, v := range m {
		for nome, hm := range map[string]*[2]float64{"situacao": &c.situacao, "tokens": &c.tokens, "jwks": &c.jwks} {
			if strings.HasPrefix(k, "d6a_"+nome+"_cache_total{") {
				hm[se(strings.Contains(k, `resultado="hit"`), 0, 1)] += v
			}
		}
	}
	return c
}

func (a *ambienteHTTP) caches() metricasHTTP { return lerCaches(raspar(a.enderecoD6A)) }
