package httpapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/metrics"
)

// Leeway is the clock skew tolerated on exp and nbf. Ten seconds absorbs the
// drift between the identity provider's clock and ours without extending a
// session token's life in any way that matters (CONTRACT §6: expired → 401).
const Leeway = 10 * time.Second

// DuracaoMaxToken is the longest a session token may live, iat (or, without
// it, now) to exp, when Config.JWTDuracaoMax is 0: identity providers issue
// session tokens of minutes to hours, so a longer one is a mistake or a
// token minted to outlive its revocation.
const DuracaoMaxToken = 24 * time.Hour

// minHMACKey is the key length RFC 7518 §3.2 asks of HS256; a shorter
// D6A_JWT_SECRET still works but is logged as weak.
const minHMACKey = 32

// minRSABits refuses RSA keys that no longer resist factoring.
const minRSABits = 2048

// Why a token was refused. The messages go into {"erro": …} of the 401; they
// name the class of failure, never the key or the expected claims' values.
var (
	errSemToken      = errors.New("token ausente")
	errTokenMalform  = errors.New("token malformado")
	errTokenExpirado = errors.New("token expirado")
	errTokenInvalido = errors.New("token inválido")
	errSubInvalido   = errors.New("token sem sub válido (UUID do cidadão)")
)

// autenticador checks the session JWT of the situacao route (CONTRACT §6).
// A nil parser means no key is configured: the route then answers 503.
type autenticador struct {
	parser  *jwt.Parser
	key     any
	metodos []string
	// jwks, when set, replaces key: the identity provider's key set.
	jwks *chavesJWKS
	// tokens remembers verified tokens until their exp (nil: off).
	tokens *tokensVerificados
	now    func() time.Time
	// duracaoMax caps a token's life (DuracaoMaxToken).
	duracaoMax time.Duration
}

// novoAutenticador builds the verifier from the configuration. The accepted
// algorithms are pinned by the key the operator configured, never taken from
// the token's header: HS256 for D6A_JWT_SECRET; for D6A_JWT_PUBLIC_KEY_FILE,
// RS256 for an RSA key, ES256/ES384/ES512 for a P-256/P-384/P-521 key and
// EdDSA for an Ed25519 key. That closes alg "none" and the HS/RS confusion
// (a token signed with the public key's bytes as an HMAC secret).
func novoAutenticador(ctx context.Context, cfg config.Config, now func() time.Time, oj OpcoesJWKS, cacheTokens int) (*autenticador, error) {
	a := &autenticador{now: now, duracaoMax: cfg.JWTDuracaoMax}
	if a.duracaoMax <= 0 {
		a.duracaoMax = DuracaoMaxToken
	}
	n := 0
	for _, v := range []string{cfg.JWTSecret, cfg.JWTPublicKeyFile, cfg.JWTJWKSURL} {
		if v != "" {
			n++
		}
	}
	switch {
	case n > 1:
		return nil, errors.New("set only one of D6A_JWT_SECRET, D6A_JWT_PUBLIC_KEY_FILE and D6A_JWT_JWKS_URL")
	case cfg.JWTJWKSURL != "":
		if err := config.URLJWKSSegura(cfg.JWTJWKSURL); err != nil {
			return nil, fmt.Errorf("D6A_JWT_JWKS_URL: %w", err)
		}
		var err error
		if a.jwks, err = novasChavesJWKS(ctx, cfg.JWTJWKSURL, oj); err != nil {
			return nil, err
		}
		a.metodos = metodosJWKS
	case cfg.JWTSecret != "":
		if len(cfg.JWTSecret) < minHMACKey {
			slog.Warn("D6A_JWT_SECRET tem menos de 32 bytes; chaves HS256 devem ter ao menos 32 bytes aleatórios")
		}
		a.key = []byte(cfg.JWTSecret)
		a.metodos = []string{jwt.SigningMethodHS256.Alg()}
	case cfg.JWTPublicKeyFile != "":
		key, metodo, err := lerChavePublica(cfg.JWTPublicKeyFile)
		if err != nil {
			return nil, fmt.Errorf("D6A_JWT_PUBLIC_KEY_FILE: %w", err)
		}
		a.key = key
		a.metodos = []string{metodo}
	default:
		slog.Warn("nenhum de D6A_JWT_SECRET, D6A_JWT_PUBLIC_KEY_FILE, D6A_JWT_JWKS_URL definido: as rotas situacao e admin respondem 503")
		return a, nil
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(a.metodos),
		jwt.WithExpirationRequired(),
		// An iat in the future is refused, so it cannot stretch the cap
		// below.
		jwt.WithIssuedAt(),
		jwt.WithLeeway(Leeway),
		jwt.WithTimeFunc(now),
	}
	if cfg.JWTIssuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.JWTIssuer))
	}
	if cfg.JWTAudience != "" {
		opts = append(opts, jwt.WithAudience(cfg.JWTAudience))
	}
	a.parser = jwt.NewParser(opts...)
	a.tokens = novosTokensVerificados(cacheTokens, now)
	return a, nil
}

// contarEm points the token and key caches' hits and misses at m's
// d6a_tokens_cache_total and d6a_jwks_cache_total.
func (a *autenticador) contarEm(m *metrics.Metrics) {
	if a.tokens != nil {
		a.tokens.contarEm(m.TokensCache)
	}
	if a.jwks != nil {
		a.jwks.contarEm(m.JWKSCache)
	}
}

// configurado reports whether a key is set.
func (a *autenticador) configurado() bool { return a.parser != nil }

// cidadao checks the Authorization header and returns the token's subject,
// the cidadao_id whose data the caller may see.
func (a *autenticador) cidadao(authorization string) (uuid.UUID, error) {
	claims, err := a.verificar(authorization)
	if err != nil {
		return uuid.Nil, err
	}
	// Only the canonical 36-character form: uuid.Parse also takes braces,
	// "urn:uuid:" and bare hex, which no identity provider emits as sub.
	if len(claims.Subject) != 36 {
		return uuid.Nil, errSubInvalido
	}
	id, err := uuid.Parse(claims.Subject)
	if err != nil || id == uuid.Nil {
		return uuid.Nil, errSubInvalido
	}
	return id, nil
}

// verificar checks the Authorization header's bearer token and returns its
// claims, or one of the errors above when it is missing, malformed,
// expired or invalid. A token verified before is taken from the cache
// until its exp.
func (a *autenticador) verificar(authorization string) (claimsSessao, error) {
	raw, ok := bearer(authorization)
	if !ok {
		if strings.TrimSpace(authorization) == "" {
			return claimsSessao{}, errSemToken
		}
		return claimsSessao{}, errTokenMalform
	}
	var h [sha256.Size]byte
	if a.tokens != nil {
		h = sha256.Sum256([]byte(raw))
		e, ok := a.tokens.ler(h)
		valido := ok && (a.jwks == nil || a.jwks.aindaValida(e.kid, e.key))
		a.tokens.contar(valido)
		if valido {
			return e.claims, nil
		}
		if ok {
			a.tokens.esquecer(h)
		}
	}
	var claims claimsSessao
	var usada any
	t, err := a.parser.ParseWithClaims(raw, &claims, func(t *jwt.Token) (any, error) {
		k, err := a.chave(t)
		usada = k
		return k, err
	})
	switch {
	case err == nil:
	case errors.Is(err, jwt.ErrTokenMalformed):
		return claimsSessao{}, errTokenMalform
	case errors.Is(err, jwt.ErrTokenExpired):
		return claimsSessao{}, errTokenExpirado
	default:
		// Bad signature, wrong algorithm, missing exp, future nbf, wrong
		// issuer or audience: one answer, so a caller cannot probe which.
		return claimsSessao{}, errTokenInvalido
	}
	if !a.vidaAceitavel(claims.RegisteredClaims) {
		return claimsSessao{}, errTokenInvalido
	}
	if a.tokens != nil && claims.ExpiresAt != nil {
		kid, _ := t.Header["kid"].(string)
		a.tokens.guardar(h, tokenVerificado{claims: claims, ate: claims.ExpiresAt.Add(Leeway), kid: kid, key: usada})
	}
	return claims, nil
}

// vidaAceitavel caps the token's life at duracaoMax: from its iat, or from
// now when it has none (the parser has already required exp).
func (a *autenticador) vidaAceitavel(c jwt.RegisteredClaims) bool {
	if c.ExpiresAt == nil {
		return false
	}
	inicio := a.now()
	if c.IssuedAt != nil {
		inicio = c.IssuedAt.Time
	}
	return c.ExpiresAt.Sub(inicio) <= a.duracaoMax+Leeway
}

// chave hands the parser the configured key. WithValidMethods has already
// refused any other algorithm; the type check is a second lock on the door.
func (a *autenticador) chave(t *jwt.Token) (any, error) {
	if a.jwks != nil {
		return a.jwks.chave(t)
	}
	switch t.Method.(type) {
	case *jwt.SigningMethodHMAC:
		if _, ok := a.key.([]byte); ok {
			return a.key, nil
		}
	case *jwt.SigningMethodRSA:
		if _, ok := a.key.(*rsa.PublicKey); ok {
			return a.key, nil
		}
	case *jwt.SigningMethodECDSA:
		if _, ok := a.key.(*ecdsa.PublicKey); ok {
			return a.key, nil
		}
	case *jwt.SigningMethodEd25519:
		if _, ok := a.key.(ed25519.PublicKey); ok {
			return a.key, nil
		}
	}
	return nil, errTokenInvalido
}

// bearer extracts the token of "Bearer <token>"; the scheme is
// case-insensitive (RFC 7235 §2.1).
func bearer(h string) (string, bool) {
	const scheme = "bearer "
	if len(h) <= len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		return "", false
	}
	tok := strings.TrimSpace(h[len(scheme):])
	if tok == "" || strings.ContainsAny(tok, " \t") {
		return "", false
	}
	return tok, true
}

// lerChavePublica reads a PEM public key ("PUBLIC KEY", "RSA PUBLIC KEY" or a
// certificate) and returns it with the one algorithm it verifies.
func lerChavePublica(path string) (any, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, "", errors.New("no PEM block found")
	}
	var key any
	switch block.Type {
	case "PUBLIC KEY":
		key, err = x509.ParsePKIXPublicKey(block.Bytes)
	case "RSA PUBLIC KEY":
		key, err = x509.ParsePKCS1PublicKey(block.Bytes)
	case "CERTIFICATE":
		var cert *x509.Certificate
		if cert, err = x509.ParseCertificate(block.Bytes); err == nil {
			key = cert.PublicKey
		}
	default:
		return nil, "", fmt.Errorf("PEM block %q is not a public key (want PUBLIC KEY, RSA PUBLIC KEY or CERTIFICATE)", block.Type)
	}
	if err != nil {
		return nil, "", fmt.Errorf("parse %s: %w", block.Type, err)
	}
	switch k := key.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < minRSABits {
			return nil, "", fmt.Errorf("RSA key of %d bits; at least %d required", k.N.BitLen(), minRSABits)
		}
		return k, jwt.SigningMethodRS256.Alg(), nil
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return k, jwt.SigningMethodES256.Alg(), nil
		case elliptic.P384():
			return k, jwt.SigningMethodES384.Alg(), nil
		case elliptic.P521():
			return k, jwt.SigningMethodES512.Alg(), nil
		}
		return nil, "", fmt.Errorf("ECDSA curve %s not supported (want P-256, P-384 or P-521)", k.Curve.Params().Name)
	case ed25519.PublicKey:
		return k, jwt.SigningMethodEdDSA.Alg(), nil
	}
	return nil, "", fmt.Errorf("key type %T not supported (want RSA, ECDSA or Ed25519)", key)
}

// TokenSessao signs an HS256 session token that this server accepts when
// configured with secret: sub, iat and exp = emitido+ttl, plus iss and aud
// when not empty. It exists for development and tests (d6a token); in
// production the identity provider issues the tokens.
func TokenSessao(secret string, sub uuid.UUID, emitido time.Time, ttl time.Duration, iss, aud string) (string, error) {
	return TokenComPapel(secret, sub.String(), "", emitido, ttl, iss, aud)
}

// TokenComPapel is TokenSessao with any sub and, when papel is not empty,
// the "papel" claim ("admin" opens the administration routes).
func TokenComPapel(secret, sub, papel string, emitido time.Time, ttl time.Duration, iss, aud string) (string, error) {
	if secret == "" {
		return "", errors.New("empty HS256 secret")
	}
	if ttl <= 0 {
		return "", errors.New("ttl must be positive")
	}
	c := claimsSessao{RegisteredClaims: jwt.RegisteredClaims{
		Subject:   sub,
		IssuedAt:  jwt.NewNumericDate(emitido),
		ExpiresAt: jwt.NewNumericDate(emitido.Add(ttl)),
		Issuer:    iss,
	}, Papel: papel}
	if aud != "" {
		c.Audience = jwt.ClaimStrings{aud}
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte(secret))
}
