package metrics

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// exec runs one statement of a scene, written in plain SQL: the gauges
// under test read through store's domain methods.
func exec(t *testing.T, st *store.Store, sql string, args ...any) {
	t.Helper()
	if _, err := st.Pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// StoreFonte and StoreFonteOperacao read what the database holds: each
// gauge's count over a scene with something on both sides of each line
// it draws.
func TestFontesLeemOBanco(t *testing.T) {
	t.Parallel()
	st := pgtest.New(t)
	ctx := context.Background()
	agora := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	f := StoreFonte(st, nil)
	op := StoreFonteOperacao(st, func() time.Time { return agora })

	// Before the boot seeds d6a.config, the gauges that need the version
	// in force are skipped (an error), the others read zero.
	if _, err := op.VersaoParametros(ctx); err == nil {
		t.Error("VersaoParametros without d6a.config: no error")
	}
	if _, err := op.OcupadosSemInicio(ctx); err == nil {
		t.Error("OcupadosSemInicio without d6a.config: no error")
	}
	if r, err := op.Fila(ctx); err != nil || r.MaisAntiga != 0 || r.PorFaixa["ate_1h"] != 0 {
		t.Errorf("empty queue: %+v, %v", r, err)
	}

	exec(t, st, `INSERT INTO d6a.config (versao, n_recusas_suspensao, t_suspensao_dias, timeout_resposta_horas, sub, justificativa, criado_em)
		VALUES (1, 3, 90, 72, 'ambiente', 'v1', $1), (2, 3, 90, 48, 'op', 'v2', $1)`, agora.Add(-100*time.Hour))
	uc := uuid.New()
	conselheiro := func(status string) uuid.UUID {
		id := uuid.New()
		exec(t, st, `INSERT INTO d6a.conselheiros (id, cidadao_id, unidade_civica_id, nivel_atuacao, status, capacitacao_concluida,
			data_cadastro, event_id_cadastro, event_id_ultima_alteracao, atualizado_em)
			VALUES ($1, $1, $2, 1, $3, true, $4, $5, $5, $4)`, id, uc, status, agora.Add(-200*time.Hour), uuid.New())
		return id
	}
	conselheiro("disponivel")
	conselheiro("disponivel")
	conselheiro("suspenso")
	// Three active assignments: one past the 48 h timeout in force, never
	// started; one past it, started; one within it.
	atribuir := func(idade time.Duration) uuid.UUID {
		c, id, ev := conselheiro("ocupado"), uuid.New(), uuid.New()
		exec(t, st, `INSERT INTO d6a.atribuicoes (id, conselheiro_id, demanda_id, unidade_civica_id, seed_publico, metodo_sorteio,
			posicao_sorteada, total_elegiveis, status, data_sorteio, event_id_sorteio, score_final, categoria_id, nivel_precedencia, criado_em)
			VALUES ($1, $2, $3, $4, 'ab', 'fisher_yates', 0, 1, 'ativa', $5, $6, 0, 'C1', 1, $5)`,
			id, c, uuid.New(), uc, agora.Add(-idade), ev)
		return id
	}
	atribuir(50 * time.Hour)
	iniciada := atribuir(60 * time.Hour)
	atribuir(47 * time.Hour)
	exec(t, st, `INSERT INTO d6a.atribuicoes_iniciadas (atribuicao_id, event_id_sorteio, conselheiro_id, demanda_id, iniciada_em, event_id, registrado_em)
		SELECT id, event_id_sorteio, conselheiro_id, demanda_id, $2, $3, $2 FROM d6a.atribuicoes WHERE id = $1`, iniciada, agora, uuid.New())
	// The queue: one demand in each bucket but 24h_72h, two in the first;
	// the oldest 8 days old.
	for _, idade := range []time.Duration{0, 59 * time.Minute, time.Hour, 72 * time.Hour, 8 * 24 * time.Hour} {
		d := uuid.New()
		exec(t, st, `INSERT INTO d6a.fila_pendentes (id, demanda_id, unidade_civica_id, categoria_id, nivel_precedencia, score_final,
			data_entrada, event_id_origem, tentativas_sorteio)
			VALUES (md5('d6a.fila_pendentes|' || $1::uuid::text)::uuid, $1, $2, 'C1', 1, 10, $3, $4, 1)`, d, uc, agora.Add(-idade), uuid.New())
	}
	exec(t, st, `INSERT INTO d6a.outbox (event_id, tipo, subject, envelope, criado_em, publicado_em, sequence)
		VALUES ($1, 'x', 'eventos.x', '{}', $3, NULL, NULL), ($2, 'x', 'eventos.x', '{}', $3, $3, 7)`, uuid.New(), uuid.New(), agora)
	for _, acao := range []string{"timeout", "timeout", "parametros"} {
		exec(t, st, `INSERT INTO d6a.acoes_administrativas (sub, acao, alvo, justificativa, criado_em) VALUES ('op', $1, 'x', 'porque', $2)`, acao, agora)
	}

	if n, err := f.Pendentes(ctx); n != 5 || err != nil {
		t.Errorf("Pendentes = %d, %v; want 5", n, err)
	}
	if n, err := f.OutboxPendentes(ctx); n != 1 || err != nil {
		t.Errorf("OutboxPendentes = %d, %v; want 1", n, err)
	}
	por, err := f.ConselheirosPorStatus(ctx)
	if err != nil || len(por) != 3 || por["disponivel"] != 2 || por["suspenso"] != 1 || por["ocupado"] != 3 {
		t.Errorf("ConselheirosPorStatus = %v, %v", por, err)
	}
	fila, err := op.Fila(ctx)
	want := map[string]int64{"ate_1h": 2, "1h_24h": 1, "24h_72h": 0, "72h_7d": 1, "mais_7d": 1}
	if err != nil || fila.MaisAntiga != 8*24*time.Hour || len(fila.PorFaixa) != len(want) {
		t.Errorf("Fila = %+v, %v", fila, err)
	}
	for faixa, n := range want {
		if fila.PorFaixa[faixa] != n {
			t.Errorf("Fila[%s] = %d, want %d", faixa, fila.PorFaixa[faixa], n)
		}
	}
	if n, err := op.OcupadosSemInicio(ctx); n != 1 || err != nil {
		t.Errorf("OcupadosSemInicio = %d, %v; want 1 (past the 48 h of version 2, never started)", n, err)
	}
	acoes, err := op.AcoesPorTipo(ctx)
	if err != nil || len(acoes) != 2 || acoes["timeout"] != 2 || acoes["parametros"] != 1 {
		t.Errorf("AcoesPorTipo = %v, %v", acoes, err)
	}
	if v, err := op.VersaoParametros(ctx); v != 2 || err != nil {
		t.Errorf("VersaoParametros = %d, %v; want 2", v, err)
	}
}
