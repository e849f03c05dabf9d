package main

import (
	"os"
	"runtime"
	"time"

	"github.com/formigueiro/d6a/internal/pglocal"
	"github.com/formigueiro/d6a/internal/procstat"
)

// CPU accounting of a pass from /proc: the CPU time of d6a serve, of the
// PostgreSQL cluster (postmaster, its live children and the children it
// reaped) and of the separate nats-server, per draw; and how busy the whole
// machine was, so a run disturbed by other processes shows it.

type amostraCPU struct {
	quando            time.Time
	total, ocioso     uint64 // /proc/stat "cpu" line, ticks
	d6a, pg, nats, eu uint64 // ticks
}

type processosMedidos struct {
	d6a, nats int    // pids (0 = none)
	pgDir     string // data directory: postmaster.pid
}

func amostrar(p processosMedidos) amostraCPU {
	a := amostraCPU{quando: time.Now()}
	if m, ok := procstat.ReadMachine(); ok {
		a.total, a.ocioso = m.Total(), m.Idle+m.IOWait
	}
	if p.d6a > 0 {
		pr, _ := procstat.Read(p.d6a)
		a.d6a = pr.Own
	}
	if p.nats > 0 {
		pr, _ := procstat.Read(p.nats)
		a.nats = pr.Own
	}
	eu, _ := procstat.Read(os.Getpid())
	a.eu = eu.Own + eu.Reaped
	if p.pgDir == "" {
		return a
	}
	if pm, _ := pglocal.Postmaster(p.pgDir); pm > 0 {
		pr, _ := procstat.Read(pm)
		a.pg = pr.Own + pr.Reaped
		for _, filho := range procstat.Children(pm) {
			a.pg += filho.Own
		}
	}
	return a
}

// usoCPU is a pass's CPU: milliseconds per draw of each process, and the
// machine's load from everything else, in cores.
type usoCPU struct {
	D6AmsPorSorteio, PGmsPorSorteio, NATSmsPorSorteio float64
	BenchMsPorSorteio                                 float64 // this process: the publisher (and the bare loop)
	OcupacaoMaquina                                   float64 // busy fraction of all CPUs
	OutrosNucleos                                     float64 // CPUs used by other processes, average
}

func calcularUso(a, b amostraCPU, sorteios int) usoCPU {
	var u usoCPU
	if sorteios <= 0 || b.total <= a.total {
		return u
	}
	porSorteio := func(x, y uint64) float64 {
		return float64(y-x) * 1000 / procstat.HZ / float64(sorteios)
	}
	u.D6AmsPorSorteio = porSorteio(a.d6a, b.d6a)
	u.PGmsPorSorteio = porSorteio(a.pg, b.pg)
	u.NATSmsPorSorteio = porSorteio(a.nats, b.nats)
	u.BenchMsPorSorteio = porSorteio(a.eu, b.eu)
	dt := float64(b.total - a.total) // ticks over all CPUs
	ocupado := dt - float64(b.ocioso-a.ocioso)
	u.OcupacaoMaquina = ocupado / dt
	nossos := float64((b.d6a - a.d6a) + (b.pg - a.pg) + (b.nats - a.nats) + (b.eu - a.eu))
	ncpu := float64(runtime.NumCPU())
	u.OutrosNucleos = max(0, (ocupado-nossos)/dt*ncpu)
	return u
}

// janela is the machine's load from other processes over a short window.
type janela struct {
	ini, fim time.Time
	outros   float64 // cores used by other processes
}

// vigia samples the load of other processes every periodo until stop is
// closed: a disturbed moment on a shared machine shows in the draws that
// overlapped it.
func vigia(p processosMedidos, periodo time.Duration, stop <-chan struct{}) <-chan []janela {
	out := make(chan []janela, 1)
	go func() {
		var js []janela
		ant := amostrar(p)
		t := time.NewTicker(periodo)
		defer t.Stop()
		for {
			select {
			case <-stop:
				out <- js
				return
			case <-t.C:
				a := amostrar(p)
				js = append(js, janela{ini: ant.quando, fim: a.quando, outros: calcularUso(ant, a, 1).OutrosNucleos})
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
		r := d.recv.Load()
		if r == 0 {
			continue
		}
		fim := relogioBase.Add(time.Duration(r))
		ini := d.pub.Add(-100 * time.Millisecond)
		ok := true
		for _, j := range js {
			if j.fim.After(ini) && j.ini.Before(fim) && j.outros > limite {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, fim.Sub(d.pub))
		}
	}
	return out
}

// esperarSossego waits, up to limite, for a 2-second window in which other
// processes use under limiteQuieto cores, so a measurement on a shared
// machine starts when the machine is quiet. It returns the last window's
// load and whether it was quiet.
func esperarSossego(p processosMedidos, limite time.Duration) (float64, bool) {
	fim := time.Now().Add(limite)
	for {
		a := amostrar(p)
		time.Sleep(2 * time.Second)
		outros := calcularUso(a, amostrar(p), 1).OutrosNucleos
		if outros < limiteQuieto || !time.Now().Before(fim) {
			return outros, outros < limiteQuieto
		}
	}
}
