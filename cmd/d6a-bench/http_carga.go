package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/formigueiro/d6a/internal/httpapi"
	"github.com/formigueiro/d6a/internal/latency"
)

// resultado is one measured run.
type resultado struct {
	Nome     string
	Detalhe  string // database-only runs: the statements
	Viagens  int    // database-only runs: round trips per read
	Modo     string // "closed" or "open"
	Conexoes int
	Janela   time.Duration // measured window
	OK       int           // answers with the expected status
	Erros    int           // transport errors and other statuses
	Status   map[int]int   // unexpected statuses
	Lat      latency.Summary
	CPU      usoCPU

	// Open loop only.
	LatEnvio    latency.Summary // from the actual send, not the schedule: the server's share
	Taxa        int             // offered requests/s
	NaoEnviadas int             // scheduled but not sent before the deadline
	Atrasadas   int             // sent more than 1 ms after their scheduled time
	AtrasoMax   time.Duration   // worst send delay
}

func (r resultado) Vazao() float64 { return razao(float64(r.OK+r.Erros), max(0, r.Janela.Seconds())) }

func (r resultado) resumo() string {
	s := fmt.Sprintf("%.0f req/s, p50 %s, p99 %s, max %s, %d errors; CPU %s",
		r.Vazao(), msHTTP(r.Lat.P50), msHTTP(r.Lat.P99), msHTTP(r.Lat.Max), r.Erros, r.CPU.resumo())
	if r.CPU.Contadas > 0 {
		s += fmt.Sprintf("; the d6a app timed %.0f situacao requests in the window (load generator: %d)", r.CPU.Contadas, r.OK+r.Erros)
	}
	if h, ok := r.CPU.RazaoCache(); ok {
		s += fmt.Sprintf("; cache %.0f hits / %.0f misses (%.2f%% hits)", r.CPU.CacheHit, r.CPU.CacheMiss, 100*h)
	}
	if r.Viagens == 0 {
		s += fmt.Sprintf("; server read(2)/write(2) per request %.1f/%.1f", r.CPU.Por(r.CPU.Lidas), r.CPU.Por(r.CPU.Escritas))
	}
	if r.Modo == "open" {
		s += fmt.Sprintf("; %d sent > 1 ms late (worst %s), %d not sent; from the actual send p50 %s, p99 %s",
			r.Atrasadas, msHTTP(r.AtrasoMax), r.NaoEnviadas, msHTTP(r.LatEnvio.P50), msHTTP(r.LatEnvio.P99))
	}
	return s
}

func msHTTP(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) + " ms" }

// coletor gathers one worker's samples.
type coletor struct {
	lat    []time.Duration
	envio  []time.Duration // open loop: from the actual send
	ok     int
	erros  int
	status map[int]int
}

func novoCliente(addr string, conns int) *fasthttp.HostClient {
	return &fasthttp.HostClient{
		Addr:                addr,
		MaxConns:            conns,
		ReadTimeout:         10 * time.Second,
		WriteTimeout:        10 * time.Second,
		MaxIdleConnDuration: time.Minute,
		MaxConnWaitTimeout:  10 * time.Second,
	}
}

// pedido is one worker's side of a run.
type pedido struct {
	// preparar readies request i, outside the timed interval.
	preparar func(i int)
	// fazer sends it; a failure is counted under status (0: transport or
	// database error).
	fazer func() (status int, ok bool)
	// liberar, when set, runs once the worker stops.
	liberar func()
}

// rodar runs w workers, each made by novo, over requests 0, 1, 2… taken in
// turn, -warmup (not counted) then -d. With taxa 0 it is a closed loop: a
// worker sends its next request as soon as its previous one ends. Else it
// is an open loop: request i is scheduled at start + i/taxa whatever
// happened to the others, and its latency runs from that time, so a request
// that waited for a free worker (because the server stalled) is charged the
// wait.
func (a *ambienteHTTP) rodar(ctx context.Context, w, taxa int, novo func() pedido) (resultado, error) {
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
	var prox, atrasadas, naoEnviadas, atrasoMax atomic.Int64
	cs := make([]*coletor, w) // apart: no false sharing between workers
	cpuJanela := a.janelaCPU(ctx, medir)
	_ = paralelo(w, func(k int) error {
		col := &coletor{status: map[int]int{}}
		cs[k] = col
		p := novo()
		if p.liberar != nil {
			defer p.liberar()
		}
		for ctx.Err() == nil {
			i := int(prox.Add(1) - 1)
			if i >= total {
				return nil
			}
			p.preparar(i)
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
					naoEnviadas.Add(1)
				}
				continue
			}
			status, ok := p.fazer()
			t1 := time.Now()
			if t.Before(medir) {
				continue
			}
			if atraso := envio.Sub(t); agendado != nil && atraso > time.Millisecond {
				atrasadas.Add(1)
				for m := atrasoMax.Load(); int64(atraso) > m; m = atrasoMax.Load() {
					if atrasoMax.CompareAndSwap(m, int64(atraso)) {
						break
					}
				}
			}
			col.lat = append(col.lat, t1.Sub(t))
			col.envio = append(col.envio, t1.Sub(envio))
			if !ok {
				col.erros++
				col.status[status]++
				continue
			}
			col.ok++
		}
		return nil
	})
	if err := ctx.Err(); err != nil {
		return resultado{}, err
	}
	r := resultado{Modo: "closed", Conexoes: w, Janela: time.Since(medir), Status: map[int]int{}}
	if agendado != nil {
		r.Modo, r.Taxa = "open", taxa
		r.NaoEnviadas, r.Atrasadas, r.AtrasoMax = int(naoEnviadas.Load()), int(atrasadas.Load()), time.Duration(atrasoMax.Load())
	}
	r.CPU = cpuJanela()
	var lat, envio []time.Duration
	for _, c := range cs {
		lat, envio = append(lat, c.lat...), append(envio, c.envio...)
		r.OK += c.ok
		r.Erros += c.erros
		for k, v := range c.status {
			r.Status[k] += v
		}
	}
	r.Erros += r.NaoEnviadas
	r.Lat, r.LatEnvio = latency.Summarize(lat), latency.Summarize(envio)
	r.CPU.N = r.OK + r.Erros
	return r, nil
}

// janelaCPU samples the CPU clocks when the measured window opens at
// inicio (CPU is measured over that window only); the function it returns,
// called when the window closes, gives the CPU used in it. A window still
// unopened by then (a warm-up longer than the run: never in practice)
// opens at that call.
func (a *ambienteHTTP) janelaCPU(ctx context.Context, inicio time.Time) func() usoCPU {
	var amostra amostraCPU
	var once sync.Once
	go func() {
		select {
		case <-time.After(time.Until(inicio)):
			once.Do(func() { amostra = a.amostrar() })
		case <-ctx.Done():
		}
	}()
	return func() usoCPU {
		once.Do(func() { amostra = a.amostrar() })
		return calcularUso(amostra, a.amostrar(), 0)
	}
}

// rodarHTTP is a run over HTTP (rodar: closed loop when taxa is 0): each
// worker has its own keep-alive connection and uses the tokens
// round-robin, or uniformly at random when aleatorio; any status but want
// is an error.
func (a *ambienteHTTP) rodarHTTP(ctx context.Context, nome, addr string, tokens []string, w, taxa, want int, aleatorio bool) (resultado, error) {
	hc := novoCliente(addr, w)
	uri := "http://" + addr + httpapi.RotaSituacao
	r, err := a.rodar(ctx, w, taxa, func() pedido {
		req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		req.SetRequestURI(uri)
		return pedido{
			preparar: func(i int) {
				if aleatorio {
					i = rand.IntN(len(tokens))
				}
				req.Header.Set("Authorization", "Bearer "+tokens[i%len(tokens)])
			},
			fazer: func() (int, bool) {
				if err := hc.Do(req, res); err != nil {
					return 0, false
				}
				return res.StatusCode(), res.StatusCode() == want
			},
			liberar: func() {
				fasthttp.ReleaseRequest(req)
				fasthttp.ReleaseResponse(res)
			},
		}
	})
	r.Nome = nome
	if err == nil {
		logf("    %s", r.resumo())
	}
	return r, err
}

// RazaoCache is the share of the window's situacao reads the cache
// answered; ok is false when the cache counted none.
func (c usoCPU) RazaoCache() (r float64, ok bool) {
	if n := c.CacheHit + c.CacheMiss; n > 0 {
		return c.CacheHit / n, true
	}
	return 0, false
}

func (c usoCPU) resumo() string {
	return fmt.Sprintf("load generator %.2f + server %.2f + PostgreSQL %.2f + irq/softirq %.2f + others %.2f cores (machine %.0f%% busy)",
		c.Eu, c.D6A, c.PG, c.Kernel, c.Outros, 100*c.Ocupacao())
}

// medidos are the processes of the HTTP mode's CPU accounting.
func (a *ambienteHTTP) medidos() processosMedidos {
	p := processosMedidos{pgDir: a.pg.Dir}
	if a.servidor != nil {
		p.d6a = a.servidor.Pid()
	}
	return p
}

// amostrar reads the clocks and the server's counters together.
func (a *ambienteHTTP) amostrar() amostraCPU {
	s := amostrar(a.medidos())
	s.metricas = a.metricasServidor()
	return s
}

// perfilar, with -cpuprofile, fetches the server's CPU profile over the
// measured window of the run that starts now and writes it to the file.
func (a *ambienteHTTP) perfilar(ctx context.Context) <-chan error {
	feito := make(chan error, 1)
	if a.enderecoPprof == "" {
		feito <- nil
		return feito
	}
	go func() {
		select {
		case <-time.After(a.o.aquecimento):
			feito <- perfilGo(ctx, a.enderecoPprof, a.o.perfil, max(1, int(a.o.d.Seconds())))
		case <-ctx.Done():
			feito <- ctx.Err()
		}
	}()
	return feito
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
	par := func(k string) int { return map[bool]int{true: 0, false: 1}[strings.Contains(k, `resultado="hit"`)] }
	for k, v := range m {
		switch {
		case strings.HasPrefix(k, `d6a_tokens_cache_total{`):
			s.tokens[par(k)] += v
		case strings.HasPrefix(k, `d6a_jwks_cache_total{`):
			s.jwks[par(k)] += v
		case strings.HasPrefix(k, `d6a_http_duracao_segundos_count{`) && strings.Contains(k, `rota="`+httpapi.RotaSituacao+`"`):
			s.contadas += v
		case strings.HasPrefix(k, `d6a_situacao_cache_total{`) && strings.Contains(k, `resultado="hit"`):
			s.hit += v
		case strings.HasPrefix(k, `d6a_situacao_cache_total{`) && strings.Contains(k, `resultado="miss"`):
			s.miss += v
		}
	}
	return s
}

// metricasServidor reads both d6a apps' /metrics: the situacao requests
// timed by either (only one is driven at a time) and the cache counters of
// the cached app (the other has no cache).
func (a *ambienteHTTP) metricasServidor() metricasHTTP {
	if a.enderecoD6A == "" {
		return metricasHTTP{}
	}
	m := situacaoDe(raspar(a.enderecoD6A))
	if a.enderecoSemCache != "" {
		m.contadas += situacaoDe(raspar(a.enderecoSemCache)).contadas
	}
	return m
}
