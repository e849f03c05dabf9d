-- What the Go design adds to the spec's schema (CONTRACT §4, §5):
-- database-enforced "1 conselheiro = 1 demanda ativa", the draw audit that
-- third parties read, and the transactional outbox of publications.
-- +goose Up
CREATE UNIQUE INDEX atribuicoes_uma_ativa_por_conselheiro_key
    ON d6a.atribuicoes (conselheiro_id) WHERE status = 'ativa';
CREATE UNIQUE INDEX atribuicoes_uma_ativa_por_demanda_key
    ON d6a.atribuicoes (demanda_id) WHERE status = 'ativa';

-- FIFO of the pending queue (spec 4.7) by data_entrada, whose TIMESTAMPTZ(2)
-- ties within 10 ms; the arrival order breaks ties.
ALTER TABLE d6a.fila_pendentes
    ADD COLUMN ordem_entrada BIGINT NOT NULL GENERATED ALWAYS AS IDENTITY;
CREATE INDEX fila_pendentes_data_entrada_ordem_idx
    ON d6a.fila_pendentes (data_entrada, ordem_entrada);

-- Counsellor status 'ocupado' is looked up at boot (spec 4.8) and counted
-- for metrics; the (unidade_civica_id, status) index does not serve it.
CREATE INDEX conselheiros_status_idx ON d6a.conselheiros (status);

CREATE TABLE d6a.auditoria_sorteios (
    event_id_sorteio      UUID        PRIMARY KEY,
    atribuicao_id         UUID        NOT NULL,
    demanda_id            UUID        NOT NULL,
    unidade_civica_id     UUID        NOT NULL,
    conselheiro_id        UUID        NOT NULL,
    base                  TEXT        NOT NULL,
    base_fallback         BOOLEAN     NOT NULL,
    base_sequence         BIGINT,
    timestamp_sorteio     TEXT        NOT NULL,
    seed                  VARCHAR(64) NOT NULL,
    elegiveis_entrada     TEXT[]      NOT NULL,
    ordenados             TEXT[]      NOT NULL,
    selecionado           UUID        NOT NULL,
    lista_elegiveis_hash  VARCHAR(64) NOT NULL,
    degrau                UUID        NOT NULL,
    cadeia                TEXT[]      NOT NULL,
    excluido              UUID,
    criado_em             TIMESTAMPTZ NOT NULL DEFAULT NOW()
);

CREATE INDEX auditoria_sorteios_demanda_id_idx
    ON d6a.auditoria_sorteios (demanda_id);

-- One row per event to publish, written in the transaction that decided it;
-- the relay publishes with Nats-Msg-Id = event_id and records the stream
-- sequence. correlacao_id serves the spec 5.4 guard (one sem_candidatos per
-- correlation).
CREATE TABLE d6a.outbox (
    id             BIGSERIAL   PRIMARY KEY,
    event_id       UUID        NOT NULL UNIQUE,
    tipo           TEXT        NOT NULL,
    subject        TEXT        NOT NULL,
    correlacao_id  TEXT,
    envelope       JSONB       NOT NULL,
    criado_em      TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    publicado_em   TIMESTAMPTZ,
    sequence       BIGINT
);

CREATE INDEX outbox_pendentes_idx ON d6a.outbox (id) WHERE publicado_em IS NULL;
CREATE INDEX outbox_tipo_correlacao_idx ON d6a.outbox (tipo, correlacao_id);

-- Every consumed event applied, written in the handler's transaction: a
-- replay from any sequence (CONTRACT §3) finds it and changes nothing, even
-- when later events moved the state the spec's own guards look at.
CREATE TABLE d6a.eventos_processados (
    event_id       UUID         PRIMARY KEY,
    tipo_evento    VARCHAR(255) NOT NULL,
    sequence       BIGINT       NOT NULL,
    processado_em  TIMESTAMPTZ  NOT NULL
);

-- +goose Down
DROP TABLE d6a.eventos_processados;
DROP TABLE d6a.outbox;
DROP TABLE d6a.auditoria_sorteios;
DROP INDEX d6a.conselheiros_status_idx;
DROP INDEX d6a.fila_pendentes_data_entrada_ordem_idx;
ALTER TABLE d6a.fila_pendentes DROP COLUMN ordem_entrada;
DROP INDEX d6a.atribuicoes_uma_ativa_por_demanda_key;
DROP INDEX d6a.atribuicoes_uma_ativa_por_conselheiro_key;
