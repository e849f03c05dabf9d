package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/formigueiro/d6a/internal/httpapi"
)

// latencias summarises one run's latencies (nearest rank).
type latencias struct {
	N                        int
	P50, P90, P99, P999, Max time.Duration
}

func resumir(ds []time.Duration) latencias {
	if len(ds) == 0 {
		return latencias{}
	}
	slices.Sort(ds)
	q := func(p float64) time.Duration {
		i := int(math.Ceil(p*float64(len(ds)))) - 1
		return ds[max(0, min(i, len(ds)-1))]
	}
	return latencias{N: len(ds), P50: q(0.50), P90: q(0.90), P99: q(0.99), P999: q(0.999), Max: ds[len(ds)-1]}
}

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
	Lat      latencias
	CPU      cpu

	// Open loop only.
	LatEnvio    latencias     // from the actual send, not the schedule: the server's share
	Taxa        int           // offered requests/s
	NaoEnviadas int           // scheduled but not sent before the deadline
	Atrasadas   int           // sent more than 1 ms after their scheduled time
	AtrasoMax   time.Duration // worst send delay
}

func (r resultado) Vazao() float64 {
	if r.Janela <= 0 {
		return 0
	}
	return float64(r.OK+r.Erros) / r.Janela.Seconds()
}

func (r resultado) resumo() string {
	s := fmt.Sprintf("%.0f req/s, p50 %s, p99 %s, max %s, %d errors; CPU %s",
		r.Vazao(), ms(r.Lat.P50), ms(r.Lat.P99), ms(r.Lat.Max), r.Erros, r.CPU.resumo())
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
			r.Atrasadas, ms(r.AtrasoMax), r.NaoEnviadas, ms(r.LatEnvio.P50), ms(r.LatEnvio.P99))
	}
	return s
}

func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) + " ms" }

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

// fechadoHTTP is a closed loop: c workers, each with its own keep-alive
// connection, send the next request as soon as the previous answer arrives.
// Tokens are used round-robin, worker w starting at token w. Requests
// started in the warm-up are not counted; the window is -d.
func (a *ambiente) fechadoHTTP(ctx context.Context, nome, addr string, tokens []string, c, want int) (resultado, error) {
	hc := novoCliente(addr, c)
	uri := "http://" + addr + httpapi.RotaSituacao
	inicio := time.Now()
	medir := inicio.Add(a.o.aquecimento)
	fim := medir.Add(a.o.d)
	cs := make([]*coletor, c)
	var wg sync.WaitGroup
	var amostra *amostraCPU
	var once sync.Once
	for w := range c {
		cs[w] = &coletor{lat: make([]time.Duration, 0, 1<<14), status: map[int]int{}}
		wg.Add(1)
		go func(w int, col *coletor) {
			defer wg.Done()
			req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(res)
			req.SetRequestURI(uri)
			for i := w; ctx.Err() == nil; i += c {
				req.Header.Set("Authorization", "Bearer "+tokens[i%len(tokens)])
				t0 := time.Now()
				if !t0.Before(fim) {
					return
				}
				err := hc.Do(req, res)
				t1 := time.Now()
				if t0.Before(medir) {
					continue
				}
				col.lat = append(col.lat, t1.Sub(t0))
				switch {
				case err != nil:
					col.erros++
					col.status[0]++
				case res.StatusCode() != want:
					col.erros++
					col.status[res.StatusCode()]++
				default:
					col.ok++
				}
			}
		}(w, cs[w])
	}
	// CPU is sampled over the measured window only.
	go func() {
		select {
		case <-time.After(time.Until(medir)):
			once.Do(func() { amostra = a.amostrar() })
		case <-ctx.Done():
		}
	}()
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return resultado{}, err
	}
	once.Do(func() { amostra = a.amostrar() }) // warm-up longer than the run: never in practice
	r := resultado{Nome: nome, Modo: "closed", Conexoes: c, Janela: time.Since(medir)}
	r.CPU = amostra.ate(a.amostrar())
	var lat []time.Duration
	lat, r.OK, r.Erros, r.Status = juntar(cs)
	r.Lat = resumir(lat)
	r.CPU.porReq(r.OK + r.Erros)
	return r, nil
}

// abertoHTTP is an open loop: request i is scheduled at start + i/rate,
// whatever happened to the others. A pool of -open-c senders, each with its
// own connection, takes the next scheduled request, waits for its time and
// sends it; latency runs from the scheduled time to the answer, so a request
// that waited for a free sender (because the server stalled) is charged the
// wait. The warm-up is paced too and not counted.
func (a *ambiente) abertoHTTP(ctx context.Context, addr string, tokens []string) (resultado, error) {
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
	var amostra *amostraCPU
	var once sync.Once
	go func() {
		select {
		case <-time.After(time.Until(agendado(nAquec))):
			once.Do(func() { amostra = a.amostrar() })
		case <-ctx.Done():
		}
	}()
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return resultado{}, err
	}
	once.Do(func() { amostra = a.amostrar() })
	r := resultado{
		Nome: "situacao route", Modo: "open", Conexoes: w, Taxa: taxa,
		Janela:      time.Since(agendado(nAquec)),
		NaoEnviadas: int(naoEnviadas.Load()), Atrasadas: int(atrasadas.Load()), AtrasoMax: time.Duration(atrasoMax.Load()),
	}
	r.CPU = amostra.ate(a.amostrar())
	var lat []time.Duration
	lat, r.OK, r.Erros, r.Status = juntar(cs)
	r.Erros += r.NaoEnviadas
	r.Lat = resumir(lat)
	var envio []time.Duration
	for _, c := range cs {
		envio = append(envio, c.envio...)
	}
	r.LatEnvio = resumir(envio)
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
type amostraCPU struct {
	t                          time.Time
	carga, servidor, postgres  float64 // CPU seconds
	maquinaOcupada, maquinaTot float64 // /proc/stat ticks
	maquinaIRQ                 float64 // /proc/stat ticks in irq and softirq
	lerSrv, escSrv             float64 // server's syscr, syscw
	contadas                   float64 // situacao requests in the d6a apps' own histograms
	hit, miss                  float64 // the cached app's d6a_situacao_cache_total
}

// clkTck is USER_HZ, 100 on every Linux architecture Go supports.
const clkTck = 100

func (a *ambiente) amostrar() *amostraCPU {
	s := &amostraCPU{t: time.Now()}
	s.carga = cpuProcesso(os.Getpid())
	if a.servidor != nil && a.servidor.Process != nil {
		s.servidor = cpuProcesso(a.servidor.Process.Pid)
		s.lerSrv, s.escSrv = syscalls(a.servidor.Process.Pid)
		m := a.metricasServidor()
		s.contadas, s.hit, s.miss = m.contadas, m.hit, m.miss
	}
	if pm := a.pidPostmaster(); pm > 0 {
		s.postgres = cpuArvore(pm)
	}
	s.maquinaOcupada, s.maquinaTot, s.maquinaIRQ = cpuMaquina()
	return s
}

func (s *amostraCPU) ate(f *amostraCPU) cpu {
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

// statProcesso reads ppid and utime+stime (seconds) of /proc/<pid>/stat.
func statProcesso(pid int) (ppid int, seg float64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	s := string(b)
	// The command name may hold spaces and parentheses: fields start after
	// the last ')'.
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
	if len(f) < 13 {
		return 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	u, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return ppid, (u + st) / clkTck, true
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

func cpuProcesso(pid int) float64 {
	_, s, _ := statProcesso(pid)
	return s
}

// cpuArvore is the CPU of pid and its direct children (the postmaster and
// its backends and auxiliary processes).
func cpuArvore(pid int) float64 {
	total := cpuProcesso(pid)
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return total
	}
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, s, ok := statProcesso(n); ok && pp == pid {
			total += s
		}
	}
	return total
}

// cpuMaquina reads busy, total, and irq+softirq ticks of all CPUs from
// /proc/stat. Interrupt time is not in any process's utime/stime.
func cpuMaquina() (ocupado, total, irq float64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, 0
	}
	l, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(l)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, 0, 0
	}
	// user nice system idle iowait irq softirq steal (guest is inside user)
	var v []float64
	for _, x := range f[1:min(len(f), 9)] {
		n, _ := strconv.ParseFloat(x, 64)
		v = append(v, n)
		total += n
	}
	return total - v[3] - v[4], total, v[5] + v[6]
}

// nucleos is the CPUs this process may run on (what nproc prints).
func nucleos() int { return runtime.NumCPU() }

// limiteSilencio is the CPU other processes may use for the machine to
// count as quiet.
const limiteSilencio = 0.2

// esperarSilencio waits, up to -wait-quiet, until other processes use less
// than limiteSilencio cores over one second. It only reports when it gives
// up: the report shows what other processes took during each run anyway.
func (a *ambiente) esperarSilencio(ctx context.Context) error {
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
func (a *ambiente) perfilar(ctx context.Context) <-chan error {
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
type metricas struct {
	contadas  float64 // situacao requests timed, every status (d6a_http_duracao_segundos_count)
	hit, miss float64 // d6a_situacao_cache_total
}

// lerMetricas parses the Prometheus text format of a d6a app's /metrics.
func lerMetricas(corpo string) metricas {
	var m metricas
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
func metricasDe(hc *fasthttp.HostClient, addr string) metricas {
	if hc == nil || addr == "" {
		return metricas{}
	}
	req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(res)
	req.SetRequestURI("http://" + addr + httpapi.RotaMetrics)
	if err := hc.Do(req, res); err != nil || res.StatusCode() != 200 {
		return metricas{}
	}
	return lerMetricas(string(res.Body()))
}

// metricasServidor reads both d6a apps' /metrics: the situacao requests
// timed by either (only one is driven at a time) and the cache counters of
// the cached app (the other has no cache).
func (a *ambiente) metricasServidor() metricas {
	if a.enderecoD6A == "" {
		return metricas{}
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
