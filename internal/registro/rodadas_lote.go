package registro

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/formigueiro/d6a/internal/beacon"
)

// Batch sizes of LoteRodadas. A batch costs two pairings (about 2 ms)
// plus a hash and two short multiplications per round; at 1,024 rounds
// the pairings are under 1 % of it.
const (
	RodadasPorLotePadrao = 1024
	// lotesEmVoo batches verify while the walk goes on: the walk waits
	// for one to finish before starting another, so memory is bounded.
	lotesEmVoo = 2
	// registrosPorLote sends a batch off when this many draws wait on it,
	// however few distinct rounds they carry (many draws share a round).
	registrosPorLote = 1 << 16
	// janelaRodadas is how many rounds are remembered, verified or not: a
	// log's rounds rise with it, so a round is met again soon or never.
	janelaRodadas = 1 << 16
	// bisseccaoMinima: below this a failed batch is checked round by round.
	bisseccaoMinima = 4
)

// LoteRodadas verifies the round signatures of a walk through the log in
// batches (CONTRACT §4a at national scale): all rounds are under one key,
// so beacon.LoteConfere checks a batch with two pairings, on every CPU,
// while the walk reads on. Each (round, signature) is verified once. A
// batch that fails is bisected down to its bad rounds, and each draw that
// carried one is reported at its own index (Falhas).
//
// Adicionar is called from one goroutine (the walk's); Fim waits for the
// batches in flight.
type LoteRodadas struct {
	// Tamanho is the rounds per batch (0: RodadasPorLotePadrao); 1 is the
	// one-pairing-per-round check, inline, as a yardstick.
	Tamanho int

	mu       sync.Mutex
	chave    []byte
	rodadas  map[chaveRodada]*rodadaAdiada
	lote     []*rodadaAdiada
	esperam  int // draws waiting on lote
	falhas   []*Falha
	emVoo    chan struct{}
	wg       sync.WaitGroup
	distinta int64
}

type chaveRodada struct {
	n   uint64
	sig [beacon.TamanhoAssinatura]byte
}

type estadoRodada uint8

const (
	rodadaPendente estadoRodada = iota // in lote, or in a batch in flight
	rodadaConfere
	rodadaNaoConfere
)

type rodadaAdiada struct {
	rodada  beacon.Rodada
	estado  estadoRodada
	err     error
	indices []int64 // the draws that carry it, until it is judged
}

// Distintas is how many distinct rounds were verified (or are being).
func (l *LoteRodadas) Distintas() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.distinta
}

// Adicionar takes the signature of round n under chave carried by the draw
// at indice. It returns the draw's failure when it is already known (a
// malformed signature, a round already judged bad, or the inline
// yardstick); otherwise a failure comes later, from Falhas or Fim.
func (l *LoteRodadas) Adicionar(indice int64, chave []byte, n uint64, sig []byte) error {
	if len(sig) != beacon.TamanhoAssinatura || l.Tamanho == 1 {
		return l.umaAUma(chave, n, sig)
	}
	k := chaveRodada{n: n, sig: [beacon.TamanhoAssinatura]byte(sig)}
	l.mu.Lock()
	if l.emVoo == nil {
		l.emVoo = make(chan struct{}, lotesEmVoo)
	}
	if !bytes.Equal(l.chave, chave) {
		// Another rule, another key: what is pending goes under the old
		// one, and rounds are remembered per key.
		l.mu.Unlock()
		l.despachar()
		l.mu.Lock()
		l.chave = bytes.Clone(chave)
		l.rodadas = nil
	}
	if l.rodadas == nil {
		l.rodadas = make(map[chaveRodada]*rodadaAdiada)
	}
	r := l.rodadas[k]
	switch {
	case r == nil:
		if len(l.rodadas) >= janelaRodadas {
			for k, r := range l.rodadas {
				if r.estado != rodadaPendente {
					delete(l.rodadas, k)
				}
			}
		}
		rnd := sha256.Sum256(sig)
		r = &rodadaAdiada{rodada: beacon.Rodada{Numero: n, Assinatura: k.sig[:], Randomness: rnd[:]}}
		l.rodadas[k] = r
		l.lote = append(l.lote, r)
		l.distinta++
	case r.estado == rodadaConfere:
		l.mu.Unlock()
		return nil
	case r.estado == rodadaNaoConfere:
		l.mu.Unlock()
		return r.err
	}
	r.indices = append(r.indices, indice)
	l.esperam++
	cheio := len(l.lote) >= l.tamanho() || l.esperam >= registrosPorLote
	l.mu.Unlock()
	if cheio {
		l.despachar()
	}
	return nil
}

func (l *LoteRodadas) tamanho() int {
	if l.Tamanho <= 0 {
		return RodadasPorLotePadrao
	}
	return l.Tamanho
}

// umaAUma is one pairing for one round, here and now, each round once.
func (l *LoteRodadas) umaAUma(chave []byte, n uint64, sig []byte) error {
	k := chaveRodada{n: n}
	conhecida := len(sig) == beacon.TamanhoAssinatura
	if conhecida {
		k.sig = [beacon.TamanhoAssinatura]byte(sig)
		l.mu.Lock()
		if !bytes.Equal(l.chave, chave) || l.rodadas == nil || len(l.rodadas) >= janelaRodadas {
			l.chave, l.rodadas = bytes.Clone(chave), make(map[chaveRodada]*rodadaAdiada)
		}
		r := l.rodadas[k]
		l.mu.Unlock()
		if r != nil {
			return r.err
		}
	}
	rnd := sha256.Sum256(sig)
	r := &rodadaAdiada{rodada: beacon.Rodada{Numero: n, Assinatura: sig, Randomness: rnd[:]}, estado: rodadaConfere}
	if err := beacon.Verificar(chave, r.rodada); err != nil {
		r.estado, r.err = rodadaNaoConfere, falhaRodada(n, err)
	}
	if conhecida {
		l.mu.Lock()
		l.rodadas[k] = r
		l.distinta++
		l.mu.Unlock()
	}
	return r.err
}

func falhaRodada(n uint64, err error) *Falha {
	return NovaFalha("registro.assinatura_rodada", UmaLinha(err.Error()), fmt.Sprintf("round %d signed by the chain of the d6a.regras_sorteio record", n))
}

// despachar sends the pending batch to be verified, waiting first while
// lotesEmVoo batches are in flight.
func (l *LoteRodadas) despachar() {
	l.mu.Lock()
	lote, chave := l.lote, l.chave
	l.lote, l.esperam = nil, 0
	l.mu.Unlock()
	if len(lote) == 0 {
		return
	}
	l.emVoo <- struct{}{}
	l.wg.Add(1)
	go func() {
		defer func() { <-l.emVoo; l.wg.Done() }()
		rs := make([]beacon.Rodada, len(lote))
		for i, r := range lote {
			rs[i] = r.rodada // set before the batch left: read without the lock
		}
		errs := make([]error, len(lote))
		conferirLote(chave, rs, errs)
		l.mu.Lock()
		defer l.mu.Unlock()
		for i, r := range lote {
			r.estado = rodadaConfere
			if errs[i] != nil {
				r.estado, r.err = rodadaNaoConfere, falhaRodada(r.rodada.Numero, errs[i])
				for _, i := range r.indices {
					f := *r.err.(*Falha)
					f.Indice = i
					l.falhas = append(l.falhas, &f)
				}
			}
			r.indices = nil
		}
	}()
}

// conferirLote judges a batch into errs: the batch equation, and where it
// fails each half again, so k bad rounds among n cost about 2k·log2(n)
// batch checks, not n pairings.
func conferirLote(chave []byte, rs []beacon.Rodada, errs []error) {
	if len(rs) > bisseccaoMinima {
		ok, err := beacon.LoteConfere(chave, rs)
		if err == nil {
			if !ok {
				m := len(rs) / 2
				conferirLote(chave, rs[:m], errs[:m])
				conferirLote(chave, rs[m:], errs[m:])
			}
			return
		}
	}
	var wg sync.WaitGroup
	trab := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, r := range rs {
		wg.Add(1)
		trab <- struct{}{}
		go func() {
			defer func() { <-trab; wg.Done() }()
			errs[i] = beacon.Verificar(chave, r)
		}()
	}
	wg.Wait()
}

// Falhas is the failures judged so far and not yet taken, in log order:
// each at its draw's Indice.
func (l *LoteRodadas) Falhas() []*Falha {
	l.mu.Lock()
	f := l.falhas
	l.falhas = nil
	l.mu.Unlock()
	slices.SortFunc(f, func(a, b *Falha) int { return cmp.Compare(a.Indice, b.Indice) })
	return f
}

// Fim verifies what is pending, waits for every batch, and returns the
// failures not yet taken, in log order.
func (l *LoteRodadas) Fim() []*Falha {
	if l.emVoo != nil {
		l.despachar()
	}
	l.wg.Wait()
	return l.Falhas()
}
