package main

import (
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/formigueiro/d6a/internal/pglocal"
	"github.com/formigueiro/d6a/internal/procstat"
)

// CPU accounting of a measurement window from /proc, shared by both modes:
// the measured server (d6a serve, or the HTTP mode's server process), the
// PostgreSQL cluster (postmaster, its live children and the children it
// reaped), a separate nats-server and this process; and how busy the whole
// machine was, so a run disturbed by other processes shows it.

type processosMedidos struct {
	d6a, nats int    // pids (0 = none)
	pgDir     string // data directory: postmaster.pid
}

type amostraCPU struct {
	quando              time.Time
	total, ocupado, irq uint64       // /proc/stat "cpu" line, ticks of all CPUs
	d6a, pg, nats, eu   uint64       // ticks
	lidas, escritas     float64      // the server's syscr, syscw (Go's sockets use read(2) and write(2))
	metricas            metricasHTTP // the HTTP mode's counters, read with the clocks
}

func amostrar(p processosMedidos) amostraCPU {
	a := amostraCPU{quando: time.Now()}
	if m, ok := procstat.ReadMachine(); ok {
		a.total, a.ocupado, a.irq = m.Total(), m.Busy(), m.IRQ+m.SoftIRQ
	}
	// A pid of 0 reads as nothing.
	d6a, _ := procstat.Read(p.d6a)
	nats, _ := procstat.Read(p.nats)
	eu, _ := procstat.Read(os.Getpid())
	a.d6a, a.nats, a.eu = d6a.Own, nats.Own, eu.Own+eu.Reaped
	io := "/proc/" + strconv.Itoa(p.d6a) + "/io"
	a.lidas, _ = strconv.ParseFloat(procField(io, "syscr"), 64)
	a.escritas, _ = strconv.ParseFloat(procField(io, "syscw"), 64)
	if pm, _ := pglocal.Postmaster(p.pgDir); p.pgDir != "" && pm > 0 {
		pr, _ := procstat.Read(pm)
		a.pg = pr.Own + pr.Reaped
		for _, filho := range procstat.Children(pm) {
			a.pg += filho.Own
		}
	}
	return a
}

// usoCPU is a window's CPU in cores (CPU seconds per wall second) of each
// party, and per unit of work (a draw, a request) through Ms and Us.
type usoCPU struct {
	Janela            time.Duration
	Nucleos           int
	N                 int          // units of work in the window
	D6A, PG, NATS, Eu float64      // cores; Eu = this process (publisher, bare loop, load generator)
	Maquina           float64      // cores busy, all processes
	Kernel            float64      // cores in irq and softirq (in no process's time; loopback networking lands here)
	Outros            float64      // Maquina minus the parties above: other processes, kernel threads
	Lidas, Escritas   float64      // the server's read(2) and write(2) calls in the window
	Cache             metricasHTTP // HTTP mode: the cached app's cache counters in the window
}

func calcularUso(a, b amostraCPU, n int) usoCPU {
	u := usoCPU{Janela: b.quando.Sub(a.quando), Nucleos: runtime.NumCPU(), N: n}
	s := u.Janela.Seconds()
	if s <= 0 || b.total <= a.total {
		return u
	}
	cores := func(x, y uint64) float64 { return se(y < x, 0, float64(y-x)/procstat.HZ/s) } // y < x: a process replaced between the samples
	u.D6A, u.PG, u.NATS, u.Eu = cores(a.d6a, b.d6a), cores(a.pg, b.pg), cores(a.nats, b.nats), cores(a.eu, b.eu)
	dt := float64(b.total - a.total)
	u.Maquina = float64(u.Nucleos) * float64(b.ocupado-a.ocupado) / dt
	u.Kernel = float64(u.Nucleos) * float64(b.irq-a.irq) / dt
	u.Outros = max(0, u.Maquina-u.D6A-u.PG-u.NATS-u.Eu-u.Kernel)
	u.Lidas, u.Escritas, u.Cache = b.lidas-a.lidas, b.escritas-a.escritas, b.metricas.menos(a.metricas)
	return u
}

// Ms is the milliseconds of CPU per unit of work that cores stand for; Us
// the microseconds; Por divides x by the units of work.
func (u usoCPU) Ms(cores float64) float64 { return u.Por(cores * u.Janela.Seconds() * 1000) }
func (u usoCPU) Us(cores float64) float64 { return 1000 * u.Ms(cores) }
func (u usoCPU) Por(x float64) float64    { return x / float64(max(1, u.N)) }
func (u usoCPU) Ocupacao() float64        { return u.Maquina / float64(max(1, u.Nucleos)) }

// limiteQuieto is the load of other processes (cores) under which the
// machine counts as quiet.
const limiteQuieto = 0.25

// janela is the load of other processes (cores) over a short window.
type janela struct {
	ini, fim time.Time
	outros   float64
}

// vigia samples the load of other processes every periodo until stop is
// closed: a disturbed moment on a shared machine shows in the draws that
// overlapped it.
func vigia(p processosMedidos, periodo time.Duration, stop <-chan struct{}) <-chan []janela {
	out := make(chan []janela, 1)
	go func() {
		var js []janela
		t := time.NewTicker(periodo)
		defer t.Stop()
		for ant := amostrar(p); ; {
			select {
			case <-stop:
				out <- js
				return
			case <-t.C:
				a := amostrar(p)
				js = append(js, janela{ini: ant.quando, fim: a.quando, outros: calcularUso(ant, a, 1).Outros})
				ant = a
			}
		}
	}()
	return out
}

// quietas returns the latencies of the draws during which (from 100 ms
// before the publish to the result) other processes never used more than
// limite cores.
func quietas(ds []*demanda, js []janela, limite float64) []time.Duration {
	var out []time.Duration
	for _, d := range ds {
		if r := d.recv.Load(); r != 0 {
			ini, fim := d.pub.Add(-100*time.Millisecond), relogioBase.Add(time.Duration(r))
			if !slices.ContainsFunc(js, func(j janela) bool { return j.fim.After(ini) && j.ini.Before(fim) && j.outros > limite }) {
				out = append(out, fim.Sub(d.pub))
			}
		}
	}
	return out
}

// esperarSossego waits, up to limite, for a 2-second window in which other
// processes use under limiteQuieto cores, so a measurement on a shared
// machine starts when the machine is quiet; it warns when it gives up
// (oque: what is measured next). It returns the last window's load and
// whether it was quiet.
func esperarSossego(p processosMedidos, limite time.Duration, oque string) (float64, bool) {
	if limite <= 0 {
		return 0, true
	}
	for fim := time.Now().Add(limite); ; {
		a := amostrar(p)
		time.Sleep(2 * time.Second)
		outros := calcularUso(a, amostrar(p), 1).Outros
		if outros < limiteQuieto {
			return outros, true
		}
		if !time.Now().Before(fim) {
			logf("WARNING: other processes still use %.2f cores after waiting %s; measuring %s anyway", outros, limite, oque)
			return outros, false
		}
	}
}
