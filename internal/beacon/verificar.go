package beacon

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/cloudflare/circl/ecc/bls12381"
)

// Errors of a round's check, for errors.Is; the returned error names the
// round and the detail.
var (
	// ErrAssinatura: the signature is malformed or is not the chain key's
	// signature of the round.
	ErrAssinatura = errors.New("beacon: signature does not verify")
	// ErrRandomness: randomness is not SHA-256 of the signature.
	ErrRandomness = errors.New("beacon: randomness is not SHA-256 of the signature")
)

// chaves caches decoded public keys: decompressing and subgroup-checking a
// G2 point costs about as much as a pairing, and a process sees one or two.
var chaves struct {
	sync.Mutex
	m map[string]*bls12381.G2
}

func chaveDecodificada(chave []byte) (*bls12381.G2, error) {
	chaves.Lock()
	p, ok := chaves.m[string(chave)]
	chaves.Unlock()
	if ok {
		return p, nil
	}
	p, err := pontoChave(chave)
	if err != nil {
		return nil, err
	}
	chaves.Lock()
	if chaves.m == nil || len(chaves.m) >= 16 {
		chaves.m = make(map[string]*bls12381.G2) // bounded: only valid keys, few of them
	}
	chaves.m[string(chave)] = p
	chaves.Unlock()
	return p, nil
}

// Verificar checks round r under the chain key chave: the BLS signature
// (e(σ, g2) == e(H(m), pk)) and randomness == SHA-256(signature). The error
// wraps ErrAssinatura or ErrRandomness and names the round.
func Verificar(chave []byte, r Rodada) error {
	pk, err := chaveDecodificada(chave)
	if err != nil {
		return err
	}
	return verificar(pk, r)
}

func verificar(pk *bls12381.G2, r Rodada) error {
	sig, err := decodificarAssinatura(r)
	if err != nil {
		return err
	}
	if !pareamentoConfere(sig, hashRodada(r.Numero), pk) {
		return fmt.Errorf("%w: round %d", ErrAssinatura, r.Numero)
	}
	return conferirRandomness(r)
}

// decodificarAssinatura checks what can be checked without a pairing: the
// round exists and the signature is a compressed G1 point of the
// prime-order subgroup (circl's SetBytes checks the subgroup), not the
// identity.
func decodificarAssinatura(r Rodada) (*bls12381.G1, error) {
	if r.Numero == 0 {
		return nil, fmt.Errorf("%w: round 0 does not exist", ErrAssinatura)
	}
	if len(r.Assinatura) != TamanhoAssinatura {
		return nil, fmt.Errorf("%w: round %d: signature has %d bytes, want %d", ErrAssinatura, r.Numero, len(r.Assinatura), TamanhoAssinatura)
	}
	if r.Assinatura[0]&0x80 == 0 {
		return nil, fmt.Errorf("%w: round %d: signature is not in compressed form", ErrAssinatura, r.Numero)
	}
	sig := new(bls12381.G1)
	if err := sig.SetBytes(r.Assinatura); err != nil {
		return nil, fmt.Errorf("%w: round %d: signature is not a G1 point: %v", ErrAssinatura, r.Numero, err)
	}
	if sig.IsIdentity() {
		return nil, fmt.Errorf("%w: round %d: signature is the identity", ErrAssinatura, r.Numero)
	}
	return sig, nil
}

func conferirRandomness(r Rodada) error {
	h := sha256.Sum256(r.Assinatura)
	if !bytes.Equal(h[:], r.Randomness) {
		return fmt.Errorf("%w: round %d", ErrRandomness, r.Numero)
	}
	return nil
}

// pareamentoConfere is e(sig, g2) == e(h, pk), as one product of two
// Miller loops and a single final exponentiation: e(sig, g2)·e(−h, pk) == 1.
func pareamentoConfere(sig, h *bls12381.G1, pk *bls12381.G2) bool {
	return bls12381.ProdPairFrac(
		[]*bls12381.G1{sig, h},
		[]*bls12381.G2{bls12381.G2Generator(), pk},
		[]int{1, -1},
	).IsIdentity()
}

// bitsCoeficiente is the size of the random batch coefficients: a batch
// with a bad round passes with probability 2^-128 at most.
const bitsCoeficiente = 128

// VerificarLote checks many rounds under one key with a random linear
// combination, two pairings for the whole batch:
// e(Σ aᵢσᵢ, g2) == e(Σ aᵢH(mᵢ), pk), aᵢ random 128-bit from crypto/rand, so
// a relay cannot pick bad signatures that cancel out. Each randomness is
// checked too. On failure it checks one by one to name the first bad round
// (in slice order).
func VerificarLote(chave []byte, rs []Rodada) error {
	pk, err := chaveDecodificada(chave)
	if err != nil {
		return err
	}
	return verificarLote(pk, rs)
}

func verificarLote(pk *bls12381.G2, rs []Rodada) error {
	switch len(rs) {
	case 0:
		return nil
	case 1:
		return verificar(pk, rs[0])
	}
	ok, sigsDec, hsDec, err := combinar(pk, rs)
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	for i, r := range rs {
		if sigsDec[i] == nil {
			if err := verificar(pk, r); err != nil {
				return err
			}
			continue
		}
		// Format and randomness already passed in the batch pass.
		if !pareamentoConfere(sigsDec[i], hsDec[i], pk) {
			return fmt.Errorf("%w: round %d", ErrAssinatura, r.Numero)
		}
	}
	// Unreachable unless the batch equation and the single ones disagree.
	return fmt.Errorf("%w: batch of %d rounds failed but each round verifies", ErrAssinatura, len(rs))
}

// LoteConfere is VerificarLote's batch check without its one-by-one pass:
// true when every round of rs verifies, false when one does not, without
// naming it. A caller that must name every bad round of a batch (the
// verifier's walk) bisects with it, which costs far fewer pairings than a
// pass over the batch.
func LoteConfere(chave []byte, rs []Rodada) (bool, error) {
	pk, err := chaveDecodificada(chave)
	if err != nil {
		return false, err
	}
	if len(rs) == 0 {
		return true, nil
	}
	ok, _, _, err := combinar(pk, rs)
	return ok, err
}

// combinar checks rs's batch equation; it also returns the decoded
// signatures and hashes (nil where a round's format or randomness failed)
// for a one-by-one pass that then costs only the pairings. err is only a
// failure to draw the coefficients.
func combinar(pk *bls12381.G2, rs []Rodada) (ok bool, sigsDec, hsDec []*bls12381.G1, err error) {
	coef := make([]byte, len(rs)*bitsCoeficiente/8)
	if _, err := rand.Read(coef); err != nil {
		return false, nil, nil, fmt.Errorf("beacon: batch coefficients: %w", err)
	}

	// Split the decoding, the hashing and the sums, which dominate, over
	// the CPUs; each worker returns its partial sums.
	trab := runtime.GOMAXPROCS(0)
	if m := (len(rs) + 15) / 16; trab > m {
		trab = m
	}
	type parcial struct {
		sigs, hs bls12381.G1
		err      error
	}
	parciais := make([]parcial, trab)
	sigsDec = make([]*bls12381.G1, len(rs))
	hsDec = make([]*bls12381.G1, len(rs))
	var wg sync.WaitGroup
	for w := range trab {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := &parciais[w]
			var sigs, hs []*bls12381.G1
			var ks [][]byte
			for i := w; i < len(rs); i += trab {
				r := rs[i]
				sig, err := decodificarAssinatura(r)
				if err == nil {
					err = conferirRandomness(r)
				}
				if err != nil {
					p.err = err // the one-by-one pass below names the first in order
					return
				}
				h := hashRodada(r.Numero)
				sigsDec[i], hsDec[i] = sig, h
				a := coef[i*bitsCoeficiente/8 : (i+1)*bitsCoeficiente/8]
				a[0] |= 0x80 // never zero, so every round counts
				sigs, hs, ks = append(sigs, sig), append(hs, h), append(ks, a)
			}
			somaPonderada(&p.sigs, ks, sigs)
			somaPonderada(&p.hs, ks, hs)
		}()
	}
	wg.Wait()

	var sigs, hs bls12381.G1
	sigs.SetIdentity()
	hs.SetIdentity()
	falhou := false
	for i := range parciais {
		if parciais[i].err != nil {
			falhou = true
			break
		}
		sigs.Add(&sigs, &parciais[i].sigs)
		hs.Add(&hs, &parciais[i].hs)
	}
	return !falhou && pareamentoConfere(&sigs, &hs, pk), sigsDec, hsDec, nil
}

// somaPonderada sets q = Σ kᵢ·pᵢ for short big-endian scalars (the batch
// coefficients, all of one length) by buckets (Pippenger): for each c-bit
// window, from the top, each point is added to the bucket of its digit
// and the buckets are summed by running sums, about (n + 2^c) additions a
// window instead of a multiplication a point. For 512 points of 128 bits
// that is about a seventh of the additions and doublings. Not constant
// time: the scalars are fresh random per batch and guard against forged
// batches, not a secret.
func somaPonderada(q *bls12381.G1, ks [][]byte, ps []*bls12381.G1) {
	q.SetIdentity()
	if len(ps) == 0 {
		return
	}
	bits := len(ks[0]) * 8
	c, custo := 1, -1
	for w := 1; w <= 12; w++ {
		j := (bits + w - 1) / w
		if k := j * (len(ps) + 1<<w + w); custo < 0 || k < custo {
			c, custo = w, k
		}
	}
	baldes := make([]bls12381.G1, 1<<c-1)
	var soma, total bls12381.G1
	for inicio := ((bits + c - 1) / c) * c; inicio > 0; {
		inicio -= c
		for range c {
			q.Double()
		}
		for b := range baldes {
			baldes[b].SetIdentity()
		}
		for i, p := range ps {
			if d := digito(ks[i], inicio, c); d != 0 {
				baldes[d-1].Add(&baldes[d-1], p)
			}
		}
		// Σ d·balde[d] = Σ over d of the buckets from d up.
		soma.SetIdentity()
		total.SetIdentity()
		for b := len(baldes) - 1; b >= 0; b-- {
			soma.Add(&soma, &baldes[b])
			total.Add(&total, &soma)
		}
		q.Add(q, &total)
	}
}

// digito is the c bits of big-endian k from bit inicio (0 the lowest) up.
func digito(k []byte, inicio, c int) int {
	d := 0
	for j := range c {
		b := inicio + j
		if b >= len(k)*8 {
			break
		}
		d |= int(k[len(k)-1-b/8]>>(b%8)&1) << j
	}
	return d
}
