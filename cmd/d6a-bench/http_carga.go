package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/formigueiro/d6a/internal/httpapi"
	"github.com/formigueiro/d6a/internal/latency"
	"github.com/formigueiro/d6a/internal/pglocal"
	"github.com/formigueiro/d6a/internal/procstat"
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
	CPU      cpu

	// Open loop only.
	LatEnvio    latency.Summary // from the actual send, not the schedule: the server's share
	Taxa        int             // offered requests/s
	NaoEnviadas int             // scheduled but not sent before the deadline
	Atrasadas   int             // sent more than 1 ms after their scheduled time
	AtrasoMax   time.Duration   // worst send delay
}

func (r resultado) Vazao() float64 {
	if r.Janela <= 0 {
		return 0
	}
	return float64(r.OK+r.Erros) / r.Janela.Seconds()
}

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
		s += fmt.Sprintf("; server read(2)/write(2) per request %.1f/%.1f", r.CPU.LeiturasServidor, r.CPU.EscritasServidor)
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

func juntar(cs []*coletor) (lat []time.Duration, ok, erros int, status map[int]int) {
	status = map[int]int{}
	for _, c := range cs {
		lat = append(lat, c.lat...)
		ok += c.ok
		erros += c.erros
		for k, v := range c.status {
			status[k] += v
		}
	}
	return
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

// pedido is one worker's side of a closed loop.
type pedido struct {
	// preparar readies request i, outside the timed interval.
	preparar func(i int)
	// fazer sends it; a failure is counted under status (0: transport or
	// database error).
	fazer func() (status int, ok bool)
	// liberar, when set, runs once the worker stops.
	liberar func()
}

// fechado is a closed loop: c workers, each made by novo, send the next
// request as soon as the previous one ends; worker w sends requests w,
// w+c, w+2c… Requests started in the warm-up are not counted; the window is
// -d. The caller names the result.
func (a *ambienteHTTP) fechado(ctx context.Context, c int, novo func() pedido) (resultado, error) {
	inicio := time.Now()
	medir := inicio.Add(a.o.aquecimento)
	fim := medir.Add(a.o.d)
	cs := make([]*coletor, c)
	var wg sync.WaitGroup
	for w := range c {
		cs[w] = &coletor{lat: make([]time.Duration, 0, 1<<14), status: map[int]int{}}
		wg.Add(1)
		go func(w int, col *coletor) {
			defer wg.Done()
			p := novo()
			if p.liberar != nil {
				defer p.liberar()
			}
			for i := w; ctx.Err() == nil; i += c {
				p.preparar(i)
				t0 := time.Now()
				if !t0.Before(fim) {
					return
				}
				status, ok := p.fazer()
				t1 := time.Now()
				if t0.Before(medir) {
					continue
				}
				col.lat = append(col.lat, t1.Sub(t0))
				if !ok {
					col.erros++
					col.status[status]++
					continue
				}
				col.ok++
			}
		}(w, cs[w])
	}
	cpuJanela := a.janelaCPU(ctx, medir)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return resultado{}, err
	}
	r := resultado{Modo: "closed", Conexoes: c, Janela: time.Since(medir)}
	r.CPU = cpuJanela()
	var lat []time.Duration
	lat, r.OK, r.Erros, r.Status = juntar(cs)
	r.Lat = latency.Summarize(lat)
	r.CPU.porReq(r.OK + r.Erros)
	return r, nil
}

// janelaCPU samples the CPU clocks when the measured window opens at
// inicio (CPU is measured over that window only); the function it returns,
// called when the window closes, gives the CPU used in it. A window still
// unopened by then (a warm-up longer than the run: never in practice)
// opens at that call.
func (a *ambienteHTTP) janelaCPU(ctx context.Context, inicio time.Time) func() cpu {
	var amostra *amostraHTTP
	var once sync.Once
	go func() {
		select {
		case <-time.After(time.Until(inicio)):
			once.Do(func() { amostra = a.amostrar() })
		case <-ctx.Done():
		}
	}()
	return func() cpu {
		once.Do(func() { amostra = a.amostrar() })
		return amostra.ate(a.amostrar())
	}
}

// fechadoHTTP is the closed loop over HTTP: each worker has its own
// keep-alive connection and uses the tokens round-robin, worker w starting
// at token w; any status but want is an error.
func (a *ambienteHTTP) fechadoHTTP(ctx context.Context, nome, addr string, tokens []string, c, want int) (resultado, error) {
	hc := novoCliente(addr, c)
	uri := "http://" + addr + httpapi.RotaSituacao
	r, err := a.fechado(ctx, c, func() pedido {
		req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		req.SetRequestURI(uri)
		return pedido{
			preparar: func(i int) { req.Header.Set("Authorization", "Bearer "+tokens[i%len(tokens)]) },
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
	if err != nil {
		return resultado{}, err
	}
	r.Nome = nome
	return r, nil
}

// abertoHTTP is an open loop: request i is scheduled at start + i/rate,
// whatever happened to the others. A pool of -open-c senders, each with its
// own connection, takes the next scheduled request, waits for its time and
// sends it; latency runs from the scheduled time to the answer, so a request
// that waited for a free sender (because the server stalled) is charged the
// wait. The warm-up is paced too and not counted.
func (a *ambienteHTTP) abertoHTTP(ctx context.Context, addr string, tokens []string) (resultado, error) {
	taxa := a.o.taxa
	intervalo := float64(time.Second) / float64(taxa)
	nAquec := int(a.o.aquecimento.Seconds() * float64(taxa))
	nMedidas := int(a.o.d.Seconds() * float64(taxa))
	total := nAquec + nMedidas
	w := a.o.conexoesAbrt
	hc := novoCliente(addr, w)
	uri := "http://" + addr + httpapi.RotaSituacao
	inicio := time.Now().Add(50 * time.Millisecond)
	agendado := func(i int) time.Time { return inicio.Add(time.Duration(float64(i) * intervalo)) }
	// A request not sent 10 s after the schedule ends is given up.
	limite := agendado(total).Add(10 * time.Second)

	var prox atomic.Int64
	var atrasadas, naoEnviadas atomic.Int64
	var atrasoMax atomic.Int64
	cs := make([]*coletor, w)
	var wg sync.WaitGroup
	for k := range w {
		cs[k] = &coletor{lat: make([]time.Duration, 0, nMedidas/w+64), envio: make([]time.Duration, 0, nMedidas/w+64), status: map[int]int{}}
		wg.Add(1)
		go func(col *coletor) {
			defer wg.Done()
			req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(res)
			req.SetRequestURI(uri)
			for ctx.Err() == nil {
				i := int(prox.Add(1) - 1)
				if i >= total {
					return
				}
				t := agendado(i)
				if d := time.Until(t); d > 0 {
					time.Sleep(d)
				}
				envio := time.Now()
				if envio.After(limite) {
					if i >= nAquec {
						naoEnviadas.Add(1)
					}
					continue
				}
				req.Header.Set("Authorization", "Bearer "+tokens[i%len(tokens)])
				err := hc.Do(req, res)
				t1 := time.Now()
				if i < nAquec {
					continue
				}
				if atraso := envio.Sub(t); atraso > time.Millisecond {
					atrasadas.Add(1)
					for {
						m := atrasoMax.Load()
						if int64(atraso) <= m || atrasoMax.CompareAndSwap(m, int64(atraso)) {
							break
						}
					}
				}
				col.lat = append(col.lat, t1.Sub(t))
				col.envio = append(col.envio, t1.Sub(envio))
				switch {
				case err != nil:
					col.erros++
					col.status[0]++
				case res.StatusCode() != 200:
					col.erros++
					col.status[res.StatusCode()]++
				default:
					col.ok++
				}
			}
		}(cs[k])
	}
	cpuJanela := a.janelaCPU(ctx, agendado(nAquec))
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return resultado{}, err
	}
	r := resultado{
		Nome: "situacao route", Modo: "open", Conexoes: w, Taxa: taxa,
		Janela:      time.Since(agendado(nAquec)),
		NaoEnviadas: int(naoEnviadas.Load()), Atrasadas: int(atrasadas.Load()), AtrasoMax: time.Duration(atrasoMax.Load()),
	}
	r.CPU = cpuJanela()
	var lat []time.Duration
	lat, r.OK, r.Erros, r.Status = juntar(cs)
	r.Erros += r.NaoEnviadas
	r.Lat = latency.Summarize(lat)
	var envio []time.Duration
	for _, c := range cs {
		envio = append(envio, c.envio...)
	}
	r.LatEnvio = latency.Summarize(envio)
	r.CPU.porReq(r.OK + r.Erros)
	return r, nil
}

// cpu is the CPU time each party used during a window, in cores (CPU
// seconds per wall second) and in microseconds per request.
type cpu struct {
	Carga, Servidor, Postgres, Maquina float64 // cores; Maquina = whole machine, all processes
	Kernel                             float64 // cores: interrupt and softirq time (loopback networking lands here)
	Outros                             float64 // cores: Maquina minus the three parties and Kernel (other processes, kernel threads)
	Nucleos                            int
	janela                             time.Duration
	UsCarga, UsServidor, UsPostgres    float64 // µs of CPU per request
	UsKernel                           float64
	// Server process read(2)/write(2) calls per request (/proc/<pid>/io);
	// each PostgreSQL round trip is at least one of each.
	LeiturasServidor, EscritasServidor float64
	lerSrv, escSrv                     float64 // totals over the window
	// Contadas is how many situacao requests the d6a app itself timed in
	// the window (d6a_http_duracao_segundos_count): a check on the load
	// generator's count.
	Contadas float64
	// CacheHit and CacheMiss are the cached d6a app's situacao reads
	// answered from its cache and from PostgreSQL in the window
	// (d6a_situacao_cache_total).
	CacheHit, CacheMiss float64
}

// RazaoCache is the share of the window's situacao reads the cache
// answered; ok is false when the cache counted none.
func (c cpu) RazaoCache() (r float64, ok bool) {
	if n := c.CacheHit + c.CacheMiss; n > 0 {
		return c.CacheHit / n, true
	}
	return 0, false
}

func (c cpu) resumo() string {
	return fmt.Sprintf("load generator %.2f + server %.2f + PostgreSQL %.2f + irq/softirq %.2f + others %.2f cores (machine %.0f%% busy)",
		c.Carga, c.Servidor, c.Postgres, c.Kernel, c.Outros, 100*c.Maquina/float64(max(1, c.Nucleos)))
}

func (c *cpu) porReq(n int) {
	if n == 0 || c.janela <= 0 {
		return
	}
	f := c.janela.Seconds() * 1e6 / float64(n)
	c.UsCarga, c.UsServidor, c.UsPostgres, c.UsKernel = c.Carga*f, c.Servidor*f, c.Postgres*f, c.Kernel*f
	c.LeiturasServidor, c.EscritasServidor = c.lerSrv/float64(n), c.escSrv/float64(n)
}

// amostraCPU is one reading of the clocks.
type amostraHTTP struct {
	t                          time.Time
	carga, servidor, postgres  float64 // CPU seconds
	maquinaOcupada, maquinaTot float64 // /proc/stat ticks
	maquinaIRQ                 float64 // /proc/stat ticks in irq and softirq
	lerSrv, escSrv             float64 // server's syscr, syscw
	contadas                   float64 // situacao requests in the d6a apps' own histograms
	hit, miss                  float64 // the cached app's d6a_situacao_cache_total
}

func (a *ambienteHTTP) amostrar() *amostraHTTP {
	s := &amostraHTTP{t: time.Now()}
	s.carga = cpuProcesso(os.Getpid())
	if a.servidor != nil && a.servidor.Process != nil {
		s.servidor = cpuProcesso(a.servidor.Process.Pid)
		s.lerSrv, s.escSrv = syscalls(a.servidor.Process.Pid)
		m := a.metricasServidor()
		s.contadas, s.hit, s.miss = m.contadas, m.hit, m.miss
	}
	if pm, _ := pglocal.Postmaster(a.cluster.Dir); pm > 0 {
		s.postgres = cpuArvore(pm)
	}
	s.maquinaOcupada, s.maquinaTot, s.maquinaIRQ = cpuMaquina()
	return s
}

func (s *amostraHTTP) ate(f *amostraHTTP) cpu {
	if s == nil || f == nil {
		return cpu{}
	}
	j := f.t.Sub(s.t)
	if j <= 0 {
		return cpu{}
	}
	c := cpu{janela: j, Nucleos: nucleos()}
	c.Carga = (f.carga - s.carga) / j.Seconds()
	c.Servidor = (f.servidor - s.servidor) / j.Seconds()
	c.Postgres = (f.postgres - s.postgres) / j.Seconds()
	if tot := f.maquinaTot - s.maquinaTot; tot > 0 {
		c.Maquina = float64(c.Nucleos) * (f.maquinaOcupada - s.maquinaOcupada) / tot
		c.Kernel = float64(c.Nucleos) * (f.maquinaIRQ - s.maquinaIRQ) / tot
	}
	c.Outros = max(0, c.Maquina-c.Carga-c.Servidor-c.Postgres-c.Kernel)
	c.lerSrv, c.escSrv = f.lerSrv-s.lerSrv, f.escSrv-s.escSrv
	c.Contadas = f.contadas - s.contadas
	c.CacheHit, c.CacheMiss = f.hit-s.hit, f.miss-s.miss
	return c
}

// syscalls reads the read- and write-family system calls pid has made
// (syscr, syscw of /proc/<pid>/io; Go's sockets use read(2) and write(2)).
func syscalls(pid int) (r, w float64) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(l, ":")
		n, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
		switch k {
		case "syscr":
			r = n
		case "syscw":
			w = n
		}
	}
	return r, w
}

// cpuProcesso is the CPU time pid has used, in seconds.
func cpuProcesso(pid int) float64 {
	p, _ := procstat.Read(pid)
	return float64(p.Own) / procstat.HZ
}

// cpuArvore is the CPU of pid and its direct children (the postmaster and
// its backends and auxiliary processes).
func cpuArvore(pid int) float64 {
	total := cpuProcesso(pid)
	for _, f := range procstat.Children(pid) {
		total += float64(f.Own) / procstat.HZ
	}
	return total
}

// cpuMaquina reads busy, total, and irq+softirq ticks of all CPUs from
// /proc/stat. Interrupt time is not in any process's utime/stime.
func cpuMaquina() (ocupado, total, irq float64) {
	m, ok := procstat.ReadMachine()
	if !ok {
		return 0, 0, 0
	}
	return float64(m.Busy()), float64(m.Total()), float64(m.IRQ + m.SoftIRQ)
}

// nucleos is the CPUs this process may run on (what nproc prints).
func nucleos() int { return runtime.NumCPU() }

// limiteSilencio is the CPU other processes may use for the machine to
// count as quiet.
const limiteSilencio = 0.2

// esperarSilencio waits, up to -wait-quiet, until other processes use less
// than limiteSilencio cores over one second. It only reports when it gives
// up: the report shows what other processes took during each run anyway.
func (a *ambienteHTTP) esperarSilencio(ctx context.Context) error {
	if a.o.silencio <= 0 {
		return nil
	}
	limite := time.Now().Add(a.o.silencio)
	avisou := false
	for {
		s := a.amostrar()
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return ctx.Err()
		}
		c := s.ate(a.amostrar())
		if c.Outros < limiteSilencio {
			return nil
		}
		if time.Now().After(limite) {
			fmt.Fprintf(os.Stderr, "   other processes still use %.2f cores after %s; measuring anyway\n", c.Outros, a.o.silencio)
			return nil
		}
		if !avisou {
			fmt.Fprintf(os.Stderr, "   other processes use %.2f cores; waiting up to %s for a quiet machine\n", c.Outros, a.o.silencio)
			avisou = true
		}
	}
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
		case <-ctx.Done():
			feito <- ctx.Err()
			return
		}
		url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", a.enderecoPprof, max(1, int(a.o.d.Seconds())))
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			feito <- err
			return
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			feito <- err
			return
		}
		defer res.Body.Close()
		if res.StatusCode != 200 {
			feito <- fmt.Errorf("pprof: status %d", res.StatusCode)
			return
		}
		f, err := os.Create(a.o.perfil)
		if err != nil {
			feito <- err
			return
		}
		if _, err := io.Copy(f, res.Body); err != nil {
			f.Close()
			feito <- err
			return
		}
		feito <- f.Close()
	}()
	return feito
}

// metricas is what the tool reads from a d6a app's /metrics.
type metricasHTTP struct {
	contadas  float64 // situacao requests timed, every status (d6a_http_duracao_segundos_count)
	hit, miss float64 // d6a_situacao_cache_total
}

// lerMetricas parses the Prometheus text format of a d6a app's /metrics.
func lerMetricas(corpo string) metricasHTTP {
	var m metricasHTTP
	valor := func(l string) float64 {
		i := strings.LastIndexByte(l, ' ')
		if i < 0 {
			return 0
		}
		v, _ := strconv.ParseFloat(l[i+1:], 64)
		return v
	}
	for _, l := range strings.Split(corpo, "\n") {
		switch {
		case strings.HasPrefix(l, `d6a_http_duracao_segundos_count{`) && strings.Contains(l, `rota="`+httpapi.RotaSituacao+`"`):
			m.contadas += valor(l)
		case strings.HasPrefix(l, `d6a_situacao_cache_total{`) && strings.Contains(l, `resultado="hit"`):
			m.hit += valor(l)
		case strings.HasPrefix(l, `d6a_situacao_cache_total{`) && strings.Contains(l, `resultado="miss"`):
			m.miss += valor(l)
		}
	}
	return m
}

// metricasDe reads the /metrics of the d6a app at addr through hc; zero
// when it cannot.
func metricasDe(hc *fasthttp.HostClient, addr string) metricasHTTP {
	if hc == nil || addr == "" {
		return metricasHTTP{}
	}
	req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(res)
	req.SetRequestURI("http://" + addr + httpapi.RotaMetrics)
	if err := hc.Do(req, res); err != nil || res.StatusCode() != 200 {
		return metricasHTTP{}
	}
	return lerMetricas(string(res.Body()))
}

// metricasServidor reads both d6a apps' /metrics: the situacao requests
// timed by either (only one is driven at a time) and the cache counters of
// the cached app (the other has no cache).
func (a *ambienteHTTP) metricasServidor() metricasHTTP {
	if a.enderecoD6A == "" {
		return metricasHTTP{}
	}
	if a.clienteMetricas == nil {
		a.clienteMetricas = novoCliente(a.enderecoD6A, 1)
	}
	m := metricasDe(a.clienteMetricas, a.enderecoD6A)
	if a.enderecoSemCache != "" {
		if a.clienteMetricasSem == nil {
			a.clienteMetricasSem = novoCliente(a.enderecoSemCache, 1)
		}
		m.contadas += metricasDe(a.clienteMetricasSem, a.enderecoSemCache).contadas
	}
	return m
}
