package main

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkRegistrosHierarquia measures what CONTRACT §7 "Hierarchy" costs
// the log over the bench's 255,598-unit country: the hierarquia.uc records
// per 1,000 decisions, in windows of the first decisions after a start
// (demands on uniformly random micro-areas, as the bench's load draws
// them). With a hierarchy that does not change, a link is recorded the
// first time a decision climbs it, so the count is the number of units
// first reached in the window; the steady state is zero.
//
//	go test -run '^$' -bench RegistrosHierarquia -benchtime 1x ./cmd/d6a-bench
func BenchmarkRegistrosHierarquia(b *testing.B) {
	p := gerarPais(1)
	micro := p.porNivel[nivelMicroarea]
	janelas := []int{1_000, 36_000, 100_000, 1_000_000, 5_000_000}
	for range b.N {
		rng := rand.New(rand.NewPCG(37, 2026))
		registrado := make([]bool, len(p.ids))
		feitas, registros := 0, 0
		for _, fim := range janelas {
			antes, inicio := registros, feitas
			for ; feitas < fim; feitas++ {
				for u := micro[rng.IntN(len(micro))]; u >= 0 && !registrado[u]; u = p.parent[u] {
					registrado[u] = true
					registros++
				}
			}
			b.ReportMetric(1000*float64(registros-antes)/float64(feitas-inicio), fmt.Sprintf("hier/1000dec_%d-%d", inicio, fim))
		}
		b.ReportMetric(float64(registros), "hier_total")
	}
}
