-- The console's and the response timeout's index of active assignments by
-- age (20261130300000) had the predicate the "one active assignment"
-- indexes had before 20261130100000: status = 'ativa' alone. Every probe of
-- an active assignment by counsellor or by demand implies it, so a plan
-- fitted while no assignment was active (a database analyzed after a quiet
-- night, then a burst) walked this index, every active assignment, per
-- probe: 346,000 rows read per event in TestCustoSemEstatisticas, 1.3 ms
-- per eligibility query in make bench. Its predicate now also names
-- data_sorteio IS NOT NULL, which only the queries by age imply (their
-- data_sorteio < $1), as 20261130100000 did for the other two.
-- +goose Up
DROP INDEX d6a.atribuicoes_ativas_data_sorteio_idx;
CREATE INDEX atribuicoes_ativas_data_sorteio_idx
    ON d6a.atribuicoes (data_sorteio, id) WHERE status = 'ativa' AND data_sorteio IS NOT NULL;

-- +goose Down
DROP INDEX d6a.atribuicoes_ativas_data_sorteio_idx;
CREATE INDEX atribuicoes_ativas_data_sorteio_idx
    ON d6a.atribuicoes (data_sorteio, id) WHERE status = 'ativa';
