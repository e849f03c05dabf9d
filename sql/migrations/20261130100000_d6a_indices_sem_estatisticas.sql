-- Indexes that leave the planner one sensible path whether or not
-- PostgreSQL has statistics (issue 11, CONTRACT §5, docs/decisions.md).
--
-- The two "one active assignment" indexes had the same predicate
-- (status = 'ativa'), so a probe by counsellor could walk the demand index
-- (every active assignment, filtered) and a probe by demand the counsellor
-- index: a generic plan built while d6a.atribuicoes was empty, or a table
-- never analyzed, did exactly that. Each predicate now also names its own
-- key column IS NOT NULL: a query implies it only through an equality on
-- that column, so each index serves only the lookups by its own key.
-- Uniqueness is unchanged (NULL keys never collided).
--
-- The spec's (unidade_civica_id, data_entrada) index of the pending queue
-- gets the tie-breaker column too, so "oldest pending of this unit" is one
-- descent that already returns rows in FIFO order, never a walk of the whole
-- queue's order filtered by unit.
-- +goose Up
DROP INDEX d6a.atribuicoes_uma_ativa_por_conselheiro_key;
CREATE UNIQUE INDEX atribuicoes_uma_ativa_por_conselheiro_key
    ON d6a.atribuicoes (conselheiro_id) WHERE status = 'ativa' AND conselheiro_id IS NOT NULL;
DROP INDEX d6a.atribuicoes_uma_ativa_por_demanda_key;
CREATE UNIQUE INDEX atribuicoes_uma_ativa_por_demanda_key
    ON d6a.atribuicoes (demanda_id) WHERE status = 'ativa' AND demanda_id IS NOT NULL;

DROP INDEX d6a.fila_pendentes_unidade_civica_id_data_entrada_idx;
CREATE INDEX fila_pendentes_unidade_civica_id_data_entrada_idx
    ON d6a.fila_pendentes (unidade_civica_id, data_entrada, ordem_entrada);

-- +goose Down
DROP INDEX d6a.fila_pendentes_unidade_civica_id_data_entrada_idx;
CREATE INDEX fila_pendentes_unidade_civica_id_data_entrada_idx
    ON d6a.fila_pendentes (unidade_civica_id, data_entrada);

DROP INDEX d6a.atribuicoes_uma_ativa_por_demanda_key;
CREATE UNIQUE INDEX atribuicoes_uma_ativa_por_demanda_key
    ON d6a.atribuicoes (demanda_id) WHERE status = 'ativa';
DROP INDEX d6a.atribuicoes_uma_ativa_por_conselheiro_key;
CREATE UNIQUE INDEX atribuicoes_uma_ativa_por_conselheiro_key
    ON d6a.atribuicoes (conselheiro_id) WHERE status = 'ativa';
