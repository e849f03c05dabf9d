package beacon

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cloudflare/circl/ecc/bls12381"
)

// ArquivoPrivado is the private beacon's key file under the data dir.
const ArquivoPrivado = "beacon-privado.json"

// IDPrivado is the private chain's beacon id (it enters the chain hash).
const IDPrivado = "d6a-privado"

// Privado is a single-signer beacon with drand's API and scheme, for when
// no public chain is configured. Its rounds verify with Verificar under its
// public key exactly like quicknet's.
type Privado struct {
	sk     bls12381.Scalar
	cadeia Cadeia
	agora  func() time.Time
}

// arquivoPrivado is the key file. The seed, not the scalar, is stored so
// NovoPrivado and AbrirPrivado derive the key the same way.
type arquivoPrivado struct {
	Esquema  string `json:"scheme"`
	Semente  string `json:"seed"`
	Genesis  int64  `json:"genesis_time"`
	Periodo  int64  `json:"period"`
	Chave    string `json:"public_key"` // informative; re-derived and checked on open
	Hash     string `json:"hash"`
	Aviso    string `json:"warning"`
	CriadoEm string `json:"created_at"`
}

// AbrirPrivado opens the private beacon whose key is in
// dir/beacon-privado.json, creating it on first use with genesis = now
// truncated to the second. periodo (whole seconds; 1 s in production) is
// fixed at creation: reopening with another period is an error, since the
// round times, and so the chain, would change.
func AbrirPrivado(dir string, periodo time.Duration) (*Privado, error) {
	if periodo < time.Second || periodo%time.Second != 0 {
		return nil, fmt.Errorf("beacon: private beacon period %v is not a positive whole number of seconds", periodo)
	}
	caminho := filepath.Join(dir, ArquivoPrivado)
	if _, err := os.Stat(caminho); errors.Is(err, os.ErrNotExist) {
		if err := criarPrivado(dir, caminho, periodo); err != nil {
			return nil, err
		}
	}
	return lerPrivado(caminho, periodo)
}

// LerPrivado opens the private beacon whose key is in
// dir/beacon-privado.json at the period the file states, never creating
// one: for whoever needs its rounds' times beside the service (the bench).
func LerPrivado(dir string) (*Privado, error) {
	return lerPrivado(filepath.Join(dir, ArquivoPrivado), 0)
}

// lerPrivado reads and checks a key file; periodo 0 takes the file's.
func lerPrivado(caminho string, periodo time.Duration) (*Privado, error) {
	b, err := os.ReadFile(caminho)
	if err != nil {
		return nil, fmt.Errorf("beacon: private beacon key: %w", err)
	}
	var a arquivoPrivado
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("beacon: private beacon key %s: %w", caminho, err)
	}
	semente, err := hex.DecodeString(a.Semente)
	if err != nil || len(semente) < 32 {
		return nil, fmt.Errorf("beacon: private beacon key %s: seed is not 32+ bytes of hex", caminho)
	}
	if a.Esquema != Esquema {
		return nil, fmt.Errorf("beacon: private beacon key %s: scheme %q, want %q", caminho, a.Esquema, Esquema)
	}
	if periodo == 0 && a.Periodo > 0 {
		periodo = time.Duration(a.Periodo) * time.Second
	}
	if time.Duration(a.Periodo)*time.Second != periodo {
		return nil, fmt.Errorf("beacon: private beacon key %s has period %ds, asked for %v (the period is fixed when the key is created)", caminho, a.Periodo, periodo)
	}
	p := NovoPrivado(semente, a.Genesis, periodo)
	if a.Chave != "" && a.Chave != hex.EncodeToString(p.cadeia.ChavePublica) {
		return nil, fmt.Errorf("beacon: private beacon key %s: public key does not match the seed", caminho)
	}
	return p, nil
}

// criarPrivado writes a fresh key file without ever leaving a partial one,
// and without replacing one another process created meanwhile.
func criarPrivado(dir, caminho string, periodo time.Duration) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("beacon: private beacon dir: %w", err)
	}
	semente := make([]byte, 32)
	if _, err := rand.Read(semente); err != nil {
		return fmt.Errorf("beacon: private beacon seed: %w", err)
	}
	agora := time.Now()
	p := NovoPrivado(semente, agora.Unix(), periodo)
	b, err := json.MarshalIndent(arquivoPrivado{
		Esquema:  Esquema,
		Semente:  hex.EncodeToString(semente),
		Genesis:  p.cadeia.Genesis,
		Periodo:  int64(periodo / time.Second),
		Chave:    hex.EncodeToString(p.cadeia.ChavePublica),
		Hash:     p.cadeia.Hash,
		Aviso:    "secret: whoever holds this seed can compute every future round of this beacon",
		CriadoEm: agora.UTC().Format(time.RFC3339),
	}, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ArquivoPrivado+".*")
	if err != nil {
		return fmt.Errorf("beacon: private beacon key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("beacon: private beacon key: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("beacon: private beacon key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("beacon: private beacon key: %w", err)
	}
	// Link fails if the file exists: the first creator wins, the others
	// read its key.
	if err := os.Link(tmp.Name(), caminho); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("beacon: private beacon key: %w", err)
	}
	return nil
}

// NovoPrivado makes a private beacon from a seed (any length; 32 random
// bytes in production), a genesis in unix seconds and a period of whole
// seconds. The same seed always gives the same key; for tests.
func NovoPrivado(semente []byte, genesis int64, periodo time.Duration) *Privado {
	if periodo < time.Second {
		periodo = time.Second
	}
	periodo = periodo.Truncate(time.Second)
	p := &Privado{agora: time.Now}
	// 64 bytes reduced mod r: the bias is negligible (2^-256).
	h := sha512.Sum512(append([]byte("d6a beacon privado v1\x00"), semente...))
	p.sk.SetBytes(h[:])
	if p.sk.IsZero() == 1 {
		p.sk.SetOne() // probability 2^-255; keeps the key valid
	}
	var pk bls12381.G2
	pk.ScalarMult(&p.sk, bls12381.G2Generator())
	chave := pk.BytesCompressed()
	sementeGenesis := sha256.Sum256(chave) // drand's genesis seed is a group hash; this chain has one member
	p.cadeia = Cadeia{
		ChavePublica: chave,
		Periodo:      periodo,
		Genesis:      genesis,
		Hash:         hashCadeia(periodo, genesis, chave, sementeGenesis[:], IDPrivado),
		Esquema:      Esquema,
	}
	return p
}

// ComRelogio sets the clock the handler uses to decide what is published;
// for tests. It returns p.
func (p *Privado) ComRelogio(agora func() time.Time) *Privado {
	p.agora = agora
	return p
}

// Cadeia is the private chain's info.
func (p *Privado) Cadeia() Cadeia {
	c := p.cadeia
	c.ChavePublica = append([]byte(nil), c.ChavePublica...)
	return c
}

// Assinar signs round r: σ = sk·H(m), deterministic, so a round always has
// the same value. It signs any round, also future ones; Handler is what
// withholds rounds until they are due.
func (p *Privado) Assinar(r uint64) Rodada {
	var sig bls12381.G1
	sig.ScalarMult(&p.sk, hashRodada(r))
	s := sig.BytesCompressed()
	rnd := sha256.Sum256(s)
	return Rodada{Numero: r, Assinatura: s, Randomness: rnd[:]}
}

// Handler serves drand's HTTP API for the private chain:
//
//	GET /info, /public/latest, /public/{round}
//	GET /{hash}/info, /{hash}/public/{round}       (relay paths)
//	GET /v2/chains/{hash}/info, /v2/chains/{hash}/rounds/{round|latest}
//	GET /chains
//
// A round not yet published answers 425 Too Early, as drand's relays do;
// round 0 or a malformed round answers 400.
func (p *Privado) Handler() http.Handler {
	mux := http.NewServeMux()
	hash := p.cadeia.Hash
	info := func(w http.ResponseWriter, r *http.Request) {
		escreverJSON(w, http.StatusOK, "public, max-age=3600", p.cadeia)
	}
	infoV2 := func(w http.ResponseWriter, r *http.Request) {
		escreverJSON(w, http.StatusOK, "public, max-age=3600", map[string]any{
			"public_key":   hex.EncodeToString(p.cadeia.ChavePublica),
			"beacon_id":    IDPrivado,
			"period":       int64(p.cadeia.Periodo / time.Second),
			"scheme":       Esquema,
			"genesis_time": p.cadeia.Genesis,
			"chain_hash":   hash,
		})
	}
	rodada := func(w http.ResponseWriter, r *http.Request) {
		s := r.PathValue("round")
		agora := p.agora()
		var n uint64
		if s == "latest" {
			n = p.cadeia.UltimaEm(agora)
			if n == 0 {
				http.Error(w, "no round published yet: genesis is "+time.Unix(p.cadeia.Genesis, 0).UTC().Format(time.RFC3339), http.StatusTooEarly)
				return
			}
		} else {
			var err error
			n, err = strconv.ParseUint(s, 10, 64)
			if err != nil || n == 0 {
				http.Error(w, "round must be a positive integer", http.StatusBadRequest)
				return
			}
		}
		em := p.cadeia.PublicadaEm(n)
		if agora.Before(em) {
			w.Header().Set("Retry-After", strconv.FormatInt(int64(time.Until(em).Seconds())+1, 10))
			http.Error(w, fmt.Sprintf("round %d is published at %s", n, em.UTC().Format(time.RFC3339)), http.StatusTooEarly)
			return
		}
		cache := "public, max-age=31536000, immutable" // a published round never changes
		if s == "latest" {
			cache = "public, max-age=" + strconv.FormatInt(int64(p.cadeia.Periodo/time.Second), 10)
		}
		escreverJSON(w, http.StatusOK, cache, p.Assinar(n))
	}
	mux.HandleFunc("GET /info", info)
	mux.HandleFunc("GET /public/{round}", rodada)
	mux.HandleFunc("GET /"+hash+"/info", info)
	mux.HandleFunc("GET /"+hash+"/public/{round}", rodada)
	mux.HandleFunc("GET /v2/chains/"+hash+"/info", infoV2)
	mux.HandleFunc("GET /v2/chains/"+hash+"/rounds/{round}", rodada)
	mux.HandleFunc("GET /chains", func(w http.ResponseWriter, r *http.Request) {
		escreverJSON(w, http.StatusOK, "public, max-age=3600", []string{hash})
	})
	return mux
}

func escreverJSON(w http.ResponseWriter, status int, cache string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", cache)
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
