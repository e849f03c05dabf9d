package sorteio

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ChaveHMAC is the HMAC-SHA256 key used to derive the seed (CONTRACT §4).
// It is public on purpose: the seed is meant to be recomputed by anyone, so
// the key only separates this use of SHA-256 from any other, it adds no
// secrecy.
const ChaveHMAC = "d6a-sorteio"

// Metodo is the value published in the metodo_sorteio field of the
// conselheiro.sorteado event (spec 3.7).
const Metodo = "fisher_yates"

// PosicaoSorteada is the index of the winner in the shuffled list. The
// winner is always the first element of ordenados (CONTRACT §4), so this is
// the constant published as posicao_sorteada.
const PosicaoSorteada = 0

// Resultado is the complete, reproducible outcome of one draw. Its JSON form
// is what d6a verify prints and uses the field names of the audit record
// (d6a.auditoria_sorteios).
type Resultado struct {
	// Seed is the lowercase hex HMAC-SHA256 seed (CONTRACT §4).
	Seed string `json:"seed"`
	// Entrada is the canonical input: the eligible ids, lowercased and
	// sorted ascending.
	Entrada []string `json:"elegiveis_entrada"`
	// Ordenados is Entrada after the seeded Fisher-Yates shuffle.
	Ordenados []string `json:"ordenados"`
	// Selecionado is the winner, Ordenados[PosicaoSorteada].
	Selecionado string `json:"selecionado"`
	// ListaHash is the lowercase hex SHA-256 of the compact JSON array of
	// Ordenados.
	ListaHash string `json:"lista_elegiveis_hash"`
}

// Seed returns the lowercase hex HMAC-SHA256, keyed with [ChaveHMAC], of
// base + ":" + timestamp (CONTRACT §4; the spec's seedGenerator.gerar). The timestamp is used verbatim, so
// callers must pass the exact T string that is published and audited.
func Seed(base, timestamp string) string {
	mac := hmac.New(sha256.New, []byte(ChaveHMAC))
	mac.Write([]byte(base + ":" + timestamp))
	return hex.EncodeToString(mac.Sum(nil))
}

// SeedComRodada is the seed under the beacon rule (CONTRACT §4a): the HMAC
// of base + ":" + timestamp + ":" + randomness, randomness being the
// beacon round's value in lowercase hex. Nobody knows it before the round
// is published, after the trigger was fixed, so nobody can grind the
// trigger's event_id for a winner.
func SeedComRodada(base, timestamp, randomness string) string {
	mac := hmac.New(sha256.New, []byte(ChaveHMAC))
	mac.Write([]byte(base + ":" + timestamp + ":" + randomness))
	return hex.EncodeToString(mac.Sum(nil))
}

// RandomInt returns the index-th pseudo-random number below max derived from
// seed: the first 8 hex digits of SHA-256(seed + ":" + index), read as a
// big-endian uint32, reduced modulo max (CONTRACT §4). The reduction has a
// bias of at most max/2^32, which the contract accepts for lists of at most
// 50 ids (spec 6.2). RandomInt panics if max is 0.
func RandomInt(seed string, max uint64, index int) uint64 {
	if max == 0 {
		panic("sorteio: RandomInt with max 0")
	}
	sum := sha256.Sum256([]byte(seed + ":" + strconv.Itoa(index)))
	// The first 8 hex digits of the digest are exactly its first 4 bytes,
	// big-endian; reading the bytes avoids a hex round trip.
	return uint64(binary.BigEndian.Uint32(sum[:4])) % max
}

// Shuffle returns a Fisher-Yates permutation of ids driven by seed
// (CONTRACT §4; the spec's fisherYates.ordenar): for i from n-1 down to 1 it swaps element i with element
// RandomInt(seed, i+1, n-1-i). The ids are shuffled as given; canonical
// ordering is the caller's job (see [Sortear]). ids is never modified.
func Shuffle(ids []string, seed string) []string {
	out := slices.Clone(ids)
	if out == nil {
		out = []string{}
	}
	n := len(out)
	for i := n - 1; i >= 1; i-- {
		j := RandomInt(seed, uint64(i+1), n-1-i)
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// ListHash returns the lowercase hex SHA-256 of ids encoded as a compact
// JSON array, e.g. ["a","b"]; an empty or nil list hashes "[]"
// (CONTRACT §4). Strings are encoded like encoding/json but without HTML
// escaping, so UUIDs and any other ASCII ids are hashed byte for byte as
// they would be by JSON.stringify.
func ListHash(ids []string) string {
	sum := sha256.Sum256(compactJSON(ids))
	return hex.EncodeToString(sum[:])
}

// compactJSON encodes ids as a compact JSON array without HTML escaping.
func compactJSON(ids []string) []byte {
	if ids == nil {
		// A nil slice would encode as null; the contract hashes "[]".
		ids = []string{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// json.Marshal would turn <, > and & into \u003c and friends, which no
	// other implementation of the contract does.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ids); err != nil {
		// Encoding a []string cannot fail.
		panic("sorteio: encoding id list: " + err.Error())
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// Canonicalizar returns the canonical draw input: a lowercased copy of
// elegiveis sorted ascending, byte-wise (CONTRACT §4). It returns an error if
// the list is empty or contains an empty id or a duplicate, duplicates being
// detected after lowercasing. elegiveis is never modified.
func Canonicalizar(elegiveis []string) ([]string, error) {
	if len(elegiveis) == 0 {
		return nil, errors.New("sorteio: empty list of elegiveis")
	}
	out := make([]string, len(elegiveis))
	for i, id := range elegiveis {
		if id == "" {
			return nil, fmt.Errorf("sorteio: elegiveis[%d] is empty", i)
		}
		out[i] = strings.ToLower(id)
	}
	slices.Sort(out)
	for i := 1; i < len(out); i++ {
		if out[i] == out[i-1] {
			return nil, fmt.Errorf("sorteio: duplicate id %q in elegiveis", out[i])
		}
	}
	return out, nil
}

// Sortear runs the draw for the given base, draw time T and eligible ids,
// which may come in any order and case (CONTRACT §4). It returns an error if
// base is empty, timestamp is not in the exact format of [FormatTimestamp]
// (a T in any other shape could not be reproduced from the published
// event), or the list is empty or has duplicates.
func Sortear(base, timestamp string, elegiveis []string) (Resultado, error) {
	return SortearComRodada(base, timestamp, "", elegiveis)
}

// SortearComRodada is [Sortear] under the beacon rule (CONTRACT §4a) when
// randomness (the round's value, lowercase hex) is not empty; with an
// empty one it is the rule of the draws before it.
func SortearComRodada(base, timestamp, randomness string, elegiveis []string) (Resultado, error) {
	if base == "" {
		return Resultado{}, errors.New("sorteio: empty base")
	}
	if _, err := ParseTimestamp(timestamp); err != nil {
		return Resultado{}, err
	}
	entrada, err := Canonicalizar(elegiveis)
	if err != nil {
		return Resultado{}, err
	}
	seed := Seed(base, timestamp)
	if randomness != "" {
		if err := conferirRandomness(randomness); err != nil {
			return Resultado{}, err
		}
		seed = SeedComRodada(base, timestamp, randomness)
	}
	ordenados := Shuffle(entrada, seed)
	return Resultado{
		Seed:        seed,
		Entrada:     entrada,
		Ordenados:   ordenados,
		Selecionado: ordenados[PosicaoSorteada],
		ListaHash:   ListHash(ordenados),
	}, nil
}

// conferirRandomness refuses a round value that is not 32 bytes of
// lowercase hex: any other spelling of the same value would give another
// seed.
func conferirRandomness(r string) error {
	if len(r) != 64 || strings.ToLower(r) != r {
		return fmt.Errorf("sorteio: randomness %q is not 64 lowercase hex digits", r)
	}
	if _, err := hex.DecodeString(r); err != nil {
		return fmt.Errorf("sorteio: randomness %q is not hex", r)
	}
	return nil
}
