package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// CPU accounting of a pass from /proc: the CPU time of d6a serve, of the
// PostgreSQL cluster (postmaster, its live children and the children it
// reaped) and of the separate nats-server, per draw; and how busy the whole
// machine was, so a run disturbed by other processes shows it.

// tickHz is USER_HZ, the unit of /proc/<pid>/stat times (100 on Linux).
const tickHz = 100

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
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		linha, _, _ := strings.Cut(string(b), "\n")
		campos := strings.Fields(linha)
		for i, c := range campos[1:] {
			v, _ := strconv.ParseUint(c, 10, 64)
			if i >= 8 { // guest time is already in user
				break
			}
			a.total += v
			if i == 3 || i == 4 { // idle, iowait
				a.ocioso += v
			}
		}
	}
	if p.d6a > 0 {
		a.d6a, _ = cpuProcesso(p.d6a, false)
	}
	if p.nats > 0 {
		a.nats, _ = cpuProcesso(p.nats, false)
	}
	a.eu, _ = cpuProcesso(os.Getpid(), true)
	if pm := postmaster(p.pgDir); pm > 0 {
		a.pg, _ = cpuProcesso(pm, true)
		for _, filho := range filhos(pm) {
			t, _ := cpuProcesso(filho, false)
			a.pg += t
		}
	}
	return a
}

// cpuProcesso is utime+stime (plus cutime+cstime of reaped children when
// comFilhos) of pid, in ticks.
func cpuProcesso(pid int, comFilhos bool) (uint64, int) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0
	}
	s := string(b)
	// Fields after the command name, which is in parentheses.
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime is field 14 → f[11].
	if len(f) < 15 {
		return 0, 0
	}
	ppid, _ := strconv.Atoi(f[1])
	var t uint64
	n := 2
	if comFilhos {
		n = 4
	}
	for k := range n {
		v, _ := strconv.ParseUint(f[11+k], 10, 64)
		t += v
	}
	return t, ppid
}

func postmaster(dir string) int {
	if dir == "" {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	l, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(l))
	return pid
}

func filhos(pai int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ppid := cpuProcesso(pid, false); ppid == pai {
			out = append(out, pid)
		}
	}
	return out
}

// usoCPU is a pass's CPU: milliseconds per draw of each process, and the
// machine's load from everything else, in cores.
type usoCPU struct {
	D6AmsPorSorteio, PGmsPorSorteio, NATSmsPorSorteio float64
	OcupacaoMaquina                                   float64 // busy fraction of all CPUs
	OutrosNucleos                                     float64 // CPUs used by other processes, average
}

func calcularUso(a, b amostraCPU, sorteios int) usoCPU {
	var u usoCPU
	if sorteios <= 0 || b.total <= a.total {
		return u
	}
	porSorteio := func(x, y uint64) float64 {
		return float64(y-x) * 1000 / tickHz / float64(sorteios)
	}
	u.D6AmsPorSorteio = porSorteio(a.d6a, b.d6a)
	u.PGmsPorSorteio = porSorteio(a.pg, b.pg)
	u.NATSmsPorSorteio = porSorteio(a.nats, b.nats)
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
