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
