-- A conselheiro.sorteado found on the bus without its assignment (an
-- asynchronous standby promoted without the draw's commit) is re-created
-- from the published event by `d6a verify --consistencia --reparar`
-- (docs/reliability.md, "Asynchronous standby"). The draw's eligible list
-- is not on the bus, so no d6a.auditoria_sorteios row can be rebuilt; this
-- row says where the assignment came from instead, with the seed's base
-- found on the bus when the seed recomputes from it and the draw's T.
-- +goose Up
CREATE TABLE d6a.reconciliacoes (
    event_id_sorteio  UUID        PRIMARY KEY,
    atribuicao_id     UUID        NOT NULL,
    demanda_id        UUID        NOT NULL,
    conselheiro_id    UUID        NOT NULL,
    sequence          BIGINT      NOT NULL,
    base              TEXT,
    base_sequence     BIGINT,
    reconciliado_em   TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE d6a.reconciliacoes;
