package httpapi

import (
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/config"
)

// BenchmarkVerificar measures one session-token check, HS256 and RS256,
// with and without the cache of verified tokens:
//
//	go test -run '^$' -bench Verificar ./internal/httpapi/
func BenchmarkVerificar(b *testing.B) {
	k := gerarChaves(b)
	hs := config.Config{JWTSecret: segredo}
	rs := config.Config{JWTPublicKeyFile: arquivo(b, k.rsaPEM)}
	sub := uuid.New()
	tokHS := tokenHS(b, sub)
	tokRS := assinar(b, jwt.SigningMethodRS256, claims(sub), k.rsa)
	now := func() time.Time { return agora }
	for _, c := range []struct {
		nome   string
		cfg    config.Config
		token  string
		tokens int
	}{
		{"HS256/sem_cache", hs, tokHS, 0},
		{"HS256/com_cache", hs, tokHS, TokensCache},
		{"RS256/sem_cache", rs, tokRS, 0},
		{"RS256/com_cache", rs, tokRS, TokensCache},
	} {
		b.Run(c.nome, func(b *testing.B) {
			a, err := novoAutenticador(b.Context(), c.cfg, now, OpcoesJWKS{}, c.tokens)
			if err != nil {
				b.Fatal(err)
			}
			h := "Bearer " + c.token
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.cidadao(h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
