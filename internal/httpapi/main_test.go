package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/apispec"
	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/metrics"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// agora is the clock of every test server: tokens and suspensions are
// written relative to it.
var agora = time.Date(2026, 11, 29, 14, 3, 7, 123_000_000, time.UTC)

const segredo = "segredo-de-teste-com-mais-de-32-bytes!!"

// servidor is a test app on its own fresh database.
type servidor struct {
	app *fiber.App
	st  *store.Store
}

// novoServidor builds the app the way serve does. mudar adjusts the options
// (nil keeps the defaults: HS256 with segredo, no throttle, ready).
func novoServidor(t testing.TB, mudar func(*Options)) servidor {
	t.Helper()
	st := pgtest.New(t)
	o := Options{
		Config: config.Config{JWTSecret: segredo},
		Store:  st,
		Ready:  func(context.Context) error { return nil },
		Now:    func() time.Time { return agora },
	}
	if mudar != nil {
		mudar(&o)
	}
	app, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return servidor{app: app, st: st}
}

// resposta is an answer read through the real HTTP stack.
type resposta struct {
	status int
	header http.Header
	body   []byte
}

func (r resposta) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("answer %d is not JSON: %v: %s", r.status, err, r.body)
	}
	return m
}

// erro checks an error answer: the status and a non-empty {"erro": …}.
func (r resposta) erro(t testing.TB, status int) string {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("error Content-Type %q, want application/json", ct)
	}
	m := r.json(t)
	msg, _ := m["erro"].(string)
	if msg == "" || len(m) != 1 {
		t.Fatalf(`error body %s, want exactly {"erro": "…"}`, r.body)
	}
	return msg
}

// do sends req through app.Test and checks the exchange against
// schemas/openapi.yaml (apispec.CheckHTTP): every handler test holds the
// document true.
func (s servidor) do(t testing.TB, req *http.Request) resposta {
	t.Helper()
	var corpo []byte
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		if corpo, err = io.ReadAll(req.Body); err != nil {
			t.Fatal(err)
		}
		req.Body = io.NopCloser(bytes.NewReader(corpo))
	}
	original := req.Clone(context.Background())
	res, err := s.app.Test(req, 10_000)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := apispec.CheckHTTP(original, corpo, res.StatusCode, res.Header, b); err != nil {
		t.Errorf("openapi.yaml: %v", err)
	}
	return resposta{status: res.StatusCode, header: res.Header, body: b}
}

// get sends GET path with the given headers (name, value, name, value…).
func (s servidor) get(t testing.TB, path string, headers ...string) resposta {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return s.do(t, req)
}

// situacao asks for the situation with a bearer token.
func (s servidor) situacao(t testing.TB, token string, headers ...string) resposta {
	t.Helper()
	return s.get(t, RotaSituacao, append([]string{"Authorization", "Bearer " + token}, headers...)...)
}

// claims are valid session claims for sub at agora.
func claims(sub uuid.UUID) jwt.MapClaims {
	return jwt.MapClaims{
		"sub": sub.String(),
		"iat": agora.Add(-time.Minute).Unix(),
		"exp": agora.Add(time.Hour).Unix(),
	}
}

func assinar(t testing.TB, m jwt.SigningMethod, c jwt.Claims, key any) string {
	t.Helper()
	s, err := jwt.NewWithClaims(m, c).SignedString(key)
	if err != nil {
		t.Fatalf("sign %s: %v", m.Alg(), err)
	}
	return s
}

func tokenHS(t testing.TB, sub uuid.UUID) string {
	return assinar(t, jwt.SigningMethodHS256, claims(sub), []byte(segredo))
}

// The scenes below are written with plain SQL on the pool, as the
// handlers' own writes would leave the rows: the routes under test read
// through store's domain methods, and nothing here shares their code.

// cadastrar inserts a counsellor the way the conselheiro.cadastrado handler
// does (id = cidadao_id).
func cadastrar(t testing.TB, st *store.Store, cidadao, uc uuid.UUID) {
	t.Helper()
	em, evento := agora.Add(-30*24*time.Hour), uuid.New()
	_, err := st.Pool.Exec(context.Background(), `INSERT INTO d6a.conselheiros (
		id, cidadao_id, unidade_civica_id, nivel_atuacao, status, capacitacao_concluida,
		data_cadastro, event_id_cadastro, event_id_ultima_alteracao, atualizado_em
	) VALUES ($1, $1, $2, 2, 'disponivel', true, $3, $4, $4, $3)`, cidadao, uc, em, evento)
	if err != nil {
		t.Fatalf("cadastrar: %v", err)
	}
}

func suspender(t testing.TB, st *store.Store, id uuid.UUID, ate time.Time) {
	t.Helper()
	_, err := st.Pool.Exec(context.Background(), `UPDATE d6a.conselheiros
		SET status = 'suspenso', data_suspensao_ate = $2, event_id_ultima_alteracao = $3, atualizado_em = $4
		WHERE id = $1`, id, ate, uuid.New(), agora.Add(-time.Hour))
	if err != nil {
		t.Fatalf("suspender: %v", err)
	}
}

func pendente(t testing.TB, st *store.Store) {
	t.Helper()
	demanda := uuid.New()
	_, err := st.Pool.Exec(context.Background(), `INSERT INTO d6a.fila_pendentes (
		id, demanda_id, unidade_civica_id, categoria_id, nivel_precedencia, score_final,
		data_entrada, event_id_origem, tentativas_sorteio
	) VALUES (md5('d6a.fila_pendentes|' || $1::uuid::text)::uuid, $1, $2, 'C1', 1, 10, $3, $4, 1)`,
		demanda, uuid.New(), agora, uuid.New())
	if err != nil {
		t.Fatalf("pendente: %v", err)
	}
}

// atribuir is a draw's writes to the tables the situacao route reads: the
// active assignment and the counsellor ocupado, in one transaction.
func atribuir(t testing.TB, st *store.Store, conselheiro, uc, demanda, eventoSorteio uuid.UUID, seed string, em time.Time) {
	t.Helper()
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, st.Pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO d6a.atribuicoes (
			conselheiro_id, demanda_id, unidade_civica_id, seed_publico, metodo_sorteio,
			posicao_sorteada, total_elegiveis, status, data_sorteio,
			event_id_sorteio, score_final, categoria_id, nivel_precedencia, criado_em
		) VALUES ($1, $2, $3, $4, 'fisher_yates', 0, 1, 'ativa', $5, $6, 0, 'C1', 1, $5)`,
			conselheiro, demanda, uc, seed, em, eventoSorteio)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE d6a.conselheiros SET status = 'ocupado', data_ultima_atribuicao = $1 WHERE id = $2`, em, conselheiro)
		return err
	})
	if err != nil {
		t.Fatalf("atribuir: %v", err)
	}
}

// newMetrics reads its gauges from st.
func newMetrics(st *store.Store) *metrics.Metrics { return metrics.New(metrics.StoreFonte(st, nil)) }
