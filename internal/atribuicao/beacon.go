package atribuicao

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/formigueiro/d6a/internal/beacon"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
)

// FonteRodadas gives verified beacon rounds (*beacon.Cliente): never a
// round that failed verification, and Esperar waits, retrying, until the
// round is out or ctx ends.
type FonteRodadas interface {
	Esperar(ctx context.Context, r uint64) (beacon.Rodada, error)
	Rodadas(ctx context.Context, rs []uint64) (map[uint64]beacon.Rodada, error)
}

// Beacon is the draw's public randomness (CONTRACT §4a): the chain, the
// margin, where rounds come from, and the rule record the log states them
// in (appended at boot when the log's latest differs).
type Beacon struct {
	Fonte  FonteRodadas
	Cadeia beacon.Cadeia
	Margem time.Duration
	// Privado: the service's own beacon (named so in the rule record).
	Privado bool
	// Testemunhas and Quorum are the witnesses' verifier keys and K the
	// rule record names.
	Testemunhas []string
	Quorum      int
	// esperando is the publish time (unix ns) of the round a decision
	// waits for; 0 while none does.
	esperando atomic.Int64
}

// RodadaSorteio is the round a decision mixes in, as its record and audit
// row carry it.
type RodadaSorteio struct {
	Numero      int64
	Assinatura  string // hex
	Randomness  string // hex
	Compromisso string // C, ISO ms
}

// Rodada is the round a commitment time C owes: the first one published
// strictly later than C + margin (C = T without witnesses, else
// comprometer's).
func (b *Beacon) Rodada(t time.Time) uint64 {
	return registro.RodadaDevida(b.Cadeia, t, b.Margem)
}

// Atraso is how late the round decisions wait for is, past its publish
// time (d6a_beacon_atraso_segundos): zero while rounds come on time.
func (b *Beacon) Atraso() time.Duration {
	e := b.esperando.Load()
	if e == 0 {
		return 0
	}
	return max(0, time.Since(time.Unix(0, e)))
}

// Regras is the rule record this configuration states, the trigger rule
// having begun at gatilhoDesde.
func (b *Beacon) Regras(gatilhoDesde int64) registro.RegrasSorteio {
	return registro.NovasRegrasSorteio(gatilhoDesde, b.Privado, b.Cadeia, b.Margem, b.Testemunhas, b.Quorum)
}

// compromisso is a trigger's commitment time: T at the millisecond, as
// its record writes it, so the verifier recomputes the same round.
func compromisso(armazenado time.Time) (string, time.Time) {
	t := sorteio.FormatTimestamp(armazenado)
	c, _ := sorteio.ParseTimestamp(t)
	return t, c
}

func novaRodadaSorteio(r beacon.Rodada, c string) *RodadaSorteio {
	return &RodadaSorteio{Numero: int64(r.Numero), Assinatura: hex.EncodeToString(r.Assinatura), Randomness: hex.EncodeToString(r.Randomness), Compromisso: c}
}

// esperar waits for round r, showing the wait in Atraso.
func (b *Beacon) esperar(ctx context.Context, log *slog.Logger, r uint64) (beacon.Rodada, error) {
	b.esperando.Store(b.Cadeia.PublicadaEm(r).UnixNano())
	defer b.esperando.Store(0)
	aviso := time.AfterFunc(b.Cadeia.Periodo*5+b.Margem, func() {
		log.Warn("beacon: rodada atrasada; as decisões esperam por ela", "rodada", r, "publicada_em", b.Cadeia.PublicadaEm(r))
	})
	defer aviso.Stop()
	rod, err := b.Fonte.Esperar(ctx, r)
	if err != nil {
		return beacon.Rodada{}, fmt.Errorf("beacon: rodada %d: %w", r, err)
	}
	return rod, nil
}

// prontas gives the units at the head of js their rounds: the first waits
// for its own; every one behind it whose round is out by then joins it, so
// a round's whole batch is decided at once and stream order holds. It
// returns how many units got theirs (at least one, unless ctx ended).
func (b *Beacon) prontas(ctx context.Context, log *slog.Logger, evs []evento.Evento, js []job) (int, error) {
	type pedido struct {
		k int
		r uint64
		c string
	}
	var pedidos []pedido
	// limite: a unit whose round is out by then joins. The head waits for
	// its own round, so every unit of that round (or an earlier one) joins
	// it: a round's batch is one transaction, not the head alone and then
	// the rest.
	limite := time.Now()
	for k, ev := range evs {
		if ev.Armazenado.IsZero() || !decide(ev.Tipo) {
			// No round waited for ahead: it goes with the units before it,
			// and if it draws after all (a sweep), it waits then, inside
			// its unit (rodadaDoGatilho).
			if k == len(pedidos) {
				pedidos = append(pedidos, pedido{k: k})
				continue
			}
			break
		}
		t, c := compromisso(ev.Armazenado)
		if cw := js[k].compromisso; !cw.IsZero() {
			t, c = compromisso(cw)
		}
		r := b.Rodada(c)
		em := b.Cadeia.PublicadaEm(r)
		if k == 0 && em.After(limite) {
			limite = em
		} else if em.After(limite) {
			break
		}
		pedidos = append(pedidos, pedido{k, r, t})
	}
	// The head's round may not be out yet: wait for it first.
	rodadas := map[uint64]beacon.Rodada{}
	if p := pedidos[0]; p.r > 0 && b.Cadeia.PublicadaEm(p.r).After(time.Now()) {
		rod, err := b.esperar(ctx, log, pedidos[0].r)
		if err != nil {
			return 0, err
		}
		rodadas[rod.Numero] = rod
	}
	// The rest (catching up, many rounds) in parallel; a round the
	// sources cannot give now is waited for, in order.
	var faltam []uint64
	for _, p := range pedidos {
		if _, ok := rodadas[p.r]; !ok && p.r > 0 && !slices.Contains(faltam, p.r) {
			faltam = append(faltam, p.r)
		}
	}
	if len(faltam) > 0 {
		m, _ := b.Fonte.Rodadas(ctx, faltam)
		for r, v := range m {
			rodadas[r] = v
		}
	}
	for n, p := range pedidos {
		if p.r == 0 {
			continue
		}
		rod, ok := rodadas[p.r]
		if !ok {
			var err error
			if rod, err = b.esperar(ctx, log, p.r); err != nil {
				if n > 0 {
					return n, nil // those before it go now
				}
				return 0, err
			}
			rodadas[p.r] = rod
		}
		js[p.k].rodada = novaRodadaSorteio(rod, p.c)
	}
	return len(pedidos), nil
}

// decide tells the inputs whose unit almost always decides (the spec's draw
// triggers): their round is waited for before the batch, so the executor
// never holds its lock waiting for one. Any other input that turns out to
// draw waits for its round inside its unit.
func decide(t evento.Tipo) bool {
	return t == evento.AgendaItemDisponivel || t == evento.AtribuicaoRecusada || t == evento.Varredura
}

// rodadaDoGatilho is the unit's round: the one handed over with it, else
// (a unit applied outside the consumer: the repair) fetched now.
func (u *unidade) rodadaDoGatilho(ctx context.Context, armazenado time.Time) (*RodadaSorteio, error) {
	b := u.servico.o.Beacon
	if b == nil {
		return nil, nil
	}
	if u.rodada != nil {
		return u.rodada, nil
	}
	if !u.compromisso.IsZero() {
		armazenado = u.compromisso
	} else if b.Quorum > 0 {
		// No input record was committed for it (a draw outside the
		// consumer): its C cannot be the witnesses'.
		return nil, fmt.Errorf("beacon: a regra com testemunhas exige o registro d6a.compromisso da entrada antes da decisão")
	}
	t, c := compromisso(armazenado)
	rod, err := b.esperar(ctx, u.servico.log, b.Rodada(c))
	if err != nil {
		return nil, err
	}
	u.rodada = novaRodadaSorteio(rod, t)
	return u.rodada, nil
}
