package main

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/store"
)

// formaConsulta is one way of reading a counsellor and their active
// assignment, run directly with pgx (no HTTP) by the database-only runs.
type formaConsulta struct {
	rotulo  string // short, for the tables
	nome    string
	viagens int // client/server round trips per read
	ler     func(ctx context.Context, st *store.Store, cidadao uuid.UUID) (ativa bool, err error)
	// semDados: the read does not look at the counsellor (SELECT 1); its
	// answer is not checked against the seed.
	semDados bool
}

// formasConsulta: the handler's own query first (store.BuscarSituacao, as
// internal/httpapi lerSituacao runs it), then the floor of one round trip,
// then the 5-statement transaction the handler used before commit 37bcf25,
// in raw SQL so it does not depend on queries the store may drop.
var formasConsulta = []formaConsulta{
	{
		rotulo:  "database only: the handler's query",
		nome:    "the handler's query (`store.BuscarSituacao`: one SELECT … LEFT JOIN LATERAL, outside a transaction)",
		viagens: 1,
		ler: func(ctx context.Context, st *store.Store, cidadao uuid.UUID) (bool, error) {
			r, err := st.Read().BuscarSituacao(ctx, cidadao)
			return r.TemAtribuicao, err
		},
	},
	{
		rotulo:   "database only: SELECT 1",
		nome:     "`SELECT 1`: the floor of one round trip on the same pool",
		viagens:  1,
		semDados: true,
		ler: func(ctx context.Context, st *store.Store, _ uuid.UUID) (bool, error) {
			var um int
			return false, st.Pool.QueryRow(ctx, "SELECT 1").Scan(&um)
		},
	},
	{
		rotulo:  "database only: previous handler",
		nome:    "the handler before commit 37bcf25: BEGIN; SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; 2 SELECTs; COMMIT",
		viagens: 5,
		ler: func(ctx context.Context, st *store.Store, cidadao uuid.UUID) (ativa bool, err error) {
			err = pgx.BeginFunc(ctx, st.Pool, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"); err != nil {
					return err
				}
				c, err := linha(ctx, tx, sqlConselheiro, cidadao)
				if c == nil && err == nil {
					err = pgx.ErrNoRows // every counsellor asked is registered
				}
				if err != nil {
					return err
				}
				at, err := linha(ctx, tx, sqlAtribuicao, c[0])
				ativa = at != nil
				return err
			})
			return ativa, err
		},
	},
}

// linha reads the first row of sql with every column decoded, as sqlc's
// code did; nil when there is none.
func linha(ctx context.Context, tx pgx.Tx, sql string, arg any) ([]any, error) {
	rows, err := tx.Query(ctx, sql, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, rows.Err()
	}
	return rows.Values()
}

// The two queries of the handler before commit 37bcf25 (sqlc's
// BuscarConselheiroPorCidadao and BuscarAtribuicaoAtivaPorConselheiro).
const (
	sqlConselheiro = `SELECT id, cidadao_id, unidade_civica_id, nivel_atuacao, status, capacitacao_concluida, data_cadastro,
       data_ultima_atribuicao, data_suspensao_ate, event_id_cadastro, event_id_ultima_alteracao, atualizado_em
FROM d6a.conselheiros WHERE cidadao_id = $1 ORDER BY data_cadastro, id`
	sqlAtribuicao = `SELECT id, conselheiro_id, demanda_id, unidade_civica_id, seed_publico, metodo_sorteio, posicao_sorteada,
       total_elegiveis, lista_elegiveis_hash, status, data_sorteio, event_id_sorteio, event_id_encerramento, criado_em,
       score_final, categoria_id, nivel_precedencia, grupo_id
FROM d6a.atribuicoes WHERE conselheiro_id = $1 AND status = 'ativa'`
)

// fechadoBanco is the closed loop of rodarHTTP with a database read in
// place of the HTTP request: -c goroutines share the load generator's pool,
// whose size is pgxpool's default, the same as the server's. A read fails
// on an error or, unless f.semDados, on an answer other than the seed's.
func (a *ambienteHTTP) fechadoBanco(ctx context.Context, f formaConsulta) (resultado, error) {
	r, err := a.rodar(ctx, a.o.c, 0, func() pedido {
		var k int
		return pedido{
			preparar: func(i int) { k = i % len(a.cidadaos) },
			fazer: func() (int, bool) {
				ativa, err := f.ler(ctx, a.st, a.cidadaos[k])
				return 0, err == nil && (f.semDados || ativa == (k < a.o.ativos))
			},
		}
	})
	if err != nil {
		return resultado{}, err
	}
	viagens := fmt.Sprintf("%d round trips", f.viagens)
	if f.viagens == 1 {
		viagens = "1 round trip"
	}
	r.Nome, r.Detalhe, r.Viagens = f.rotulo+" ("+viagens+")", f.nome, f.viagens
	logf("    %s", r.resumo())
	return r, nil
}
