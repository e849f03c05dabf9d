// Package config reads the d6a configuration (CONTRACT §2) from the
// environment once, at start, into a typed value.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config is every setting of CONTRACT §2, parsed and validated.
type Config struct {
	DatabaseURL          string
	NATSURL              string
	NATSEmbeddedAddr     string
	DataDir              string
	HTTPAddr             string
	JWTSecret            string
	JWTPublicKeyFile     string
	JWTIssuer            string
	JWTAudience          string
	Stream               string
	SubjectPrefix        string
	NRecusasSuspensao    int
	TSuspensao           time.Duration
	TimeoutResposta      time.Duration
	ThrottlePorMinuto    int
	TrustedProxies       []string
	HierarquiaTTL        time.Duration
	MaxEntregas          int
	LogLevel             slog.Level
	LogFormat            string
	Migrate              bool
	ShutdownTimeout      time.Duration
	OutboxPollInterval   time.Duration
	ConsumerFetchTimeout time.Duration
	// PprofAddr, when set, serves net/http/pprof there (operators and
	// docs/bench.md profiles); empty disables it.
	PprofAddr string
	// SituacaoCache is how many citizens' situacao rows the HTTP cache
	// holds; 0 turns the cache off (docs/decisions.md).
	SituacaoCache int
	// TokensCache is how many verified session tokens each process keeps
	// until their exp (D6A_TOKENS_CACHE, at least 1: a cached token is as
	// good as a re-verified one); 0 in a Config built by hand means
	// httpapi.TokensCache.
	TokensCache int
	// TimeoutAutomatico publishes the timeout refusal for assignments not
	// started within the timeout (D6A_TIMEOUT_AUTOMATICO).
	TimeoutAutomatico bool
	// CapacitacaoExterna: only capacitação.concluída makes a counsellor
	// trained (D6A_CAPACITACAO_EXTERNA, CONTRACT §8).
	CapacitacaoExterna bool
	// ExigirVinculo: a counsellor is eligible only at a unit with a
	// validated link (D6A_EXIGIR_VINCULO, CONTRACT §8).
	ExigirVinculo bool
	// Admin serves the administration routes under /d6a/admin/ (D6A_ADMIN).
	Admin bool
	// JWTJWKSURL is the identity provider's JWKS (D6A_JWT_JWKS_URL).
	JWTJWKSURL string
	// Manutencao is how often the periodic jobs run: reactivation of
	// expired suspensions and, when on, the automatic timeout
	// (D6A_MANUTENCAO_INTERVALO).
	Manutencao time.Duration
	// LogKeyFile names the signer key of the transparency log's
	// checkpoints; empty: a key kept under DataDir (docs/decisions.md).
	LogKeyFile string
	// LogOrigin is the checkpoints' origin line and the key's name.
	LogOrigin string
	// LogTestemunhas are the log's witnesses, comma-separated "URL VKEY"
	// entries (D6A_LOG_TESTEMUNHAS; parsed by internal/testemunha).
	LogTestemunhas string
	// TransparenciaPorMinuto limits the public transparency routes per
	// client IP (0: no limit).
	TransparenciaPorMinuto int
	// LogQuorum is how many witnesses' cosignatures fix a trigger's
	// commitment time (D6A_LOG_QUORUM, CONTRACT §4a).
	LogQuorum int
	// BeaconURL are a drand-compatible chain's relays, tried in order
	// (D6A_BEACON_URL); none: the service's own private beacon.
	BeaconURL []string
	// BeaconChave is that chain's public key, hex (D6A_BEACON_CHAVE).
	BeaconChave string
	// BeaconMargem is the margin between a commitment time and its round
	// (D6A_BEACON_MARGEM); negative: one period of the chain.
	BeaconMargem time.Duration
	// ConexoesPublicas is the size of the pool the public routes read
	// through, apart from the executor's (D6A_DB_CONEXOES_PUBLICAS): a
	// flood of them can hold no more than these connections.
	ConexoesPublicas int
	// PublicoPorSegundo is how many answers a second every public route
	// shares, whatever the client's address (D6A_PUBLICO_POR_SEGUNDO; 0:
	// no budget): a flood from many addresses cannot take the draws'
	// cores.
	PublicoPorSegundo int
	// ValidadeMetricas is how long /metrics serves the gauges it read
	// from the database before reading them again, and its rendered page
	// for at most httpapi.MetricasIntervalo of that (D6A_METRICAS_VALIDADE;
	// 0: every scrape).
	ValidadeMetricas time.Duration
	// JWTDuracaoMax is the longest a session token may live, iat to exp
	// (D6A_JWT_DURACAO_MAX): a leaked long-lived token is refused.
	JWTDuracaoMax time.Duration
}

// Error names the variable to fix, so the operator can act on one line.
type Error struct {
	Var string
	Msg string
}

func (e *Error) Error() string { return e.Var + ": " + e.Msg }

// FromEnv reads the process environment.
func FromEnv() (Config, error) { return Parse(os.LookupEnv) }

// Parse reads the configuration through lookup, so tests need not touch the
// process environment. It reports every invalid variable, joined.
func Parse(lookup func(string) (string, bool)) (Config, error) {
	p := parser{lookup: lookup}
	c := Config{
		DatabaseURL:          p.str("D6A_DATABASE_URL", ""),
		NATSURL:              p.str("D6A_NATS_URL", ""),
		NATSEmbeddedAddr:     p.str("D6A_NATS_EMBEDDED_ADDR", "127.0.0.1:4222"),
		DataDir:              p.str("D6A_DATA_DIR", "./.data"),
		HTTPAddr:             p.str("D6A_HTTP_ADDR", ":8080"),
		JWTSecret:            p.str("D6A_JWT_SECRET", ""),
		JWTPublicKeyFile:     p.str("D6A_JWT_PUBLIC_KEY_FILE", ""),
		JWTIssuer:            p.str("D6A_JWT_ISSUER", ""),
		JWTAudience:          p.str("D6A_JWT_AUDIENCE", ""),
		Stream:               p.str("D6A_STREAM", "EVENTOS"),
		SubjectPrefix:        p.str("D6A_SUBJECT_PREFIX", "eventos"),
		NRecusasSuspensao:    p.integer("D6A_N_RECUSAS_SUSPENSAO", 3, 0),
		TSuspensao:           time.Duration(p.integer("D6A_T_SUSPENSAO_DIAS", 90, 0)) * 24 * time.Hour,
		TimeoutResposta:      time.Duration(p.integer("D6A_TIMEOUT_RESPOSTA_HORAS", 72, 1)) * time.Hour,
		TimeoutAutomatico:    p.boolean("D6A_TIMEOUT_AUTOMATICO", false),
		CapacitacaoExterna:   p.boolean("D6A_CAPACITACAO_EXTERNA", false),
		ExigirVinculo:        p.boolean("D6A_EXIGIR_VINCULO", false),
		Admin:                p.boolean("D6A_ADMIN", true),
		JWTJWKSURL:           p.str("D6A_JWT_JWKS_URL", ""),
		Manutencao:           p.duration("D6A_MANUTENCAO_INTERVALO", time.Minute),
		ThrottlePorMinuto:    p.integer("D6A_THROTTLE_POR_MINUTO", 60, 0),
		TrustedProxies:       p.list("D6A_TRUSTED_PROXIES"),
		HierarquiaTTL:        p.duration("D6A_HIERARQUIA_TTL", 6*time.Hour),
		MaxEntregas:          p.integer("D6A_MAX_ENTREGAS", 5, 1),
		LogFormat:            p.str("D6A_LOG_FORMAT", "json"),
		Migrate:              p.boolean("D6A_MIGRATE", true),
		ShutdownTimeout:      p.duration("D6A_SHUTDOWN_TIMEOUT", 10*time.Second),
		OutboxPollInterval:   p.duration("D6A_OUTBOX_POLL", time.Second),
		ConsumerFetchTimeout: p.duration("D6A_FETCH_TIMEOUT", time.Second),
		PprofAddr:            p.str("D6A_PPROF_ADDR", ""),
		SituacaoCache:        p.integer("D6A_SITUACAO_CACHE", 100000, 0),
		TokensCache:          p.integer("D6A_TOKENS_CACHE", 100000, 1),
		LogKeyFile:           p.str("D6A_LOG_KEY_FILE", ""),
		LogOrigin:            p.str("D6A_LOG_ORIGIN", "d6a/sorteios"),
		LogTestemunhas:       p.str("D6A_LOG_TESTEMUNHAS", ""),
		// A full mirror of 1,000,000 draws is 1,000 pages.
		TransparenciaPorMinuto: p.integer("D6A_TRANSPARENCIA_POR_MINUTO", 1200, 0),
		LogQuorum:              p.integer("D6A_LOG_QUORUM", 1, 1),
		BeaconURL:              p.list("D6A_BEACON_URL"),
		BeaconChave:            p.str("D6A_BEACON_CHAVE", ""),
		BeaconMargem:           p.duration("D6A_BEACON_MARGEM", -1),
		ConexoesPublicas:       p.integer("D6A_DB_CONEXOES_PUBLICAS", 2, 1),
		PublicoPorSegundo:      p.integer("D6A_PUBLICO_POR_SEGUNDO", 500, 0),
		JWTDuracaoMax:          p.duration("D6A_JWT_DURACAO_MAX", 24*time.Hour),
		ValidadeMetricas:       p.duration("D6A_METRICAS_VALIDADE", 5*time.Second),
	}
	if len(c.BeaconURL) > 0 && c.BeaconChave == "" {
		p.fail("D6A_BEACON_CHAVE", "required with D6A_BEACON_URL: the chain's public key in hex (quicknet's is in CONTRACT §4a)")
	}
	if _, ok := lookup("D6A_BEACON_MARGEM"); ok && c.BeaconMargem < 0 {
		p.fail("D6A_BEACON_MARGEM", "must not be negative")
	}
	switch lvl := strings.ToLower(p.str("D6A_LOG_LEVEL", "info")); lvl {
	case "debug":
		c.LogLevel = slog.LevelDebug
	case "info":
		c.LogLevel = slog.LevelInfo
	case "warn", "warning":
		c.LogLevel = slog.LevelWarn
	case "error":
		c.LogLevel = slog.LevelError
	default:
		p.fail("D6A_LOG_LEVEL", fmt.Sprintf("%q is not one of debug, info, warn, error", lvl))
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		p.fail("D6A_LOG_FORMAT", fmt.Sprintf("%q is not json or text", c.LogFormat))
	}
	if c.Stream == "" {
		p.fail("D6A_STREAM", "must not be empty")
	}
	if c.SubjectPrefix == "" || strings.ContainsAny(c.SubjectPrefix, " *>") {
		p.fail("D6A_SUBJECT_PREFIX", "must be a plain subject token")
	}
	if c.Manutencao <= 0 {
		p.fail("D6A_MANUTENCAO_INTERVALO", "must be positive")
	}
	if c.LogOrigin == "" || strings.ContainsAny(c.LogOrigin, "\n+ ") {
		p.fail("D6A_LOG_ORIGIN", "must be one line without spaces or '+'")
	}
	if c.HierarquiaTTL <= 0 {
		p.fail("D6A_HIERARQUIA_TTL", "must be positive")
	}
	if c.ValidadeMetricas < 0 {
		p.fail("D6A_METRICAS_VALIDADE", "must not be negative")
	}
	if c.JWTDuracaoMax <= 0 {
		p.fail("D6A_JWT_DURACAO_MAX", "must be positive")
	}
	// A provider's key verifies the tokens it issues for every service it
	// serves: without both claims pinned, a token minted for another
	// service (or by another tenant) would open ours.
	if c.JWTPublicKeyFile != "" || c.JWTJWKSURL != "" {
		for _, v := range []struct{ nome, valor string }{{"D6A_JWT_ISSUER", c.JWTIssuer}, {"D6A_JWT_AUDIENCE", c.JWTAudience}} {
			if v.valor == "" {
				p.fail(v.nome, "required with D6A_JWT_PUBLIC_KEY_FILE or D6A_JWT_JWKS_URL (the iss and aud the identity provider puts in d6a's tokens)")
			}
		}
	}
	if c.JWTJWKSURL != "" {
		if err := URLJWKSSegura(c.JWTJWKSURL); err != nil {
			p.fail("D6A_JWT_JWKS_URL", err.Error())
		}
	}
	return c, errors.Join(p.errs...)
}

// URLJWKSSegura refuses a key-set URL anyone on the path could rewrite:
// https, or http only to a loopback host (a sidecar or a test).
func URLJWKSSegura(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		h := u.Hostname()
		if h == "localhost" {
			return nil
		}
		if ip, err := netip.ParseAddr(h); err == nil && ip.IsLoopback() {
			return nil
		}
		return errors.New("http:// is only accepted to a loopback host; use https://")
	}
	return fmt.Errorf("scheme %q is not https", u.Scheme)
}

// RequireDatabase reports the missing database URL the way every command
// that needs it should.
func (c Config) RequireDatabase() error {
	if c.DatabaseURL == "" {
		return &Error{Var: "D6A_DATABASE_URL", Msg: "not set (a PostgreSQL URL; `make run` provides a local one)"}
	}
	return nil
}

type parser struct {
	lookup func(string) (string, bool)
	errs   []error
}

func (p *parser) fail(name, msg string) { p.errs = append(p.errs, &Error{Var: name, Msg: msg}) }

func (p *parser) str(name, def string) string {
	if v, ok := p.lookup(name); ok && v != "" {
		return v
	}
	return def
}

func (p *parser) integer(name string, def, min int) int {
	v, ok := p.lookup(name)
	if !ok || v == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < min {
		p.fail(name, fmt.Sprintf("%q is not an integer ≥ %d", v, min))
		return def
	}
	return n
}

func (p *parser) duration(name string, def time.Duration) time.Duration {
	v, ok := p.lookup(name)
	if !ok || v == "" {
		return def
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		p.fail(name, fmt.Sprintf("%q is not a duration like 6h or 90s", v))
		return def
	}
	return d
}

func (p *parser) boolean(name string, def bool) bool {
	v, ok := p.lookup(name)
	if !ok || v == "" {
		return def
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		p.fail(name, fmt.Sprintf("%q is not true or false", v))
		return def
	}
	return b
}

func (p *parser) list(name string) []string {
	v, ok := p.lookup(name)
	if !ok || strings.TrimSpace(v) == "" {
		return nil
	}
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// SemCredenciais is a URL, or a comma-separated list of them (D6A_NATS_URL
// takes several servers), fit for a log line: any user information
// (user:pass@, and the token@ that url.URL.Redacted keeps) becomes "***".
func SemCredenciais(raw string) string {
	partes := strings.Split(raw, ",")
	for i, p := range partes {
		u, err := url.Parse(strings.TrimSpace(p))
		switch {
		case err != nil:
			// Unreadable: it may still hold a secret before an '@'.
			if j := strings.LastIndexByte(p, '@'); j >= 0 {
				partes[i] = "***" + p[j:]
			}
		case u.User != nil:
			u.User = url.User("***")
			partes[i] = strings.Replace(u.String(), "%2A%2A%2A", "***", 1)
		}
	}
	return strings.Join(partes, ",")
}
