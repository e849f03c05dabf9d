package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestRecuperacao is `d6a-bench catchup` small: both arms drain every
// trigger that waited on the durable, the beacon arm's draws carry
// rounds and the other's none, and the report names both arms and their
// ratio.
func TestRecuperacao(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL, nats-server and the colony")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	o, err := lerFlagsRecuperacao([]string{"-n", "300", "-k", "2000", "-outage", "2s", "-doc", ""})
	if err != nil {
		t.Fatal(err)
	}
	md, _, bs, err := medirRecuperacao(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 2 || !bs[0].Beacon || bs[1].Beacon {
		t.Fatalf("arms %+v, want the beacon arm then the other", bs)
	}
	for _, x := range bs {
		if x.Pendentes < 300 || x.Recebidos != 300 || x.Sorteados+x.SemCandidatos != 300 {
			t.Errorf("%s: %d pending at start, %d results (%d drawn, %d without candidates), want 300 of each",
				nomeBraco(x.Beacon), x.Pendentes, x.Recebidos, x.Sorteados, x.SemCandidatos)
		}
		if x.Vazao() <= 0 || x.Primeiro <= 0 || x.Ultimo < x.Primeiro {
			t.Errorf("%s: rate %.1f/s, first result %s, last %s", nomeBraco(x.Beacon), x.Vazao(), x.Primeiro, x.Ultimo)
		}
	}
	if bs[0].Rodadas < 1 || bs[1].Rodadas != 0 {
		t.Errorf("distinct rounds: %d with the beacon rule, %d without; want ≥ 1 and 0", bs[0].Rodadas, bs[1].Rodadas)
	}
	for _, want := range []string{"beacon rule on", "beacon rule off", "pair by pair: **"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
