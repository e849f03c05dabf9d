// Package beacon is drand-compatible public randomness (CONTRACT §4a): the
// chain description (Cadeia), the BLS check of a round (Verificar,
// VerificarLote), an HTTP client for relays of one chain (Cliente) and a
// private beacon with the same API and scheme (Privado) for when no public
// chain is configured.
//
// The only scheme is drand's quicknet one, bls-unchained-g1-rfc9380: the
// public key is a BLS12-381 G2 point, the signature of round r is a G1 point
// over SHA-256(r as big-endian uint64) hashed to the curve with DST, and the
// randomness is SHA-256 of the compressed signature.
package beacon

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cloudflare/circl/ecc/bls12381"
)

// Esquema is the only drand scheme spoken here (drand quicknet's).
const Esquema = "bls-unchained-g1-rfc9380"

// DST is the RFC 9380 hash-to-G1 domain separation tag of Esquema.
const DST = "BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_"

// The League of Entropy's quicknet chain, as its /info serves it.
const (
	QuicknetChave         = "83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a"
	QuicknetHash          = "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971"
	QuicknetGenesis int64 = 1692803367
	QuicknetPeriodo       = 3 * time.Second
)

// Sizes of the compressed encodings.
const (
	TamanhoChave      = bls12381.G2SizeCompressed // 96
	TamanhoAssinatura = bls12381.G1SizeCompressed // 48
)

// Cadeia is a chain's info, as /info serves it and as the log's rule
// record names it. The public key identifies the chain; Hash is informative.
type Cadeia struct {
	ChavePublica []byte        // G2, 96 bytes compressed
	Periodo      time.Duration // whole seconds
	Genesis      int64         // unix seconds: round 1 is published then
	Hash         string        // hex, informative
	Esquema      string
}

// Quicknet is the League of Entropy's quicknet chain.
func Quicknet() Cadeia {
	k, err := hex.DecodeString(QuicknetChave)
	if err != nil {
		panic(err)
	}
	return Cadeia{ChavePublica: k, Periodo: QuicknetPeriodo, Genesis: QuicknetGenesis, Hash: QuicknetHash, Esquema: Esquema}
}

// Quicknet tells whether c is the League of Entropy's quicknet (by key,
// since the key is what identifies a chain).
func (c Cadeia) Quicknet() bool {
	return hex.EncodeToString(c.ChavePublica) == QuicknetChave
}

func (c Cadeia) segundos() int64 {
	s := int64(c.Periodo / time.Second)
	if s < 1 {
		s = 1 // a zero period is invalid; avoid dividing by zero
	}
	return s
}

// PublicadaEm is when round r is published: genesis + (r−1)·period.
// Round 0 does not exist; it maps to one period before genesis.
func (c Cadeia) PublicadaEm(r uint64) time.Time {
	return time.Unix(c.Genesis+(int64(r)-1)*c.segundos(), 0)
}

// PrimeiraApos is the first round published strictly later than t, so a
// draw committed at t cannot use randomness that already existed at t.
// t may carry sub-second precision.
func (c Cadeia) PrimeiraApos(t time.Time) uint64 {
	g := time.Unix(c.Genesis, 0)
	if t.Before(g) {
		return 1
	}
	// floor((t−genesis)/period) rounds are at or before t, plus round 1.
	return uint64(t.Sub(g)/(time.Duration(c.segundos())*time.Second)) + 2
}

// UltimaEm is the last round published at or before t (0 before genesis).
func (c Cadeia) UltimaEm(t time.Time) uint64 {
	return c.PrimeiraApos(t) - 1
}

// Validar checks that c is usable: scheme, key and period.
func (c Cadeia) Validar() error {
	if c.Esquema != Esquema {
		return fmt.Errorf("beacon: scheme %q, only %q is supported", c.Esquema, Esquema)
	}
	if _, err := pontoChave(c.ChavePublica); err != nil {
		return err
	}
	if c.Periodo < time.Second || c.Periodo%time.Second != 0 {
		return fmt.Errorf("beacon: period %v is not a positive whole number of seconds", c.Periodo)
	}
	return nil
}

// cadeiaJSON is drand's /info, v1 field names (what api.drand.sh/{hash}/info
// serves) plus the v2 ones (scheme, chain_hash) so either parses.
type cadeiaJSON struct {
	PublicKey   string `json:"public_key"`
	Period      int64  `json:"period"`
	GenesisTime int64  `json:"genesis_time"`
	Hash        string `json:"hash,omitempty"`
	SchemeID    string `json:"schemeID,omitempty"`
	// drand v2 names; read only.
	Scheme    string `json:"scheme,omitempty"`
	ChainHash string `json:"chain_hash,omitempty"`
}

// MarshalJSON writes c as drand's /info does (v1 names).
func (c Cadeia) MarshalJSON() ([]byte, error) {
	return json.Marshal(cadeiaJSON{
		PublicKey:   hex.EncodeToString(c.ChavePublica),
		Period:      int64(c.Periodo / time.Second),
		GenesisTime: c.Genesis,
		Hash:        c.Hash,
		SchemeID:    c.Esquema,
	})
}

// UnmarshalJSON reads drand's /info in either the v1 or the v2 shape.
func (c *Cadeia) UnmarshalJSON(b []byte) error {
	var j cadeiaJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	k, err := hex.DecodeString(j.PublicKey)
	if err != nil {
		return fmt.Errorf("beacon: info public_key is not hex: %w", err)
	}
	if j.Period <= 0 {
		return fmt.Errorf("beacon: info period %d is not positive", j.Period)
	}
	*c = Cadeia{ChavePublica: k, Periodo: time.Duration(j.Period) * time.Second, Genesis: j.GenesisTime, Hash: j.Hash, Esquema: j.SchemeID}
	if c.Esquema == "" {
		c.Esquema = j.Scheme
	}
	if c.Hash == "" {
		c.Hash = j.ChainHash
	}
	return nil
}

// ChaveHex parses and validates a chain's public key in hex (a compressed
// G2 point in the prime-order subgroup, not the identity).
func ChaveHex(s string) ([]byte, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "0x")
	if s == "" {
		return nil, errors.New("beacon: empty public key")
	}
	k, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("beacon: public key is not hex: %w", err)
	}
	// Cached: every draw's check names its rule's key, and decoding it
	// costs about a pairing.
	if _, err := chaveDecodificada(k); err != nil {
		return nil, err
	}
	return k, nil
}

func pontoChave(k []byte) (*bls12381.G2, error) {
	if len(k) != TamanhoChave {
		return nil, fmt.Errorf("beacon: public key has %d bytes, want %d (compressed G2)", len(k), TamanhoChave)
	}
	if k[0]&0x80 == 0 {
		return nil, errors.New("beacon: public key is not in compressed form")
	}
	p := new(bls12381.G2)
	if err := p.SetBytes(k); err != nil {
		return nil, fmt.Errorf("beacon: public key is not a G2 point: %w", err)
	}
	if p.IsIdentity() {
		return nil, errors.New("beacon: public key is the identity")
	}
	return p, nil
}

// Rodada is one beacon round. Its JSON is drand's:
// {"round":N,"randomness":"hex","signature":"hex"}.
type Rodada struct {
	Numero     uint64
	Assinatura []byte // G1, 48 bytes compressed
	Randomness []byte // SHA-256(Assinatura)
}

type rodadaJSON struct {
	Round      uint64 `json:"round"`
	Randomness string `json:"randomness"`
	Signature  string `json:"signature"`
}

// MarshalJSON writes r as drand's /public/{round}.
func (r Rodada) MarshalJSON() ([]byte, error) {
	return json.Marshal(rodadaJSON{Round: r.Numero, Randomness: hex.EncodeToString(r.Randomness), Signature: hex.EncodeToString(r.Assinatura)})
}

// UnmarshalJSON reads drand's /public/{round}; fields it does not know
// (previous_signature of chained schemes) are ignored.
func (r *Rodada) UnmarshalJSON(b []byte) error {
	var j rodadaJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	sig, err := hex.DecodeString(j.Signature)
	if err != nil {
		return fmt.Errorf("beacon: round %d signature is not hex: %w", j.Round, err)
	}
	rnd, err := hex.DecodeString(j.Randomness)
	if err != nil {
		return fmt.Errorf("beacon: round %d randomness is not hex: %w", j.Round, err)
	}
	*r = Rodada{Numero: j.Round, Assinatura: sig, Randomness: rnd}
	return nil
}

// Mensagem is what round r's signature signs: SHA-256 of r as a big-endian
// uint64 (drand's unchained digest).
func Mensagem(r uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], r)
	h := sha256.Sum256(b[:])
	return h[:]
}

// hashRodada is H(m) on G1 for round r.
func hashRodada(r uint64) *bls12381.G1 {
	p := new(bls12381.G1)
	p.Hash(Mensagem(r), []byte(DST))
	return p
}

// hashCadeia is drand's chain hash: SHA-256 of period (uint32 BE), genesis
// (int64 BE), the public key, the genesis seed and the beacon id (when it
// is not "default").
func hashCadeia(periodo time.Duration, genesis int64, chave, semente []byte, id string) string {
	h := sha256.New()
	var b [12]byte
	binary.BigEndian.PutUint32(b[:4], uint32(periodo/time.Second))
	binary.BigEndian.PutUint64(b[4:], uint64(genesis))
	h.Write(b[:])
	h.Write(chave)
	h.Write(semente)
	if id != "" && id != "default" {
		h.Write([]byte(id))
	}
	return hex.EncodeToString(h.Sum(nil))
}
