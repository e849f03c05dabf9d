package httpapi

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"
)

// BenchmarkSituacao measures GET /d6a/conselheiros/me/situacao through a
// real loopback listener and fasthttp client, against real PostgreSQL, with
// the throttle off. It is a benchmark, not a test: run it with
//
//	go test -run '^$' -bench Situacao -benchtime 5s ./internal/httpapi/
func BenchmarkSituacao(b *testing.B) {
	// Request logs at info would measure the log writer.
	anterior := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	b.Cleanup(func() { slog.SetDefault(anterior) })

	s := novoServidor(b, nil)
	base := escutar(b, s.app)

	ocupado, uc := uuid.New(), uuid.New()
	cadastrar(b, s.st, ocupado, uc)
	atribuir(b, s.st, ocupado, uc, uuid.New(), uuid.New(), strings.Repeat("ab", 32), agora)

	casos := []struct {
		nome  string
		token string
		want  int
	}{
		{"ocupado", tokenHS(b, ocupado), 200},
		{"nao_cadastrado", tokenHS(b, uuid.New()), 200},
		{"token_invalido", "x.y.z", 401},
	}
	client := &fasthttp.Client{MaxConnsPerHost: 512, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}
	for _, c := range casos {
		b.Run(c.nome, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				req := fasthttp.AcquireRequest()
				res := fasthttp.AcquireResponse()
				defer fasthttp.ReleaseRequest(req)
				defer fasthttp.ReleaseResponse(res)
				req.SetRequestURI(base + RotaSituacao)
				req.Header.Set("Authorization", "Bearer "+c.token)
				for pb.Next() {
					if err := client.Do(req, res); err != nil {
						b.Error(err)
						return
					}
					if res.StatusCode() != c.want {
						b.Errorf("status %d, want %d: %s", res.StatusCode(), c.want, res.Body())
						return
					}
				}
			})
		})
	}
}
