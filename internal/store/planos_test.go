package store_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/store"
)

// The pool plans each execution for the tables as they are. A generic
// plan is built once per connection: built while d6a.atribuicoes held one
// row (a fresh deployment), the candidates probe scanned the table instead
// of probing its index, and kept doing so while a burst of draws grew it.
func TestPlanosSeguemATabelaAtual(t *testing.T) {
	t.Parallel()
	ctx, s, _ := open(t)
	uc := uuid.New()
	novos := func(n int) {
		t.Helper()
		// n counsellors on uc, each with an active assignment.
		_, err := s.Pool.Exec(ctx, `
			WITH c AS (
				INSERT INTO d6a.conselheiros (id, cidadao_id, unidade_civica_id, event_id_cadastro, event_id_ultima_alteracao)
				SELECT g, g, $1, g, g FROM (SELECT gen_random_uuid() AS g FROM generate_series(1, $2::int)) x
				RETURNING id)
			INSERT INTO d6a.atribuicoes (conselheiro_id, demanda_id, unidade_civica_id, seed_publico, posicao_sorteada, total_elegiveis, event_id_sorteio)
			SELECT id, gen_random_uuid(), $1, 'ab', 0, 1, gen_random_uuid() FROM c`, uc, n)
		if err != nil {
			t.Fatal(err)
		}
	}
	novos(1)
	if _, err := s.Pool.Exec(ctx, `ANALYZE d6a.atribuicoes`); err != nil {
		t.Fatal(err)
	}

	// Both executions on one connection, which keeps its prepared
	// statements between them.
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	q := store.On(conn)
	if _, err := q.BuscarCandidatosPorUcs(ctx, []uuid.UUID{uc}); err != nil {
		t.Fatal(err)
	}

	novos(3000) // a burst of draws; no ANALYZE yet
	got, err := q.BuscarCandidatosPorUcs(ctx, []uuid.UUID{uc})
	if err != nil || len(got) != 3001 || !got[0].Ocupado {
		t.Fatalf("BuscarCandidatosPorUcs = %d rows, %v; want 3001 occupied counsellors", len(got), err)
	}
	// The plan that connection's prepared statement runs with now.
	var nome string
	check(t, conn.QueryRow(ctx, `SELECT name FROM pg_prepared_statements
		WHERE statement LIKE '-- name: BuscarCandidatosPorUcs %'`).Scan(&nome))
	rows, err := conn.Query(ctx, `EXPLAIN EXECUTE `+pgx.Identifier{nome}.Sanitize()+`('{`+uc.String()+`}')`)
	if err != nil {
		t.Fatal(err)
	}
	linhas, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	// One index probe by conselheiro_id per candidate: not a scan of the
	// table, nor of an index filtered by conselheiro_id.
	if p := strings.Join(linhas, "\n"); strings.Contains(p, "Seq Scan on atribuicoes") || !strings.Contains(p, "Index Cond: (conselheiro_id = c.id)") {
		t.Fatalf("candidates plan after the table grew:\n%s\nwant an index probe by conselheiro_id per candidate", p)
	}
}
