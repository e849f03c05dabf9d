-- spec 2.3 / 2.7: the demand snapshot kept on each assignment, reused by the
-- re-draw after a refusal.
-- +goose Up
ALTER TABLE d6a.atribuicoes
    ADD COLUMN score_final       NUMERIC(12,2) NOT NULL DEFAULT 0,
    ADD COLUMN categoria_id      VARCHAR(10)   NOT NULL DEFAULT '',
    ADD COLUMN nivel_precedencia INTEGER       NOT NULL DEFAULT 1,
    ADD COLUMN grupo_id          UUID;

-- +goose Down
ALTER TABLE d6a.atribuicoes
    DROP COLUMN score_final,
    DROP COLUMN categoria_id,
    DROP COLUMN nivel_precedencia,
    DROP COLUMN grupo_id;
