package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestDefaults(t *testing.T) {
	c, err := Parse(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.NATSEmbeddedAddr != "127.0.0.1:4222" || c.Stream != "EVENTOS" || c.SubjectPrefix != "eventos" ||
		c.HTTPAddr != ":8080" || c.DataDir != "./.data" {
		t.Fatalf("defaults: %+v", c)
	}
	if c.NRecusasSuspensao != 3 || c.TSuspensao != 90*24*time.Hour || c.ThrottlePorMinuto != 60 ||
		c.HierarquiaTTL != 6*time.Hour || c.MaxEntregas != 5 || !c.Migrate || c.TokensCache != 100000 {
		t.Fatalf("defaults: %+v", c)
	}
	if err := c.RequireDatabase(); err == nil || !strings.Contains(err.Error(), "D6A_DATABASE_URL") {
		t.Fatalf("RequireDatabase = %v", err)
	}
}

func TestInvalidNamesVariable(t *testing.T) {
	_, err := Parse(env(map[string]string{"D6A_MAX_ENTREGAS": "zero", "D6A_HIERARQUIA_TTL": "6 horas", "D6A_TOKENS_CACHE": "0"}))
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("want *Error, got %v", err)
	}
	for _, v := range []string{"D6A_MAX_ENTREGAS", "D6A_HIERARQUIA_TTL", "D6A_TOKENS_CACHE"} {
		if !strings.Contains(err.Error(), v) {
			t.Errorf("error %q does not name %s", err, v)
		}
	}
}

func TestOverrides(t *testing.T) {
	c, err := Parse(env(map[string]string{
		"D6A_T_SUSPENSAO_DIAS": "7", "D6A_THROTTLE_POR_MINUTO": "0", "D6A_TRUSTED_PROXIES": "10.0.0.1, 10.0.0.2",
		"D6A_MIGRATE": "false", "D6A_LOG_LEVEL": "debug", "D6A_TOKENS_CACHE": "10",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.TSuspensao != 7*24*time.Hour || c.ThrottlePorMinuto != 0 || len(c.TrustedProxies) != 2 || c.Migrate || c.TokensCache != 10 {
		t.Fatalf("%+v", c)
	}
}

// A provider's key without iss and aud pinned would accept tokens minted
// for any other service it serves: both are required, each named.
func TestChavePublicaExigeEmissorEAudiencia(t *testing.T) {
	for _, chave := range []map[string]string{
		{"D6A_JWT_PUBLIC_KEY_FILE": "/etc/d6a/jwt.pem"},
		{"D6A_JWT_JWKS_URL": "https://idp.example/jwks.json"},
	} {
		_, err := Parse(env(chave))
		for _, v := range []string{"D6A_JWT_ISSUER", "D6A_JWT_AUDIENCE"} {
			if err == nil || !strings.Contains(err.Error(), v) {
				t.Errorf("%v: error %v does not name %s", chave, err, v)
			}
		}
		chave["D6A_JWT_ISSUER"], chave["D6A_JWT_AUDIENCE"] = "https://idp.example", "d6a"
		if _, err := Parse(env(chave)); err != nil {
			t.Errorf("%v: %v", chave, err)
		}
	}
	// The shared secret is d6a's own: no claim to pin.
	if _, err := Parse(env(map[string]string{"D6A_JWT_SECRET": "x"})); err != nil {
		t.Error(err)
	}
}

func TestJWKSHTTPSoLoopback(t *testing.T) {
	base := map[string]string{"D6A_JWT_ISSUER": "i", "D6A_JWT_AUDIENCE": "a"}
	for u, ok := range map[string]bool{
		"https://idp.example/jwks":     true,
		"http://127.0.0.1:8081/jwks":   true,
		"http://[::1]/jwks":            true,
		"http://localhost:9000/jwks":   true,
		"http://idp.example/jwks":      false,
		"http://10.0.0.5/jwks":         false,
		"ftp://idp.example/jwks":       false,
		"idp.example/jwks":             false,
		"http://127.0.0.1.nip.io/jwks": false,
	} {
		base["D6A_JWT_JWKS_URL"] = u
		_, err := Parse(env(base))
		if (err == nil) != ok || (err != nil && !strings.Contains(err.Error(), "D6A_JWT_JWKS_URL")) {
			t.Errorf("%s: err = %v, want ok=%v", u, err, ok)
		}
	}
}

func TestConexoesPublicasEDuracaoToken(t *testing.T) {
	c, err := Parse(env(nil))
	if err != nil || c.ConexoesPublicas != 2 || c.JWTDuracaoMax != 24*time.Hour {
		t.Fatalf("defaults %d %v: %v", c.ConexoesPublicas, c.JWTDuracaoMax, err)
	}
	_, err = Parse(env(map[string]string{"D6A_DB_CONEXOES_PUBLICAS": "0", "D6A_JWT_DURACAO_MAX": "-1h"}))
	for _, v := range []string{"D6A_DB_CONEXOES_PUBLICAS", "D6A_JWT_DURACAO_MAX"} {
		if err == nil || !strings.Contains(err.Error(), v) {
			t.Errorf("error %v does not name %s", err, v)
		}
	}
}

func TestSemCredenciais(t *testing.T) {
	for in, want := range map[string]string{
		"nats://u:segredo@nats:4222":            "nats://***@nats:4222",
		"nats://tokensecreto@nats:4222":         "nats://***@nats:4222",
		"nats://a:b@n1:4222,nats://tok@n2:4222": "nats://***@n1:4222,nats://***@n2:4222",
		"nats://nats:4222":                      "nats://nats:4222",
		"nats://u:p%zz@nats:4222":               "***@nats:4222",
		"":                                      "",
	} {
		got := SemCredenciais(in)
		if got != want || strings.Contains(got, "segredo") || strings.Contains(got, "tokensecreto") {
			t.Errorf("SemCredenciais(%q) = %q, want %q", in, got, want)
		}
	}
}
