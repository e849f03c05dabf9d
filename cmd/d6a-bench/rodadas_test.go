package main

import (
	"slices"
	"testing"
	"time"
)

// Only the time in which every result still to come owed a round not yet
// out is left out of the rate; a round's publish to its first result, and
// results without a round, count as work.
func TestEsperaDeRodadas(t *testing.T) {
	base := relogioBase.Round(0)
	em := map[uint64]time.Time{1: base.Add(-100 * time.Millisecond), 2: base.Add(500 * time.Millisecond)}
	publicadaEm := func(r uint64) time.Time { return em[r] }
	resultado := func(ms int, rodada uint64) *demanda {
		d := &demanda{}
		d.recv.Store(int64(time.Duration(ms) * time.Millisecond))
		d.rodada.Store(rodada)
		return d
	}
	ds := []*demanda{resultado(0, 1), resultado(10, 1), resultado(530, 2), resultado(520, 2), {}}
	// 10 ms → 500 ms: results 520 and 530 owe round 2, out at 500 ms.
	if got, want := esperaDeRodadas(ds, publicadaEm), 490*time.Millisecond; got != want {
		t.Fatalf("wait %v, want %v", got, want)
	}
	// A sorteio.sem_candidatos carries no round: it takes the one of the
	// result before it, so it does not hide the wait for round 2.
	comSemCandidatos := append(ds, resultado(525, 0))
	if got, want := esperaDeRodadas(comSemCandidatos, publicadaEm), 490*time.Millisecond; got != want {
		t.Fatalf("with a result without a round: wait %v, want %v", got, want)
	}
	if got := esperaDeRodadas(ds, nil); got != 0 {
		t.Fatalf("without a chain: wait %v, want 0", got)
	}
	semRodada := []*demanda{resultado(0, 0), resultado(400, 0)}
	if got := esperaDeRodadas(semRodada, publicadaEm); got != 0 {
		t.Fatalf("results without a round: wait %v, want 0", got)
	}
	p := passe{Recebidos: 4, Espera: time.Second, Duracao: 2530 * time.Millisecond, EsperaRodadas: 490 * time.Millisecond}
	if got, want := p.Vazao(), 3/1.04; got < want-1e-9 || got > want+1e-9 {
		t.Fatalf("rate %v/s, want %v/s (3 results after the first in 1.53 s less 0.49 s of rounds' wait)", got, want)
	}
}

// A result's latency after its round is counted from the round's publish,
// or from its demand's when the round was out before it.
func TestPosRodada(t *testing.T) {
	base := relogioBase.Round(0)
	publicadaEm := func(uint64) time.Time { return base.Add(500 * time.Millisecond) }
	resultado := func(pub, recv int) *demanda {
		d := &demanda{pub: base.Add(time.Duration(pub) * time.Millisecond)}
		d.recv.Store(int64(time.Duration(recv) * time.Millisecond))
		d.rodada.Store(2)
		return d
	}
	semRodada := resultado(0, 700)
	semRodada.rodada.Store(0)
	got := posRodada([]*demanda{resultado(0, 520), resultado(600, 650), semRodada, {}}, publicadaEm)
	if want := []time.Duration{20 * time.Millisecond, 50 * time.Millisecond}; !slices.Equal(got, want) {
		t.Fatalf("after the round: %v, want %v", got, want)
	}
	if posRodada([]*demanda{resultado(0, 520)}, nil) != nil {
		t.Fatal("without a chain: want none")
	}
}
