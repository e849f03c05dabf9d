package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/store"
)

func TestMigrateFromEmptyTwice(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.EmptyURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for i := 0; i < 2; i++ {
		if err := store.Migrate(ctx, pool); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'd6a'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	// conselheiros, atribuicoes, fila_pendentes, contador_recusas,
	// consumer_offset, auditoria_sorteios, outbox, eventos_processados;
	// config, acoes_administrativas, atribuicoes_iniciadas, suspensoes;
	// the transparency log's registros, hashes, estado, checkpoints;
	// reconciliacoes; the witnesses' cosignaturas and the fairness
	// statistics' two tables; hierarquia_registrada; the phase-2
	// capacitacoes, vinculos, criterios_uc and regras_elegibilidade
	// (CONTRACT §8).
	if n != 26 {
		t.Fatalf("d6a tables = %d, want 26", n)
	}
}

func TestMigrateFromSpecOnlyDatabase(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.EmptyURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	v := pgtest.Versions(t)
	if len(v) < 3 || v[0] != 20260811191728 || v[1] != 20260918160000 {
		t.Fatalf("versions %v: the spec's two migrations must come first", v)
	}
	if err := store.MigrateTo(ctx, pool, v[1]); err != nil {
		t.Fatal(err)
	}
	// A spec-only deployment already holds data with two active rows for one
	// counsellor would break the new index; a clean one must upgrade.
	if _, err := pool.Exec(ctx, `INSERT INTO d6a.fila_pendentes (demanda_id, unidade_civica_id, categoria_id, nivel_precedencia, score_final, event_id_origem)
		VALUES (gen_random_uuid(), gen_random_uuid(), 'c', 1, 1, gen_random_uuid())`); err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	var ordem int64
	if err := pool.QueryRow(ctx, `SELECT ordem_entrada FROM d6a.fila_pendentes`).Scan(&ordem); err != nil || ordem < 1 {
		t.Fatalf("existing pending row got ordem_entrada %d, %v", ordem, err)
	}
}
