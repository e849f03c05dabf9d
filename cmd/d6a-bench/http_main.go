// The HTTP mode (d6a-bench http) measures GET /d6a/conselheiros/me/situacao
// against a bare fiber handler in the same run, on a server process (this
// binary re-executed, http_servidor.go); the report ("HTTP: situacao route"
// of docs/bench.md) says how each run is set up.

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"
)

type opcoesHTTP struct {
	d, aquecimento, silencio       time.Duration
	c, taxa, conexoesAbrt          int
	conselheiros, ativos, cidadaos int // cidadaos: the working-set run's (0: none)
	perfil, doc, comando, alg      string
	diag, escrever, rapido         bool
}

func lerFlagsHTTP(args []string) (opcoesHTTP, error) {
	fs := flag.NewFlagSet("d6a-bench http", flag.ContinueOnError)
	var o opcoesHTTP
	q := rapido(args)
	fs.DurationVar(&o.d, "d", se(q, time.Second, 10*time.Second), "measured duration of each run")
	fs.DurationVar(&o.aquecimento, "warmup", se(q, 500*time.Millisecond, 2*time.Second), "warm-up before each run, not measured")
	fs.IntVar(&o.c, "c", 32, "concurrent keep-alive connections of the closed-loop runs")
	fs.IntVar(&o.taxa, "rate", 1000, "requests/s of the open-loop (paced) run on the situacao route")
	fs.IntVar(&o.conexoesAbrt, "open-c", 128, "connections (and senders) available to the open-loop run")
	fs.IntVar(&o.conselheiros, "conselheiros", 300, "registered counsellors, one token each")
	fs.IntVar(&o.ativos, "ativos", 100, "how many of them have an active assignment")
	fs.IntVar(&o.cidadaos, "cidadaos", se(q, 1000, 100000), "counsellors of the working-set run, each with an RS256 token through a JWKS the bench serves, asked at random (same share with an assignment; 0: no such run)")
	fs.DurationVar(&o.silencio, "wait-quiet", se(q, 0, time.Minute), "before each run, wait up to this long for other processes to use under 0.25 cores (0: don't wait)")
	fs.StringVar(&o.perfil, "cpuprofile", "", "write the server process's CPU profile during the closed-loop situacao run to this file (go tool pprof)")
	fs.BoolVar(&o.diag, "diag", true, "also measure the d6a app without the database and the database transaction alone")
	fs.BoolVar(&o.rapido, "quick", false, "1 s runs with a 0.5 s warm-up, a working set of 1,000 citizens, no -wait-quiet (unless given); docs are not written unless -doc is given")
	// RS256 is the cost of an identity provider's tokens (a 2048-bit key
	// through D6A_JWT_PUBLIC_KEY_FILE); the verified-token cache keeps it cheap.
	fs.StringVar(&o.alg, "alg", "HS256", "session token algorithm: HS256 or RS256")
	fs.StringVar(&o.doc, "doc", "docs/bench.md", "markdown file whose \"## HTTP: situacao route\" section is rewritten (empty: none)")
	dado, err := analisarFlags(fs, args)
	if err != nil {
		return o, err
	}
	o.escrever = o.doc != "" && (!o.rapido || dado["doc"])
	for _, v := range []struct {
		mal bool
		msg string
	}{{o.d <= 0, "-d must be positive"}, {o.aquecimento < 0, "-warmup must not be negative"}, {o.silencio < 0, "-wait-quiet must not be negative"},
		{o.c < 1, "-c must be at least 1"}, {o.taxa < 1, "-rate must be at least 1"}, {o.conexoesAbrt < 1, "-open-c must be at least 1"},
		{o.conselheiros < 1, "-conselheiros must be at least 1"}, {o.ativos < 0 || o.ativos > o.conselheiros, "-ativos must be between 0 and -conselheiros"},
		{o.cidadaos < 0, "-cidadaos must not be negative"}, {o.alg != "HS256" && o.alg != "RS256", "-alg must be HS256 or RS256"}} {
		if v.mal {
			return o, errors.New(v.msg)
		}
	}
	o.comando = strings.TrimSpace("go run ./cmd/d6a-bench http " + strings.Join(args, " "))
	return o, nil
}

// fechadoHTTP describes a closed-loop run for the log.
func (o opcoesHTTP) fechadoHTTP(oque string) string {
	return fmt.Sprintf("closed loop, %s: %d connections, %s + %s warm-up", oque, o.c, o.d, o.aquecimento)
}

func executarHTTP(ctx context.Context, o opcoesHTTP) error {
	inicio := time.Now()
	a, err := prepararAmbiente(ctx, o)
	if a != nil {
		defer a.encerrar()
	}
	if err != nil {
		return err
	}
	r := &relatorioHTTP{o: o, a: a, data: inicio.UTC()}

	// What the machine does without us: other processes share the cores.
	esperarSossego(a.medidos(), o.silencio, "the runs")
	s := a.amostrar()
	select {
	case <-time.After(2 * time.Second):
	case <-ctx.Done():
		return ctx.Err()
	}
	r.fundo = calcularUso(s, a.amostrar(), 0)
	logf("before the runs, other processes use %.2f of %d cores", r.fundo.Outros, r.fundo.Nucleos)

	correr := func(x *resultado, passo, nome, addr string, tokens []string, w, taxa, want int) error {
		a.passo(passo)
		var err error
		*x, err = a.rodarHTTP(ctx, nome, addr, tokens, w, taxa, want, false)
		return err
	}
	if err := correr(&r.bare, o.fechadoHTTP("bare fiber handler"), "bare fiber handler", a.enderecoBare, a.tokens, o.c, 0, 200); err != nil {
		return err
	}
	perfil := a.perfilar(ctx)
	r.cacheAntes = a.metricasServidor()
	if err := correr(&r.situacao, o.fechadoHTTP("situacao route"), "situacao route", a.enderecoD6A, a.tokens, o.c, 0, 200); err != nil {
		return err
	}
	r.cacheDepois = a.metricasServidor()
	if err := <-perfil; err != nil {
		return fmt.Errorf("-cpuprofile: %w", err)
	}
	logf("    cache over the whole run, warm-up included: %.0f hits, %.0f misses", r.cacheDepois.hit-r.cacheAntes.hit, r.cacheDepois.miss-r.cacheAntes.miss)
	if err := correr(&r.aberto, fmt.Sprintf("open loop, situacao route: %d requests/s for %s + %s warm-up", o.taxa, o.d, o.aquecimento),
		"situacao route", a.enderecoD6A, a.tokens, o.conexoesAbrt, o.taxa, 200); err != nil {
		return err
	}
	if o.diag {
		if err := correr(&r.semBanco, "diagnostic: situacao route with a wrong-key token (401, no database)",
			"situacao route, 401 (no database)", a.enderecoD6A, a.tokensInvalidos, o.c, 0, 401); err != nil {
			return err
		}
		for _, f := range formasConsulta {
			a.passo("diagnostic: database only, " + f.nome)
			res, err := a.fechadoBanco(ctx, f)
			if err != nil {
				return err
			}
			r.banco = append(r.banco, res)
		}
		if err := correr(&r.semCache, "diagnostic: "+o.fechadoHTTP("situacao route with the cache off"), nomeSemCache, a.enderecoSemCache, a.tokens, o.c, 0, 200); err != nil {
			return err
		}
	}
	if o.cidadaos > 0 {
		// The working-set run replaces the server process: read its log first.
		r.avisos, r.pedidos = lerLog(a.logServidor)
		if r.conjunto, err = a.rodarConjunto(ctx); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r.dur = time.Since(inicio)
	avisos, pedidos := lerLog(a.logServidor)
	r.avisos, r.pedidos = append(r.avisos, avisos...), r.pedidos+pedidos

	md := r.markdown()
	return publicar(a.raiz, md, o.escrever, map[string]func(string) error{o.doc: func(p string) error { return reescrever(p, "http", tituloHTTP, md) }})
}
