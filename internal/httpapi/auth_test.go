package httpapi

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/config"
)

// CONTRACT §6: 401 for a missing, malformed, expired or wrongly signed
// token, alg "none" included, always as {"erro": …}.
func TestAuthHS256Recusa(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, func(o *Options) {
		o.Config.JWTIssuer = "https://login.exemplo.gov.br"
		o.Config.JWTAudience = "d6a"
	})
	sub := uuid.New()
	valido := func() jwt.MapClaims {
		c := claims(sub)
		c["iss"] = "https://login.exemplo.gov.br"
		c["aud"] = "d6a"
		return c
	}
	com := func(mudar func(jwt.MapClaims)) string {
		c := valido()
		mudar(c)
		return assinar(t, jwt.SigningMethodHS256, c, []byte(segredo))
	}
	none := assinar(t, jwt.SigningMethodNone, valido(), jwt.UnsafeAllowNoneSignatureType)
	hs512 := assinar(t, jwt.SigningMethodHS512, valido(), []byte(segredo))
	bom := assinar(t, jwt.SigningMethodHS256, valido(), []byte(segredo))

	casos := []struct {
		nome          string
		authorization string
	}{
		{"sem cabeçalho", ""},
		{"esquema Basic", "Basic dXNlcjpwYXNz"},
		{"Bearer vazio", "Bearer "},
		{"malformado", "Bearer abc.def"},
		{"lixo", "Bearer " + strings.Repeat("x", 300)},
		{"alg none", "Bearer " + none},
		{"alg none sem assinatura com ponto final", "Bearer " + strings.TrimSuffix(none, ".") + "."},
		{"HS512 com o mesmo segredo", "Bearer " + hs512},
		{"chave errada", "Bearer " + assinar(t, jwt.SigningMethodHS256, valido(), []byte("outro-segredo-com-mais-de-32-bytes!!"))},
		{"assinatura adulterada", "Bearer " + bom[:len(bom)-4] + "AAAA"},
		{"expirado", "Bearer " + com(func(c jwt.MapClaims) { c["exp"] = agora.Add(-time.Minute).Unix() })},
		{"sem exp", "Bearer " + com(func(c jwt.MapClaims) { delete(c, "exp") })},
		{"nbf no futuro", "Bearer " + com(func(c jwt.MapClaims) { c["nbf"] = agora.Add(time.Minute).Unix() })},
		{"sub não UUID", "Bearer " + com(func(c jwt.MapClaims) { c["sub"] = "maria@example.com" })},
		{"sub UUID sem hífens", "Bearer " + com(func(c jwt.MapClaims) { c["sub"] = strings.ReplaceAll(sub.String(), "-", "") })},
		{"sub ausente", "Bearer " + com(func(c jwt.MapClaims) { delete(c, "sub") })},
		{"sub nulo", "Bearer " + com(func(c jwt.MapClaims) { c["sub"] = uuid.Nil.String() })},
		{"emissor errado", "Bearer " + com(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" })},
		{"sem emissor", "Bearer " + com(func(c jwt.MapClaims) { delete(c, "iss") })},
		{"audiência errada", "Bearer " + com(func(c jwt.MapClaims) { c["aud"] = "outra-colonia" })},
		{"sem audiência", "Bearer " + com(func(c jwt.MapClaims) { delete(c, "aud") })},
		// The life cap (DuracaoMaxToken): from iat, or from now without it.
		{"vida de 25 h", "Bearer " + com(func(c jwt.MapClaims) { c["exp"] = agora.Add(25*time.Hour - time.Minute).Unix() })},
		{"vida longa sem iat", "Bearer " + com(func(c jwt.MapClaims) { delete(c, "iat"); c["exp"] = agora.Add(48 * time.Hour).Unix() })},
		{"iat no futuro", "Bearer " + com(func(c jwt.MapClaims) { c["iat"] = agora.Add(time.Hour).Unix() })},
	}
	for _, c := range casos {
		t.Run(c.nome, func(t *testing.T) {
			r := s.get(t, RotaSituacao, "Authorization", c.authorization)
			r.erro(t, 401)
			if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
			}
		})
	}

	t.Run("válido", func(t *testing.T) {
		if r := s.situacao(t, bom); r.status != 200 {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
	})
	t.Run("esquema em minúsculas e aud em lista", func(t *testing.T) {
		tok := com(func(c jwt.MapClaims) { c["aud"] = []string{"outra", "d6a"} })
		if r := s.get(t, RotaSituacao, "Authorization", "bearer "+tok); r.status != 200 {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
	})
	t.Run("vida de 24 h", func(t *testing.T) {
		tok := com(func(c jwt.MapClaims) { c["exp"] = agora.Add(24*time.Hour - time.Minute).Unix() })
		if r := s.situacao(t, tok); r.status != 200 {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
	})
	t.Run("expirado dentro da tolerância", func(t *testing.T) {
		tok := com(func(c jwt.MapClaims) { c["exp"] = agora.Add(-Leeway / 2).Unix() })
		if r := s.situacao(t, tok); r.status != 200 {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
	})
}

type chaves struct {
	rsa      *rsa.PrivateKey
	rsaPEM   []byte
	ec       *ecdsa.PrivateKey
	ecPEM    []byte
	ed       ed25519.PrivateKey
	edPEM    []byte
	rsaFraca []byte
}

var (
	chavesOnce sync.Once
	chavesTest chaves
)

func gerarChaves(t testing.TB) chaves {
	t.Helper()
	chavesOnce.Do(func() {
		var c chaves
		var err error
		if c.rsa, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		c.rsaPEM = pemPublica(c.rsa.Public())
		if c.ec, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			panic(err)
		}
		c.ecPEM = pemPublica(c.ec.Public())
		if _, c.ed, err = ed25519.GenerateKey(rand.Reader); err != nil {
			panic(err)
		}
		c.edPEM = pemPublica(c.ed.Public())
		fraca, err := rsa.GenerateKey(rand.Reader, 1024)
		if err != nil {
			panic(err)
		}
		c.rsaFraca = pemPublica(fraca.Public())
		chavesTest = c
	})
	return chavesTest
}

func pemPublica(k crypto.PublicKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func arquivo(t testing.TB, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "chave.pem")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAuthChavePublica(t *testing.T) {
	t.Parallel()
	k := gerarChaves(t)
	outraEC, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sub := uuid.New()
	casos := []struct {
		nome   string
		pem    []byte
		valido string
		ruins  map[string]string
	}{
		{
			nome:   "RSA",
			pem:    k.rsaPEM,
			valido: assinar(t, jwt.SigningMethodRS256, claims(sub), k.rsa),
			ruins: map[string]string{
				// The classic confusion: HS256 keyed with the public key's PEM.
				"HS256 com o PEM público como segredo": assinar(t, jwt.SigningMethodHS256, claims(sub), k.rsaPEM),
				"HS256 com o segredo":                  tokenHS(t, sub),
				"alg none":                             assinar(t, jwt.SigningMethodNone, claims(sub), jwt.UnsafeAllowNoneSignatureType),
				"PS256 com a chave certa":              assinar(t, jwt.SigningMethodPS256, claims(sub), k.rsa),
				"ES256 com outra chave":                assinar(t, jwt.SigningMethodES256, claims(sub), outraEC),
			},
		},
		{
			nome:   "ECDSA P-256",
			pem:    k.ecPEM,
			valido: assinar(t, jwt.SigningMethodES256, claims(sub), k.ec),
			ruins: map[string]string{
				"HS256 com o PEM público como segredo": assinar(t, jwt.SigningMethodHS256, claims(sub), k.ecPEM),
				"ES256 com outra chave":                assinar(t, jwt.SigningMethodES256, claims(sub), outraEC),
				"RS256":                                assinar(t, jwt.SigningMethodRS256, claims(sub), k.rsa),
			},
		},
		{
			nome:   "Ed25519",
			pem:    k.edPEM,
			valido: assinar(t, jwt.SigningMethodEdDSA, claims(sub), k.ed),
			ruins: map[string]string{
				"HS256 com o PEM público como segredo": assinar(t, jwt.SigningMethodHS256, claims(sub), k.edPEM),
				"alg none":                             assinar(t, jwt.SigningMethodNone, claims(sub), jwt.UnsafeAllowNoneSignatureType),
			},
		},
	}
	for _, c := range casos {
		t.Run(c.nome, func(t *testing.T) {
			s := novoServidor(t, func(o *Options) {
				o.Config = config.Config{JWTPublicKeyFile: arquivo(t, c.pem)}
			})
			if r := s.situacao(t, c.valido); r.status != 200 {
				t.Fatalf("valid token: status %d: %s", r.status, r.body)
			}
			for nome, tok := range c.ruins {
				if r := s.situacao(t, tok); r.status != 401 {
					t.Errorf("%s: status %d, want 401", nome, r.status)
				} else {
					r.erro(t, 401)
				}
			}
		})
	}
}

func TestAuthConfiguracaoInvalidaFalhaNew(t *testing.T) {
	t.Parallel()
	k := gerarChaves(t)
	st := novoServidor(t, nil).st
	casos := map[string]struct {
		cfg  config.Config
		erro string
	}{
		"segredo e chave":     {config.Config{JWTSecret: segredo, JWTPublicKeyFile: arquivo(t, k.rsaPEM)}, "set only one of"},
		"arquivo inexistente": {config.Config{JWTPublicKeyFile: filepath.Join(t.TempDir(), "nao-existe.pem")}, "D6A_JWT_PUBLIC_KEY_FILE"},
		"não é PEM":           {config.Config{JWTPublicKeyFile: arquivo(t, []byte("isto não é uma chave"))}, "no PEM block"},
		"chave privada":       {config.Config{JWTPublicKeyFile: arquivo(t, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1}}))}, "not a public key"},
		"PEM corrompido":      {config.Config{JWTPublicKeyFile: arquivo(t, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte{1, 2, 3}}))}, "parse PUBLIC KEY"},
		"RSA de 1024 bits":    {config.Config{JWTPublicKeyFile: arquivo(t, k.rsaFraca)}, "2048"},
		"JWKS em http":        {config.Config{JWTJWKSURL: "http://idp.example/jwks.json"}, "D6A_JWT_JWKS_URL"},
		"proxy inválido":      {config.Config{JWTSecret: segredo, TrustedProxies: []string{"proxy.interno"}}, "D6A_TRUSTED_PROXIES"},
	}
	for nome, c := range casos {
		_, err := New(Options{Config: c.cfg, Store: st})
		if err == nil || !strings.Contains(err.Error(), c.erro) {
			t.Errorf("%s: err %v, want one containing %q", nome, err, c.erro)
		}
	}
	if _, err := New(Options{Config: config.Config{JWTSecret: segredo}}); err == nil {
		t.Errorf("New without Store succeeded")
	}
}

func TestAuthNaoConfiguradaResponde503(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, func(o *Options) { o.Config = config.Config{} })
	r := s.situacao(t, tokenHS(t, uuid.New()))
	if msg := r.erro(t, 503); msg != "autenticação não configurada" {
		t.Fatalf("erro %q", msg)
	}
}

func TestBearer(t *testing.T) {
	for h, want := range map[string]string{
		"Bearer abc":   "abc",
		"bearer abc":   "abc",
		"BEARER  abc ": "abc",
		"Bearer":       "",
		"Bearer a b":   "",
		"Token abc":    "",
		"Bearerabc":    "",
	} {
		got, ok := bearer(h)
		if got != want || ok != (want != "") {
			t.Errorf("bearer(%q) = %q, %v; want %q", h, got, ok, want)
		}
	}
}

// The development token of `d6a token` passes this server's checks.
func TestTokenSessaoAceito(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, func(o *Options) {
		o.Config.JWTIssuer = "d6a-dev"
		o.Config.JWTAudience = "d6a"
	})
	sub := uuid.New()
	tok, err := TokenSessao(segredo, sub, agora.Add(-time.Minute), time.Hour, "d6a-dev", "d6a")
	if err != nil {
		t.Fatal(err)
	}
	if r := s.situacao(t, tok); r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	velho, err := TokenSessao(segredo, sub, agora.Add(-2*time.Hour), time.Hour, "d6a-dev", "d6a")
	if err != nil {
		t.Fatal(err)
	}
	s.situacao(t, velho).erro(t, 401)
	if _, err := TokenSessao("", sub, agora, time.Hour, "", ""); err == nil {
		t.Error("empty secret accepted")
	}
	if _, err := TokenSessao(segredo, sub, agora, 0, "", ""); err == nil {
		t.Error("zero ttl accepted")
	}
}
