package httpapi

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/store"
)

func TestSituacaoNuncaCadastrado(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, nil)
	r := s.situacao(t, tokenHS(t, uuid.New()))
	if r.status != 200 || string(r.body) != `{"cadastrado":false}` {
		t.Fatalf("got %d %s, want 200 {\"cadastrado\":false}", r.status, r.body)
	}
	if got := r.header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", got)
	}
}

func TestSituacaoDisponivel(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, nil)
	cidadao, uc := uuid.New(), uuid.New()
	cadastrar(t, s.st, cidadao, uc)

	r := s.situacao(t, tokenHS(t, cidadao))
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	got := r.json(t)
	want := map[string]any{
		"cadastrado":            true,
		"conselheiro_id":        cidadao.String(),
		"unidade_civica_id":     uc.String(),
		"nivel_atuacao":         float64(2),
		"status":                "disponivel",
		"capacitacao_concluida": true,
		"data_suspensao_ate":    nil,
		"atribuicao_ativa":      nil,
		"capacitacao_externa":   nil,
		"vinculo":               map[string]any{"unidade_civica_id": uc.String(), "valido": nil, "origem": nil},
		"nivel_progressao":      nil,
	}
	igual(t, got, want)

	// Phase 2 (CONTRACT §8): the external training record and the link at
	// the unit, as the service holds them (a revoked one reads false).
	ctx := context.Background()
	err := s.st.InTx(ctx, func(tx store.Tx) error {
		if err := tx.AnotarCapacitacao(ctx, store.Capacitacao{Conselheiro: cidadao, Curso: "basico", ConcluidaEm: "2026-11-29T12:00:00.000Z", EventID: uuid.New(), Agora: time.Now()}); err != nil {
			return err
		}
		return tx.AnotarVinculo(ctx, store.Vinculo{Conselheiro: cidadao, UC: uc, Valido: false, Origem: "vinculo.validado", EventID: uuid.New(), Agora: time.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	got = s.situacao(t, tokenHS(t, cidadao)).json(t)
	want["capacitacao_externa"] = map[string]any{"curso_id": "basico", "concluida_em": "2026-11-29T12:00:00.000Z"}
	want["vinculo"] = map[string]any{"unidade_civica_id": uc.String(), "valido": false, "origem": "vinculo.validado"}
	igual(t, got, want)
}

func TestSituacaoOcupadoComAtribuicaoAtiva(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, nil)
	cidadao, uc, demanda, evento := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	cadastrar(t, s.st, cidadao, uc)
	sorteio := time.Date(2026, 11, 28, 9, 30, 15, 120_000_000, time.FixedZone("BRT", -3*3600))
	seed := "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	atribuir(t, s.st, cidadao, uc, demanda, evento, seed, sorteio)

	r := s.situacao(t, tokenHS(t, cidadao))
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	got := r.json(t)
	if got["status"] != "ocupado" {
		t.Errorf("status %v, want ocupado", got["status"])
	}
	igual(t, got["atribuicao_ativa"].(map[string]any), map[string]any{
		"demanda_id":        demanda.String(),
		"unidade_civica_id": uc.String(),
		"data_sorteio":      "2026-11-28T12:30:15.120Z", // UTC, milliseconds
		"seed_publico":      seed,
		"event_id_sorteio":  evento.String(),
	})
}

func TestSituacaoSuspenso(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, nil)
	cidadao := uuid.New()
	cadastrar(t, s.st, cidadao, uuid.New())
	suspender(t, s.st, cidadao, agora.Add(90*24*time.Hour))

	got := s.situacao(t, tokenHS(t, cidadao)).json(t)
	if got["status"] != "suspenso" || got["data_suspensao_ate"] != "2027-02-27T14:03:07.120Z" {
		t.Fatalf("got status %v, data_suspensao_ate %v; want suspenso, 2027-02-27T14:03:07.120Z", got["status"], got["data_suspensao_ate"])
	}
}

// CONTRACT §5, spec 4.6: a suspension whose date has passed reads as
// disponivel before the boot reactivation rewrites the row.
func TestT18_SuspensaoVencidaLeComoDisponivel(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, nil)
	cidadao := uuid.New()
	cadastrar(t, s.st, cidadao, uuid.New())
	suspender(t, s.st, cidadao, agora.Add(-time.Second))

	got := s.situacao(t, tokenHS(t, cidadao)).json(t)
	if got["status"] != "disponivel" {
		t.Fatalf("status %v, want disponivel", got["status"])
	}
	if got["data_suspensao_ate"] != "2026-11-29T14:03:06.120Z" {
		t.Errorf("data_suspensao_ate %v, want the stored date", got["data_suspensao_ate"])
	}
}

func TestSituacaoNuncaOutroCidadao(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, nil)
	a, b := uuid.New(), uuid.New()
	ucA, ucB := uuid.New(), uuid.New()
	cadastrar(t, s.st, a, ucA)

	// b is not registered: b's token must not reveal a's row.
	if r := s.situacao(t, tokenHS(t, b)); string(r.body) != `{"cadastrado":false}` {
		t.Fatalf("b sees %s", r.body)
	}
	cadastrar(t, s.st, b, ucB)
	got := s.situacao(t, tokenHS(t, b)).json(t)
	if got["conselheiro_id"] != b.String() || got["unidade_civica_id"] != ucB.String() {
		t.Fatalf("b's token answered %v", got)
	}
	got = s.situacao(t, tokenHS(t, a)).json(t)
	if got["conselheiro_id"] != a.String() || got["unidade_civica_id"] != ucA.String() {
		t.Fatalf("a's token answered %v", got)
	}
}

// Several rows for one citizen cannot come from the handlers (id =
// cidadao_id); if they exist, the oldest answers.
func TestSituacaoVariasLinhasResponde_AMaisAntiga(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, nil)
	cidadao, antiga, nova := uuid.New(), uuid.New(), uuid.New()
	cadastrar(t, s.st, cidadao, antiga) // data_cadastro agora-30d
	_, err := s.st.Pool.Exec(context.Background(), `
		INSERT INTO d6a.conselheiros (id, cidadao_id, unidade_civica_id, data_cadastro, event_id_cadastro, event_id_ultima_alteracao)
		VALUES ($1, $2, $3, $4, $1, $1)`, uuid.New(), cidadao, nova, agora)
	if err != nil {
		t.Fatal(err)
	}
	got := s.situacao(t, tokenHS(t, cidadao)).json(t)
	if got["unidade_civica_id"] != antiga.String() {
		t.Fatalf("answered unit %v, want the oldest row's %v", got["unidade_civica_id"], antiga)
	}
}

func TestSituacaoBancoFechadoRespondeJSON(t *testing.T) {
	t.Parallel()
	s := novoServidor(t, nil)
	s.st.Pool.Close()
	r := s.situacao(t, tokenHS(t, uuid.New()))
	if r.status != 500 && r.status != 503 {
		t.Fatalf("status %d, want 500 or 503", r.status)
	}
	r.erro(t, r.status)
}

func igual(t *testing.T, got, want map[string]any) {
	t.Helper()
	for k, w := range want {
		if g, ok := got[k]; !ok || !reflect.DeepEqual(g, w) {
			t.Errorf("%s = %#v (present %v), want %#v", k, g, ok, w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected field %s = %#v", k, got[k])
		}
	}
}
