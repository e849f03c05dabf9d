package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
)

// `d6a-bench escala` simulates, over the bench's country, what a
// partitioned executor would gain (issue 24, docs/escala.md): one executor
// per unit of a partition level, each deciding alone the units of work
// whose every read and write stays below its unit, and a global lock for
// the rest. No database, no bus: the counts of free counsellors per unit
// decide each draw's winning step (spec 4.3), which is all a partition
// needs to know.
func executarEscala(args []string) error {
	fs := flag.NewFlagSet("d6a-bench escala", flag.ContinueOnError)
	k := fs.Int("k", 100_000, "counsellors")
	rajada := fs.Int("rajada", 2_000, "draws of the burst regime (make bench's burst)")
	m := fs.Int("m", 100_000, "draws of the steady regime")
	ocupados := fs.Float64("ocupados", 0.2, "steady regime: share of counsellors busy, once reached each draw follows the release of the longest busy one")
	seed := fs.Uint64("seed", 1, "seed of the country, the counsellors and the demands")
	if err := fs.Parse(args); err != nil {
		return err
	}
	p := gerarPais(*seed)
	// "dense, 0.1% at the root" is what breaks a partition: a counsellor
	// every chain reaches.
	nomes := []string{"sparse", "dense", "dense, 0.1% at the root"}
	dists := [][]parcela{formas["sparse"], formas["dense"], {{nivelPais, 0.001}, {nivelEstado, 0.01}, {nivelMunicipio, 0.089}, {nivelBairro, 0.90}}}
	fmt.Printf("Scale-out simulation: the bench's country (%s units), K = %s, a burst of %s draws and a steady run of %s, on random micro-areas, seed %d.\n\n",
		milhares(len(p.ids)), milhares(*k), milhares(*rajada), milhares(*m), *seed)
	fmt.Println("| shape | regime | partitioned by | partitions | units of work | crossing partitions | largest partition | speed-up bound |")
	fmt.Println("|---|---|---|--:|--:|--:|--:|--:|")
	for f, forma := range nomes {
		for _, estavel := range []bool{false, true} {
			for _, nivelParticao := range []int{nivelEstado, nivelMunicipio} {
				r := simular(p, dists[f], *k, se(estavel, *m, *rajada), *ocupados, estavel, nivelParticao, *seed)
				regime := se(estavel, fmt.Sprintf("steady (%.0f%% busy)", 100**ocupados), "burst (no release)")
				fmt.Printf("| %s | %s | %s | %s | %s | %.2f%% | %.2f%% | %.1f× |\n", forma, regime, nomeNivel[nivelParticao],
					milhares(len(p.porNivel[nivelParticao])), milhares(r.unidades), 100*float64(r.cruzam)/float64(r.unidades),
					100*float64(r.maior)/float64(r.unidades), float64(r.unidades)/float64(r.cruzam+r.maior))
			}
		}
	}
	fmt.Fprintln(os.Stderr, "speed-up bound = units / (crossing + largest partition's local units): unlimited executors, the crossing ones under one global lock")
	return nil
}

type resultadoEscala struct{ unidades, cruzam, maior int }

// simular runs m draws (and, steady, the releases before them) and
// classifies each unit of work: local to the partition (the unit at
// nivelParticao above it) when every unit it reads or writes lies at or
// below that level, crossing otherwise. A draw reads its chain up to the
// winning step; a sem_candidatos reads the whole chain; a release writes
// its counsellor's unit and sweeps that unit's descendants.
func simular(p *pais, dist []parcela, k, m int, ocupados float64, estavel bool, nivelParticao int, seed uint64) resultadoEscala {
	rng := rand.New(rand.NewPCG(seed, uint64(k)))
	livres := make([]int32, len(p.ids))
	acima := false // anyone registered above the partition level
	resto := k
	for i, d := range dist {
		n := se(i == len(dist)-1, resto, int(float64(k)*d.fracao))
		resto -= n
		ucs := p.porNivel[d.nivel]
		for range n {
			livres[ucs[rng.IntN(len(ucs))]]++
		}
		acima = acima || (d.nivel < nivelParticao && n > 0)
	}
	var (
		r       resultadoEscala
		local   = make([]int, len(p.ids)) // local units of work per partition
		ocupado []int32                   // units of the busy counsellors, oldest first
	)
	contar := func(u int32, cruza bool) {
		r.unidades++
		if cruza {
			r.cruzam++
			return
		}
		for int(p.nivel[u]) > nivelParticao {
			u = p.parent[u]
		}
		local[u]++
	}
	micro := p.porNivel[nivelMicroarea]
	for range m {
		if estavel && float64(len(ocupado)) >= ocupados*float64(k) {
			u := ocupado[0]
			ocupado = ocupado[1:]
			livres[u]++
			contar(u, int(p.nivel[u]) < nivelParticao)
		}
		u := micro[rng.IntN(len(micro))]
		passo := u
		for passo >= 0 && livres[passo] == 0 {
			passo = p.parent[passo]
		}
		if passo < 0 {
			contar(u, acima)
			continue
		}
		livres[passo]--
		ocupado = append(ocupado, passo)
		contar(u, int(p.nivel[passo]) < nivelParticao)
	}
	r.maior = slices.Max(local)
	return r
}
