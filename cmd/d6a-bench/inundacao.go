// The flood client of the flood mode (inundacao_sorteio.go): clients that
// hammer d6a serve's public routes as fast as each answer comes back
// (issue 50 item 4), counting every answer by route and status.

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/formigueiro/d6a/internal/latency"
	"github.com/formigueiro/d6a/internal/tiles"
)

// Kinds of route the flood asks for, in the order each client cycles
// through them; the checkpoint is read by the flood's own poller only.
const (
	rotaMetrics = iota
	rotaReadyz
	rotaEstatisticas
	rotaTile
	rotaCheckpoint
	nRotas
)

var nomesRotas = [nRotas]string{"/metrics", "/readyz", "/d6a/transparencia/estatisticas", "partial tiles", "/d6a/transparencia/checkpoint"}

const prefixoTransparencia = "/d6a/transparencia/"

// tilesParciais is the paths, under the transparency prefix, of the
// partial tiles of a tree of n leaves: at each level whose last tile is
// not full, and the last entry bundle when it is not. They are what a
// client following the log's edge asks for, and the ones d6a cannot cut
// from a full tile it holds.
func tilesParciais(n int64) []string {
	var out []string
	for l := 0; l <= tiles.MaxLevel; l++ {
		m := n >> (tiles.Height * l)
		if m == 0 {
			break
		}
		if w := m % tiles.Width; w != 0 {
			out = append(out, prefixoTransparencia+tiles.Path(tiles.Hash(l, m/tiles.Width, int(w))))
		}
	}
	if w := n % tiles.Width; w != 0 {
		out = append(out, prefixoTransparencia+tiles.Path(tiles.Bundle(n/tiles.Width, int(w))))
	}
	return out
}

// tamanhoCheckpoint is the tree size of a C2SP signed checkpoint (its
// second line).
func tamanhoCheckpoint(nota string) (int64, bool) {
	s := bufio.NewScanner(strings.NewReader(nota))
	if !s.Scan() || !s.Scan() {
		return 0, false
	}
	n, err := strconv.ParseInt(s.Text(), 10, 64)
	return n, err == nil && n >= 0
}

// inundacao is one flood's outcome: answers by route and status (0: no
// answer, a transport error or the timeout), and each route's latencies.
type inundacao struct {
	Clientes int
	Duracao  time.Duration
	Status   [nRotas]map[int]int
	Lat      [nRotas]latency.Summary
}

// Total is the answers of route r (all routes when r < 0) and of those the
// ones with status (any when status < 0).
func (x inundacao) Total(r, status int) int {
	n := 0
	for i, m := range x.Status {
		if r >= 0 && i != r {
			continue
		}
		for s, k := range m {
			if status < 0 || s == status {
				n += k
			}
		}
	}
	return n
}

// Taxa is Total's requests per second over the flood.
func (x inundacao) Taxa(r, status int) float64 {
	return razao(float64(x.Total(r, status)), x.Duracao.Seconds())
}

// inundar starts clientes clients on the server at base (host:port) and a
// poller of its checkpoint (every 500 ms, for the partial tiles' paths);
// the returned function stops them and sums up.
func inundar(base string, clientes int) (parar func() inundacao) {
	ctx, cancel := context.WithCancel(context.Background())
	cli := &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{MaxIdleConns: clientes + 1, MaxIdleConnsPerHost: clientes + 1,
			IdleConnTimeout: time.Minute},
	}
	var caminhos atomic.Pointer[[]string] // the edge's partial tiles
	caminhos.Store(&[]string{})
	type local struct {
		status [nRotas]map[int]int
		lat    [nRotas][]time.Duration
	}
	locais := make([]*local, clientes+1)
	pedir := func(l *local, r int, url string) []byte {
		inicio := time.Now()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+base+url, nil)
		if err != nil {
			return nil
		}
		if r != rotaCheckpoint {
			// Asked by hand, gzip is not undone by the transport: a flood
			// takes the server's cheapest answer and never reads it, so
			// its own CPU stays out of the draws' way.
			req.Header.Set("Accept-Encoding", "gzip")
		}
		resp, err := cli.Do(req)
		if ctx.Err() != nil { // stopped mid-request: not an answer
			if err == nil {
				resp.Body.Close()
			}
			return nil
		}
		status, corpo := 0, []byte(nil)
		if err == nil {
			status = resp.StatusCode
			if r == rotaCheckpoint && status == http.StatusOK {
				corpo, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<16))
			} else {
				_, _ = io.Copy(io.Discard, resp.Body)
			}
			resp.Body.Close()
		}
		if l.status[r] == nil {
			l.status[r] = map[int]int{}
		}
		l.status[r][status]++
		l.lat[r] = append(l.lat[r], time.Since(inicio))
		return corpo
	}
	var wg sync.WaitGroup
	inicio := time.Now()
	wg.Add(clientes + 1)
	go func() {
		defer wg.Done()
		l := &local{}
		locais[clientes] = l
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for ; ctx.Err() == nil; <-t.C {
			if n, ok := tamanhoCheckpoint(string(pedir(l, rotaCheckpoint, prefixoTransparencia+"checkpoint"))); ok {
				ps := tilesParciais(n)
				caminhos.Store(&ps)
			}
		}
	}()
	for i := range clientes {
		go func() {
			defer wg.Done()
			l := &local{}
			locais[i] = l
			// Each client starts at its own place in the cycle, so every
			// route has a quarter of the clients at any time.
			for j := i; ctx.Err() == nil; j++ {
				r := j % rotaCheckpoint
				url := nomesRotas[r]
				if r == rotaTile {
					ps := *caminhos.Load()
					if len(ps) == 0 {
						continue
					}
					url = ps[(j/rotaCheckpoint)%len(ps)]
				}
				pedir(l, r, url)
			}
		}()
	}
	return func() inundacao {
		cancel()
		wg.Wait()
		x := inundacao{Clientes: clientes, Duracao: time.Since(inicio)}
		for r := range nRotas {
			x.Status[r] = map[int]int{}
			var lat []time.Duration
			for _, l := range locais {
				for s, k := range l.status[r] {
					x.Status[r][s] += k
				}
				lat = append(lat, l.lat[r]...)
			}
			x.Lat[r] = latency.Summarize(lat)
		}
		cli.CloseIdleConnections()
		return x
	}
}

// statusVistos is every status the flood got, in order.
func (x inundacao) statusVistos() []int {
	var ss []int
	for _, m := range x.Status {
		for s := range m {
			if !slices.Contains(ss, s) {
				ss = append(ss, s)
			}
		}
	}
	slices.Sort(ss)
	return ss
}

// The flood runs in a process of its own (this binary re-executed), so it
// can run under nice(1): clients on other machines take none of the CPU
// the draws need, and a flood that shares the draws' 2 cores should take
// only what they leave idle.
const (
	papelInundacao     = "flood"
	envInundacaoBase   = "D6A_BENCH_FLOOD_BASE"
	envInundacaoClient = "D6A_BENCH_FLOOD_CLIENTS"
)

// servirInundacao is the flood process: it floods until SIGTERM, then
// writes its inundacao as JSON on stdout.
func servirInundacao() error {
	n, err := strconv.Atoi(os.Getenv(envInundacaoClient))
	if err != nil {
		return fmt.Errorf("%s: %w", envInundacaoClient, err)
	}
	sinal := make(chan os.Signal, 1)
	signal.Notify(sinal, syscall.SIGTERM, os.Interrupt)
	parar := inundar(os.Getenv(envInundacaoBase), n)
	<-sinal
	return json.NewEncoder(os.Stdout).Encode(parar())
}

// processoInundacao starts the flood process at nice (0: not niced) on
// the server at base; parar stops it and returns its outcome and the cores
// it used.
func processoInundacao(base string, clientes, nice int) (parar func() (inundacao, float64, error), err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	if nice != 0 {
		cmd = exec.Command("nice", "-n", strconv.Itoa(nice), exe)
	}
	cmd.Env = append(os.Environ(), envPapel+"="+papelInundacao, envInundacaoBase+"="+base, envInundacaoClient+"="+strconv.Itoa(clientes))
	var saida bytes.Buffer
	cmd.Stdout, cmd.Stderr = &saida, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	inicio := time.Now()
	return func() (x inundacao, cores float64, err error) {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			return x, 0, fmt.Errorf("flood process: %w", err)
		}
		if err := json.Unmarshal(saida.Bytes(), &x); err != nil {
			return x, 0, fmt.Errorf("flood process's answer: %w", err)
		}
		cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		return x, cpu.Seconds() / time.Since(inicio).Seconds(), nil
	}, nil
}
