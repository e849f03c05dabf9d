// Package historico makes synthetic histories of the public log: valid
// records built with internal/sorteio itself, deterministic in their seed,
// for tests and benchmarks (docs/bench.md). No production package imports
// it; Anexar writes through internal/transparencia, as the draws do.
package historico

import (
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/beacon"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// RegistroSintetico builds the i-th of a family of valid records with
// internal/sorteio itself: what the tests, the page's browser test and the
// 100,000-draw measurement append (docs/bench.md). Deterministic in
// (semente, i); up to 8 counsellors in a unit chain of two.
func RegistroSintetico(semente string, i int) registro.Registro {
	id := func(tipo string, k int) uuid.UUID {
		return uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "%s/%s/%d", semente, tipo, k))
	}
	uc, pai := id("uc", i%97), id("uc-pai", i%13)
	n := 1 + i%8
	eleg := make([]string, n)
	for k := range eleg {
		eleg[k] = id("conselheiro", (i*7+k)%5000).String()
	}
	base := id("base", i).String()
	seq := int64(i + 1)
	t := fmt.Sprintf("2026-11-30T%02d:%02d:%02d.%03dZ", (i/3600000)%24, (i/60000)%60, (i/1000)%60, i%1000)
	res, err := sorteio.Sortear(base, t, eleg)
	if err != nil {
		panic(err)
	}
	var excl *uuid.UUID
	if i%5 == 4 {
		e := id("recusou", i)
		excl = &e
	}
	r, err := registro.NovoRegistro(id("evento", i), id("demanda", i/2), uc, base, &seq, t, res, uc, []uuid.UUID{uc, pai}, excl)
	if err != nil {
		panic(err)
	}
	return r
}

// HistoriaSintetica is a consistent log of n decisions for the replay's
// benchmark: counsellors registered five per unit on 1,000 units under 10
// parents, then n draws, each among the five of its unit (all free),
// preceded by the hierarchy records of its chain's first use and followed
// by the winner's cycle end; each registration and cycle end by its sweep. Replayed, it shows no divergence.
func HistoriaSintetica(semente string, n int) []registro.Registravel {
	var out []registro.Registravel
	_ = CadaHistoriaSintetica(semente, n, func(r registro.Registravel) error {
		out = append(out, r)
		return nil
	})
	return out
}

// CadaHistoriaSintetica gives the records of HistoriaSintetica(semente, n)
// to fn one by one, in log order, holding none: the national-scale bench
// (d6a-bench verificar) writes millions. It stops at fn's first error.
func CadaHistoriaSintetica(semente string, n int, fn func(registro.Registravel) error) error {
	return CadaHistoria(semente, n, Opcoes{}, fn)
}

// Opcoes vary CadaHistoria's history.
type Opcoes struct {
	// Unidades is how many units hold five counsellors each (0: 1,000).
	Unidades int
	// Beacon, when set, puts its d6a.regras_sorteio record first and makes
	// every draw mix a round of its own (CONTRACT §4a), as at national
	// scale with a few draws a minute.
	Beacon *Beacon
}

// Beacon is the chain a history's draws use: its rule record, which names
// the chain and the margin (no witnesses: C is T), and its signer.
type Beacon struct {
	Regras registro.RegrasSorteio
	// Rodada gives round n, signed; it is asked for rounds in rising
	// order, one per draw.
	Rodada func(n uint64) (beacon.Rodada, error)
}

// tempo is draw i's T under the beacon: one period apart from
// genesis on, so each draw owes a round no other draw does.
func (b *Beacon) tempo(i int) (string, uint64, error) {
	c, err := b.Regras.CadeiaBeacon()
	if err != nil {
		return "", 0, err
	}
	t := time.Unix(c.Genesis, 0).Add(10*time.Second + time.Duration(i)*c.Periodo + 123*time.Millisecond).UTC()
	ts := t.Format("2006-01-02T15:04:05.000Z")
	return ts, registro.RodadaDevida(c, t, b.Regras.Margem()), nil
}

// CadaHistoria is CadaHistoriaSintetica varied by o.
func CadaHistoria(semente string, n int, o Opcoes, fn func(registro.Registravel) error) error {
	id := func(tipo string, k int) uuid.UUID {
		return uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "%s/%s/%d", semente, tipo, k))
	}
	const porUnidade = 5
	unidades := cmp.Or(o.Unidades, 1000)
	if o.Beacon != nil {
		if err := fn(o.Beacon.Regras); err != nil {
			return err
		}
	}
	lista := make([][]string, unidades)
	seq := int64(0)
	for u := range unidades {
		for k := range porUnidade {
			c := id("conselheiro", u*porUnidade+k)
			seq++
			s := seq
			uc := id("uc", u)
			cadastro := id("cadastro", u*porUnidade+k)
			if err := fn(registro.NovoCadastro(cadastro, &s, c, uc, 3, "disponivel", true)); err != nil {
				return err
			}
			if err := fn(registro.NovaVarredura(registro.IDVarredura(cadastro), &s, &uc, nil, registro.TipoCadastro)); err != nil {
				return err
			}
			lista[u] = append(lista[u], c.String())
		}
		slices.Sort(lista[u])
	}
	ligados := map[uuid.UUID]bool{}
	for i := range n {
		u := i % unidades
		uc, pai := id("uc", u), id("uc-pai", u%10)
		base := id("base", i).String()
		seq++
		s := seq
		// The links a chain climbs are records before its first decision.
		if !ligados[uc] {
			if err := fn(registro.NovaHierarquia(id("hierarquia", u), &s, uc, &pai, 1)); err != nil {
				return err
			}
			ligados[uc] = true
		}
		if !ligados[pai] {
			if err := fn(registro.NovaHierarquia(id("hierarquia-pai", u%10), &s, pai, nil, 0)); err != nil {
				return err
			}
			ligados[pai] = true
		}
		t := fmt.Sprintf("2026-11-30T%02d:%02d:%02d.%03dZ", (i/3600000)%24, (i/60000)%60, (i/1000)%60, i%1000)
		var rod beacon.Rodada
		if o.Beacon != nil {
			ts, n, err := o.Beacon.tempo(i)
			if err != nil {
				return err
			}
			if rod, err = o.Beacon.Rodada(n); err != nil {
				return err
			}
			t = ts
		}
		res, err := sorteio.SortearComRodada(base, t, hex.EncodeToString(rod.Randomness), lista[u])
		if err != nil {
			panic(err)
		}
		demanda := id("demanda", i)
		r, err := registro.NovoRegistro(id("evento", i), demanda, uc, base, &s, t, res, uc, []uuid.UUID{uc, pai}, nil)
		if err != nil {
			panic(err)
		}
		if o.Beacon != nil {
			n := int64(rod.Numero)
			r.Rodada, r.AssinaturaRodada, r.Compromisso = &n, hex.EncodeToString(rod.Assinatura), t
		}
		if err := fn(r); err != nil {
			return err
		}
		seq++
		s2 := seq
		if err := fn(registro.NovoCicloConcluido(id("ciclo", i), &s2, r.ConselheiroID, demanda, "disponivel")); err != nil {
			return err
		}
		if err := fn(registro.NovaVarredura(registro.IDVarredura(id("ciclo", i)), &s2, &uc, nil, registro.TipoCicloConcluido)); err != nil {
			return err
		}
	}
	return nil
}

// Registros is the records de to ate-1 of the family semente
// (RegistroSintetico), draws only.
func Registros(semente string, de, ate int) []registro.Registro {
	out := make([]registro.Registro, 0, ate-de)
	for i := de; i < ate; i++ {
		out = append(out, RegistroSintetico(semente, i))
	}
	return out
}

// Anexar appends regs to st's log in one transaction, as a draw's
// transaction does, and fails t if it cannot.
func Anexar(t testing.TB, st *store.Store, regs []registro.Registro) {
	t.Helper()
	ctx := context.Background()
	if err := pgx.BeginTxFunc(ctx, st.Pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		return transparencia.Anexar(ctx, tx, regs)
	}); err != nil {
		t.Fatal(err)
	}
}
