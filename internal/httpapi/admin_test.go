package httpapi

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/console"
)

// administracaoFalsa answers the console and records who asked.
type administracaoFalsa struct{ sub string }

func (f *administracaoFalsa) Ocupados(context.Context, time.Duration) ([]console.Ocupado, error) {
	return []console.Ocupado{}, nil
}
func (f *administracaoFalsa) Timeout(_ context.Context, a console.Acao, id uuid.UUID) (uuid.UUID, error) {
	f.sub = a.Sub
	return atribuicao.IDTimeout(id), nil
}
func (f *administracaoFalsa) Fila(context.Context, *uuid.UUID) ([]console.Pendente, error) {
	return []console.Pendente{}, nil
}
func (f *administracaoFalsa) SortearPendente(context.Context, console.Acao, uuid.UUID) (console.ResultadoPendente, error) {
	return console.ResultadoPendente{}, nil
}
func (f *administracaoFalsa) Inativar(context.Context, console.Acao, uuid.UUID) (console.MudancaStatus, error) {
	return console.MudancaStatus{}, console.ErrConflito
}
func (f *administracaoFalsa) Reativar(context.Context, console.Acao, uuid.UUID) (console.MudancaStatus, error) {
	return console.MudancaStatus{}, console.ErrNaoEncontrado
}
func (f *administracaoFalsa) Parametros(context.Context) (atribuicao.Parametros, error) {
	return atribuicao.Parametros{Versao: 1, TimeoutRespostaHoras: 72}, nil
}
func (f *administracaoFalsa) VersoesParametros(context.Context) ([]atribuicao.Parametros, error) {
	return []atribuicao.Parametros{}, nil
}
func (f *administracaoFalsa) NovosParametros(context.Context, console.Acao, atribuicao.Parametros) (int, error) {
	return 2, nil
}
func (f *administracaoFalsa) Acoes(context.Context, int64, int) ([]console.AcaoRegistrada, error) {
	return []console.AcaoRegistrada{}, nil
}

// The admin role comes from the identity provider's tokens too: a JWKS
// token without "papel": "admin" is 403, with it the route answers and
// the action carries its sub; with no key configured the console is 503.
func TestAdminComTokensDoProvedor(t *testing.T) {
	t.Parallel()
	k, _ := rsa.GenerateKey(rand.Reader, 2048)
	p := novoProvedor(t)
	p.publicar(jwkRSA(k, "k", "RS256"))
	adm := &administracaoFalsa{}
	s := novoServidor(t, func(o *Options) {
		o.Config = config.Config{JWTJWKSURL: p.srv.URL, Admin: true}
		o.Contexto = t.Context()
		o.Admin = adm
	})
	post := func(token, path, body string) resposta {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		return s.do(t, req)
	}
	c := claims(uuid.New())
	c["sub"] = "109876543210987654321" // Google's subjects are not UUIDs
	semPapel := assinarKid(t, jwt.SigningMethodRS256, "k", c, k)
	c["papel"] = "admin"
	admin := assinarKid(t, jwt.SigningMethodRS256, "k", c, k)
	ev := uuid.New()
	rota := PrefixoAdmin + "/atribuicoes/" + ev.String() + "/timeout"

	post(semPapel, rota, `{"justificativa": "x"}`).erro(t, 403)
	r := post(admin, rota, `{"justificativa": "x"}`)
	if r.status != 202 || r.json(t)["event_id"] != atribuicao.IDTimeout(ev).String() || adm.sub != "109876543210987654321" {
		t.Fatalf("timeout: %d %s (sub %q)", r.status, r.body, adm.sub)
	}
	post(admin, PrefixoAdmin+"/conselheiros/"+uuid.NewString()+"/inativar", `{"justificativa": "x"}`).erro(t, 409)
	post(admin, PrefixoAdmin+"/conselheiros/"+uuid.NewString()+"/reativar", `{"justificativa": "x"}`).erro(t, 404)
	if r := s.get(t, PrefixoAdmin+"/ocupados", "Authorization", "Bearer "+admin); r.status != 200 || r.json(t)["mais_de"] != "72h0m0s" {
		t.Fatalf("ocupados with the default threshold: %d %s", r.status, r.body)
	}

	semChave := novoServidor(t, func(o *Options) {
		o.Config = config.Config{Admin: true}
		o.Admin = adm
	})
	semChave.get(t, PrefixoAdmin+"/parametros", "Authorization", "Bearer "+admin).erro(t, 503)
}
