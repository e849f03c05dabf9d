package httpapi

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"
)

// Defaults of the identity provider's key set (D6A_JWT_JWKS_URL).
const (
	// JWKSRefresh is how often the key set is fetched again: providers
	// rotate daily or weekly and publish the next key ahead of use.
	JWKSRefresh = time.Hour
	// JWKSDesconhecido spaces the extra fetches an unknown kid triggers, so
	// tokens with invented kids cannot make us hammer the provider.
	JWKSDesconhecido = time.Minute
	// JWKSTimeout bounds one fetch.
	JWKSTimeout = 5 * time.Second
	// jwksEsperaLimite is how long a request waits for the rate limiter
	// before its unknown kid is refused: a request never queues behind it.
	jwksEsperaLimite = 50 * time.Millisecond
	// JWKSMaxBytes bounds the key set a fetch may bring, and so the key
	// cache, which holds the last set fetched and nothing else: providers
	// publish a few keys of under a KiB each.
	JWKSMaxBytes = 1 << 20
)

// metodosJWKS are the algorithms a JWKS key may verify; each key is then
// pinned to exactly one of them (chaveJWKS).
var metodosJWKS = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// OpcoesJWKS tune the key-set client; the zero value takes the defaults.
type OpcoesJWKS struct {
	Refresh      time.Duration
	Desconhecido time.Duration
	Timeout      time.Duration
	Client       *http.Client
	// MaxBytes bounds a fetched key set (JWKSMaxBytes when ≤ 0); a larger
	// one fails the fetch, which keeps the keys cached before it.
	MaxBytes int64
}

// chavesJWKS is the identity provider's key set, kept by keyfunc/jwkset:
// fetched at start (a provider that is down then is retried on the
// schedule), refreshed every Refresh, refreshed on an unknown kid at most
// once per Desconhecido, and kept as it was when a refresh fails, so
// sessions go on being verified with the cached keys while the provider is
// down.
type chavesJWKS struct {
	kf keyfunc.Keyfunc
	contador
}

func novasChavesJWKS(ctx context.Context, url string, o OpcoesJWKS) (*chavesJWKS, error) {
	if o.Refresh <= 0 {
		o.Refresh = JWKSRefresh
	}
	if o.Desconhecido <= 0 {
		o.Desconhecido = JWKSDesconhecido
	}
	if o.Timeout <= 0 {
		o.Timeout = JWKSTimeout
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = JWKSMaxBytes
	}
	cliente := http.Client{}
	if o.Client != nil {
		cliente = *o.Client
	}
	cliente.Transport = corpoLimitado{rt: cliente.Transport, max: o.MaxBytes}
	semErro := true
	kf, err := keyfunc.NewDefaultOverrideCtx(ctx, []string{url}, keyfunc.Override{
		Client:                    &cliente,
		HTTPTimeout:               o.Timeout,
		NoErrorReturnFirstHTTPReq: &semErro,
		RateLimitWaitMax:          jwksEsperaLimite,
		RefreshInterval:           o.Refresh,
		RefreshUnknownKID:         rate.NewLimiter(rate.Every(o.Desconhecido), 1),
		RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
			return func(ctx context.Context, err error) {
				slog.Warn("JWKS: falha ao atualizar as chaves; seguem as chaves em cache", "url", u, "erro", err)
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("D6A_JWT_JWKS_URL: %w", err)
	}
	return &chavesJWKS{kf: kf}, nil
}

// chave returns the key of the token's kid, pinned to one algorithm: the
// JWK's "alg" when it has one, else the one its type and curve imply (RSA →
// RS256, P-256 → ES256, P-384 → ES384, P-521 → ES512, Ed25519 → EdDSA). A
// token naming another algorithm, or no kid, is refused; symmetric keys in
// the set are never used.
func (c *chavesJWKS) chave(t *jwt.Token) (any, error) {
	kid, _ := t.Header[jwkset.HeaderKID].(string)
	if kid == "" {
		return nil, errTokenInvalido
	}
	jwk, err := c.ler(kid)
	if err != nil {
		return nil, errTokenInvalido
	}
	key := jwk.Key()
	alg := jwk.Marshal().ALG.String()
	if alg == "" {
		if alg = algDaChave(key); alg == "" {
			return nil, errTokenInvalido
		}
	}
	if t.Method.Alg() != alg || !chaveServe(key, t.Method) {
		return nil, errTokenInvalido
	}
	return key, nil
}

// algDaChave is the one algorithm a key without "alg" verifies.
func algDaChave(key any) string {
	switch k := key.(type) {
	case *rsa.PublicKey:
		return "RS256"
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return "ES256"
		case elliptic.P384():
			return "ES384"
		case elliptic.P521():
			return "ES512"
		}
	case ed25519.PublicKey:
		return "EdDSA"
	}
	return ""
}

// chaveServe is the type check of autenticador.chave: the method and the
// key agree (an RSA key never verifies an HMAC).
func chaveServe(key any, m jwt.SigningMethod) bool {
	switch m.(type) {
	case *jwt.SigningMethodRSA, *jwt.SigningMethodRSAPSS:
		k, ok := key.(*rsa.PublicKey)
		return ok && k.N.BitLen() >= minRSABits
	case *jwt.SigningMethodECDSA:
		_, ok := key.(*ecdsa.PublicKey)
		return ok
	case *jwt.SigningMethodEd25519:
		_, ok := key.(ed25519.PublicKey)
		return ok
	}
	return false
}

// aindaValida reports whether the key that verified a cached token is still
// in the set under its kid (a key removed by a rotation invalidates what it
// signed, cached or not).
func (c *chavesJWKS) aindaValida(kid string, key any) bool {
	jwk, err := c.kf.Storage().KeyRead(context.Background(), kid)
	if err != nil {
		return false
	}
	k, ok := jwk.Key().(interface{ Equal(x crypto.PublicKey) bool })
	return ok && k.Equal(key)
}

// ler finds kid's key, counting whether the cached set had it: KeyRead
// alone would fetch the set again for an unknown kid and not say so.
func (c *chavesJWKS) ler(kid string) (jwkset.JWK, error) {
	ctx := context.Background()
	todas, err := c.kf.Storage().KeyReadAll(ctx)
	if err == nil {
		for _, j := range todas {
			if j.Marshal().KID == kid {
				c.contar(true)
				return j, nil
			}
		}
	}
	c.contar(false)
	return c.kf.Storage().KeyRead(ctx, kid)
}

// corpoLimitado fails a response body longer than max (JWKSMaxBytes).
type corpoLimitado struct {
	rt  http.RoundTripper
	max int64
}

func (l corpoLimitado) RoundTrip(r *http.Request) (*http.Response, error) {
	rt := l.rt
	if rt == nil {
		rt = http.DefaultTransport
	}
	res, err := rt.RoundTrip(r)
	if err == nil {
		res.Body = http.MaxBytesReader(nil, res.Body, l.max)
	}
	return res, err
}
