// Package beacontest serves beacons for tests of packages that use
// internal/beacon: the private beacon over httptest, relays that misbehave
// (Hostil) and a second signer (OutroAssinante) built directly on circl's
// BLS package, sharing no signing code with beacon.Privado.
package beacontest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/cloudflare/circl/sign/bls"

	"github.com/formigueiro/d6a/internal/beacon"
)

// Servidor serves p's drand API until the test ends.
func Servidor(t testing.TB, p *beacon.Privado) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(p.Handler())
	t.Cleanup(srv.Close)
	return srv
}

// Modo is how a Hostil relay misbehaves.
type Modo int

const (
	// AssinaturaErrada answers each round with a well-formed signature by
	// another key (a valid G1 point, randomness consistent with it).
	AssinaturaErrada Modo = iota
	// AssinaturaLixo answers with 48 random bytes as the signature.
	AssinaturaLixo
	// RodadaErrada answers round r+1's genuine data when asked for r.
	RodadaErrada
	// RodadaTrocada answers round r+1's genuine signature labelled as r.
	RodadaTrocada
	// RandomnessErrada answers the genuine signature with other randomness.
	RandomnessErrada
	// Silencioso accepts the request and never answers.
	Silencioso
	// Fora refuses connections (nothing listens on its address).
	Fora
	// Indisponivel answers 503 to everything.
	Indisponivel
	// OutraCadeia serves another chain's /info and rounds (another key).
	OutraCadeia
)

func (m Modo) String() string {
	return [...]string{"AssinaturaErrada", "AssinaturaLixo", "RodadaErrada", "RodadaTrocada", "RandomnessErrada", "Silencioso", "Fora", "Indisponivel", "OutraCadeia"}[m]
}

// Hostil is the base URL of a relay for p's chain that misbehaves as modo
// says. Except for OutraCadeia, its /info is p's genuine info, so only the
// rounds are wrong. Rounds are served regardless of time.
func Hostil(t testing.TB, p *beacon.Privado, modo Modo) string {
	t.Helper()
	if modo == Fora {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + l.Addr().String()
		l.Close() // nothing listens there any more: connection refused
		return url
	}
	cad := p.Cadeia()
	outro := NovoOutroAssinante([]byte("beacontest hostil: outra chave"), cad.Genesis, cad.Periodo)
	fim := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /info", func(w http.ResponseWriter, r *http.Request) {
		switch modo {
		case Silencioso:
			silenciar(r, fim)
		case Indisponivel:
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
		case OutraCadeia:
			outro.info(w)
		default:
			escrever(w, cad)
		}
	})
	mux.HandleFunc("GET /public/{round}", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.ParseUint(r.PathValue("round"), 10, 64)
		if err != nil || n == 0 {
			http.Error(w, "bad round", http.StatusBadRequest)
			return
		}
		var x beacon.Rodada
		switch modo {
		case Silencioso:
			silenciar(r, fim)
			return
		case Indisponivel:
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		case AssinaturaErrada, OutraCadeia:
			x = outro.Assinar(n)
		case AssinaturaLixo:
			lixo := sha256.Sum256([]byte("lixo " + strconv.FormatUint(n, 10)))
			sig := append(lixo[:], lixo[:16]...)
			sig[0] |= 0x80 // compressed flag, so it fails as a point, not as a format
			rnd := sha256.Sum256(sig)
			x = beacon.Rodada{Numero: n, Assinatura: sig, Randomness: rnd[:]}
		case RodadaErrada:
			x = p.Assinar(n + 1)
		case RodadaTrocada:
			x = p.Assinar(n + 1)
			x.Numero = n
		case RandomnessErrada:
			x = p.Assinar(n)
			x.Randomness = p.Assinar(n + 1).Randomness
		}
		escrever(w, x)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(fim) }) // runs first: frees silent handlers so Close can finish
	return srv.URL
}

func silenciar(r *http.Request, fim <-chan struct{}) {
	select {
	case <-r.Context().Done():
	case <-fim:
	}
}

func escrever(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// OutroAssinante is an independent single-signer beacon: it derives its key
// with circl's sign/bls KeyGen and signs with sign/bls.Sign (keys on G2,
// signatures on G1, DST of RFC 9380), computing drand's round digest on its
// own, so a client that accepts its rounds agrees with drand's scheme and
// not merely with beacon.Privado.
type OutroAssinante struct {
	sk      *bls.PrivateKey[bls.KeyG2SigG1]
	chave   []byte
	genesis int64
	periodo time.Duration
}

// NovoOutroAssinante derives a key from semente (padded to 32 bytes).
func NovoOutroAssinante(semente []byte, genesis int64, periodo time.Duration) *OutroAssinante {
	ikm := sha256.Sum256(semente)
	sk, err := bls.KeyGen[bls.KeyG2SigG1](ikm[:], nil, []byte("beacontest"))
	if err != nil {
		panic(err)
	}
	pk, err := sk.PublicKey().MarshalBinary()
	if err != nil {
		panic(err)
	}
	return &OutroAssinante{sk: sk, chave: pk, genesis: genesis, periodo: periodo}
}

// Chave is the public key (G2, compressed).
func (o *OutroAssinante) Chave() []byte { return append([]byte(nil), o.chave...) }

// Cadeia is this signer's chain info.
func (o *OutroAssinante) Cadeia() beacon.Cadeia {
	return beacon.Cadeia{ChavePublica: o.Chave(), Periodo: o.periodo, Genesis: o.genesis, Hash: "outro", Esquema: beacon.Esquema}
}

// Assinar signs round n: BLS over SHA-256(n as big-endian uint64).
func (o *OutroAssinante) Assinar(n uint64) beacon.Rodada {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	m := sha256.Sum256(b[:])
	sig := bls.Sign(o.sk, m[:])
	rnd := sha256.Sum256(sig)
	return beacon.Rodada{Numero: n, Assinatura: sig, Randomness: rnd[:]}
}

func (o *OutroAssinante) info(w http.ResponseWriter) {
	// Written by hand in drand's v2 shape, not through beacon.Cadeia's JSON.
	fmt.Fprintf(w, `{"public_key":%q,"beacon_id":"outro","period":%d,"scheme":%q,"genesis_time":%d,"chain_hash":"outro"}`,
		hex.EncodeToString(o.chave), int64(o.periodo/time.Second), beacon.Esquema, o.genesis)
}

// Handler serves /info and /public/{round} for this signer's chain,
// withholding rounds not yet due (425), with JSON written by hand.
func (o *OutroAssinante) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /info", func(w http.ResponseWriter, r *http.Request) { o.info(w) })
	mux.HandleFunc("GET /public/{round}", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.ParseUint(r.PathValue("round"), 10, 64)
		if err != nil || n == 0 {
			http.Error(w, "bad round", http.StatusBadRequest)
			return
		}
		if time.Now().Unix() < o.genesis+int64(n-1)*int64(o.periodo/time.Second) {
			http.Error(w, "too early", http.StatusTooEarly)
			return
		}
		x := o.Assinar(n)
		fmt.Fprintf(w, `{"round":%d,"randomness":"%x","signature":"%x"}`, x.Numero, x.Randomness, x.Assinatura)
	})
	return mux
}
