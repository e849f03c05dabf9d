-- The rules the transparency log's records were made under (issue 22): from
-- desde_indice on, a draw's seed follows its trigger (CONTRACT §4: base =
-- the trigger's event_id, T = its stream time), and a verifier that reads
-- the bus checks both exactly; the records before it were made under the
-- earlier rule (the latest message d6a knew of, T from its clock) and are
-- checked by the earlier window. The migration runs before the new
-- executor appends anything, so the log's size now is where the rule
-- begins.

-- +goose Up
CREATE TABLE d6a.transparencia_regras (
    regra         text        PRIMARY KEY,
    desde_indice  bigint      NOT NULL CHECK (desde_indice >= 0),
    registrada_em timestamptz NOT NULL DEFAULT now()
);
INSERT INTO d6a.transparencia_regras (regra, desde_indice)
SELECT 'gatilho', count(*) FROM d6a.transparencia_registros;

-- +goose Down
DROP TABLE d6a.transparencia_regras;
