package httpapi

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/config"
)

// provedor is a local identity provider's JWKS endpoint whose key set the
// test rotates, and which can be taken down.
type provedor struct {
	srv    *httptest.Server
	mu     sync.Mutex
	chaves []map[string]any
	fora   atomic.Bool
	buscas atomic.Int64
}

func novoProvedor(t *testing.T) *provedor {
	t.Helper()
	p := &provedor{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.buscas.Add(1)
		if p.fora.Load() {
			http.Error(w, "fora do ar", http.StatusServiceUnavailable)
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": p.chaves})
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *provedor) publicar(chaves ...map[string]any) {
	p.mu.Lock()
	p.chaves = chaves
	p.mu.Unlock()
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// jwkRSA is the public JWK of k; alg "" leaves the member out.
func jwkRSA(k *rsa.PrivateKey, kid, alg string) map[string]any {
	m := map[string]any{"kty": "RSA", "kid": kid, "use": "sig", "n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
	if alg != "" {
		m["alg"] = alg
	}
	return m
}

func jwkEC(k *ecdsa.PrivateKey, kid string) map[string]any {
	pub, _ := k.PublicKey.ECDH()
	raw := pub.Bytes() // 0x04 ‖ X ‖ Y
	return map[string]any{"kty": "EC", "kid": kid, "crv": "P-256", "x": b64(raw[1:33]), "y": b64(raw[33:])}
}

// assinarKid signs claims with key under kid.
func assinarKid(t *testing.T, m jwt.SigningMethod, kid string, c jwt.MapClaims, key crypto.Signer) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, c)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func servidorJWKS(t *testing.T, p *provedor, o OpcoesJWKS) servidor {
	t.Helper()
	return novoServidor(t, func(op *Options) {
		op.Config = config.Config{JWTJWKSURL: p.srv.URL}
		op.Contexto = t.Context()
		op.JWKS = o
	})
}

// ate polls cond until it holds, failing after 15 s.
func ateQue(t *testing.T, oque string, cond func() bool) {
	t.Helper()
	fim := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(fim) {
			t.Fatalf("timed out waiting for %s", oque)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// D6A_JWT_JWKS_URL: keys cached and refreshed, a new kid fetched on first
// sight, a removed key refused even for a token verified before, each key
// pinned to its algorithm, and the cached keys still serve while the
// provider is down.
func TestJWKSRotacao(t *testing.T) {
	t.Parallel()
	k1, _ := rsa.GenerateKey(rand.Reader, 2048)
	k2, _ := rsa.GenerateKey(rand.Reader, 2048)
	k3, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p := novoProvedor(t)
	p.publicar(jwkRSA(k1, "k1", "RS256"))
	s := servidorJWKS(t, p, OpcoesJWKS{Refresh: 200 * time.Millisecond, Desconhecido: 50 * time.Millisecond})

	sub := uuid.New()
	t1 := assinarKid(t, jwt.SigningMethodRS256, "k1", claims(sub), k1)
	if r := s.situacao(t, t1); r.status != 200 {
		t.Fatalf("k1 token: %d %s", r.status, r.body)
	}
	// Pinned: the same key under another algorithm, and no kid.
	s.situacao(t, assinarKid(t, jwt.SigningMethodPS256, "k1", claims(sub), k1)).erro(t, 401)
	s.situacao(t, assinar(t, jwt.SigningMethodRS256, claims(sub), k1)).erro(t, 401)
	// A kid the provider has not published yet.
	t2 := assinarKid(t, jwt.SigningMethodRS256, "k2", claims(sub), k2)
	s.situacao(t, t2).erro(t, 401)

	// Rotation: k2 (no "alg": RSA means RS256) and an EC key join.
	p.publicar(jwkRSA(k1, "k1", "RS256"), jwkRSA(k2, "k2", ""), jwkEC(k3, "k3"))
	ateQue(t, "the new kid k2 accepted", func() bool { return s.situacao(t, t2).status == 200 })
	s.situacao(t, assinarKid(t, jwt.SigningMethodRS384, "k2", claims(sub), k2)).erro(t, 401)
	if r := s.situacao(t, assinarKid(t, jwt.SigningMethodES256, "k3", claims(sub), k3)); r.status != 200 {
		t.Fatalf("k3 ES256 token: %d %s", r.status, r.body)
	}
	// An EC signature under the RSA key's kid.
	s.situacao(t, assinarKid(t, jwt.SigningMethodES256, "k2", claims(sub), k3)).erro(t, 401)
	// HS256 with the public key's bytes as the secret (alg confusion).
	hs := jwt.NewWithClaims(jwt.SigningMethodHS256, claims(sub))
	hs.Header["kid"] = "k2"
	conf, _ := hs.SignedString(k2.N.Bytes())
	s.situacao(t, conf).erro(t, 401)

	// k1 removed: its token, verified and cached above, is refused once
	// the set is refreshed.
	p.publicar(jwkRSA(k2, "k2", ""), jwkEC(k3, "k3"))
	ateQue(t, "the removed key k1 refused", func() bool { return s.situacao(t, t1).status == 401 })
	if r := s.situacao(t, t2); r.status != 200 {
		t.Fatalf("k2 after k1's removal: %d", r.status)
	}

	// Provider down: several refresh periods later the cached keys still
	// verify, a token seen before and a new one alike.
	p.fora.Store(true)
	antes := p.buscas.Load()
	ateQue(t, "refreshes failing", func() bool { return p.buscas.Load() >= antes+3 })
	if r := s.situacao(t, t2); r.status != 200 {
		t.Fatalf("cached token with the provider down: %d %s", r.status, r.body)
	}
	novo := assinarKid(t, jwt.SigningMethodRS256, "k2", claims(uuid.New()), k2)
	if r := s.situacao(t, novo); r.status != 200 {
		t.Fatalf("new token with the provider down: %d %s", r.status, r.body)
	}
}

// Unknown kids cannot make d6a hammer the provider: one extra fetch per
// Desconhecido at most, and each refused request is answered at once.
func TestJWKSKidDesconhecidoLimitado(t *testing.T) {
	t.Parallel()
	k, _ := rsa.GenerateKey(rand.Reader, 2048)
	p := novoProvedor(t)
	p.publicar(jwkRSA(k, "k", "RS256"))
	s := servidorJWKS(t, p, OpcoesJWKS{Refresh: time.Hour, Desconhecido: time.Hour})
	ateQue(t, "first fetch", func() bool { return p.buscas.Load() >= 1 })
	for i := range 30 {
		s.situacao(t, assinarKid(t, jwt.SigningMethodRS256, "inventado-"+string(rune('a'+i)), claims(uuid.New()), k)).erro(t, 401)
	}
	if n := p.buscas.Load(); n > 2 {
		t.Fatalf("%d fetches for 30 unknown kids, want at most 2 (start + one rate-limited refresh)", n)
	}
}

// The verified-token cache is bounded and forgets a token at its exp.
func TestTokensVerificadosLimitadoEExpira(t *testing.T) {
	agoraT := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	relogio := agoraT
	c := novosTokensVerificados(3, func() time.Time { return relogio })
	for i := range 10 {
		c.guardar(sha256.Sum256([]byte{byte(i)}), tokenVerificado{ate: agoraT.Add(time.Duration(i+1) * time.Minute)})
		if n := c.tamanho(); n > 3 {
			t.Fatalf("%d entries, bound 3", n)
		}
	}
	h := sha256.Sum256([]byte("x"))
	c.guardar(h, tokenVerificado{ate: agoraT.Add(time.Minute)})
	if _, ok := c.ler(h); !ok {
		t.Fatal("fresh entry not found")
	}
	relogio = agoraT.Add(time.Minute)
	if _, ok := c.ler(h); ok {
		t.Fatal("entry used at its expiry")
	}
}

// A fetched key set longer than MaxBytes is not loaded: the keys cached
// before it keep verifying, the new ones are not used.
func TestJWKSLimitado(t *testing.T) {
	t.Parallel()
	k1, _ := rsa.GenerateKey(rand.Reader, 2048)
	k2, _ := rsa.GenerateKey(rand.Reader, 2048)
	p := novoProvedor(t)
	p.publicar(jwkRSA(k1, "k1", "RS256")) // about 450 bytes
	s := servidorJWKS(t, p, OpcoesJWKS{Refresh: 50 * time.Millisecond, Desconhecido: time.Hour, MaxBytes: 700})
	t1 := assinarKid(t, jwt.SigningMethodRS256, "k1", claims(uuid.New()), k1)
	if r := s.situacao(t, t1); r.status != 200 {
		t.Fatalf("k1 token: %d %s", r.status, r.body)
	}
	p.publicar(jwkRSA(k1, "k1", "RS256"), jwkRSA(k2, "k2", "RS256"))
	antes := p.buscas.Load()
	ateQue(t, "two refreshes of the longer set", func() bool { return p.buscas.Load() >= antes+2 })
	s.situacao(t, assinarKid(t, jwt.SigningMethodRS256, "k2", claims(uuid.New()), k2)).erro(t, 401)
	if r := s.situacao(t, assinarKid(t, jwt.SigningMethodRS256, "k1", claims(uuid.New()), k1)); r.status != 200 {
		t.Fatalf("k1 after a set over the bound: %d %s", r.status, r.body)
	}
}

// The verified-token and key caches count their hits and misses on
// /metrics, and D6A_TOKENS_CACHE (Config.TokensCache) bounds the first.
func TestCachesDoTokenNasMetricas(t *testing.T) {
	t.Parallel()
	k, _ := rsa.GenerateKey(rand.Reader, 2048)
	p := novoProvedor(t)
	p.publicar(jwkRSA(k, "k", "RS256"))
	s := novoServidor(t, func(op *Options) {
		op.Config = config.Config{JWTJWKSURL: p.srv.URL, TokensCache: 1}
		op.Contexto = t.Context()
		op.JWKS = OpcoesJWKS{Desconhecido: time.Hour}
		op.Metrics = newMetrics(op.Store)
	})
	a := assinarKid(t, jwt.SigningMethodRS256, "k", claims(uuid.New()), k)
	b := assinarKid(t, jwt.SigningMethodRS256, "k", claims(uuid.New()), k)
	for _, tok := range []string{a, a, b, a} { // the second a hits; b pushes a out
		if r := s.situacao(t, tok); r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	}
	s.situacao(t, assinarKid(t, jwt.SigningMethodRS256, "outra", claims(uuid.New()), k)).erro(t, 401)
	body := string(s.get(t, RotaMetrics).body)
	for _, want := range []string{
		`d6a_tokens_cache_total{resultado="hit"} 1`, `d6a_tokens_cache_total{resultado="miss"} 4`,
		`d6a_jwks_cache_total{resultado="hit"} 3`, `d6a_jwks_cache_total{resultado="miss"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
