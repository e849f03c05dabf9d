-- Operating D-6a (issue 13, CONTRACT §2, §3, §6): the administrative
-- console's append-only journal, the versioned parameters of spec 8.3
-- (d6a.config), when each assignment started (conselheiro.demanda_iniciada),
-- the suspensions with the parameter version they were decided under, and
-- that version on every draw's audit record. The spec's tables keep their
-- names and columns.
-- +goose Up

-- d6a.config: one row per version of the parameters; version 1 comes from
-- the environment at boot, later ones from POST /d6a/admin/parametros. A
-- version is never edited nor deleted (trigger below): the history is the
-- record of what rule decided each suspension.
CREATE TABLE d6a.config (
    versao                 INTEGER     PRIMARY KEY CHECK (versao >= 1),
    n_recusas_suspensao    INTEGER     NOT NULL CHECK (n_recusas_suspensao >= 0),
    t_suspensao_dias       INTEGER     NOT NULL CHECK (t_suspensao_dias >= 0),
    timeout_resposta_horas INTEGER     NOT NULL CHECK (timeout_resposta_horas >= 1),
    sub                    TEXT        NOT NULL,
    justificativa          TEXT        NOT NULL,
    criado_em              TIMESTAMPTZ NOT NULL
);

-- d6a.acoes_administrativas: every write of the console, in the unit of work
-- that made it (who, what, target, why, when, the event it caused).
CREATE TABLE d6a.acoes_administrativas (
    id             BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    sub            TEXT        NOT NULL,
    acao           TEXT        NOT NULL,
    alvo           TEXT        NOT NULL,
    justificativa  TEXT        NOT NULL CHECK (btrim(justificativa) <> ''),
    criado_em      TIMESTAMPTZ NOT NULL,
    event_id       UUID,
    detalhes       JSONB
);
CREATE INDEX acoes_administrativas_criado_em_idx ON d6a.acoes_administrativas (criado_em, id);

-- +goose StatementBegin
CREATE FUNCTION d6a.somente_insercao() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'd6a.% é somente inserção (%)', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
-- +goose StatementEnd
CREATE TRIGGER config_somente_insercao
    BEFORE UPDATE OR DELETE ON d6a.config
    FOR EACH ROW EXECUTE FUNCTION d6a.somente_insercao();
CREATE TRIGGER acoes_administrativas_somente_insercao
    BEFORE UPDATE OR DELETE ON d6a.acoes_administrativas
    FOR EACH ROW EXECUTE FUNCTION d6a.somente_insercao();

-- When each assignment started (conselheiro.demanda_iniciada, spec §9's
-- "ocupado há mais de X dias sem conselheiro.demanda_iniciada").
CREATE TABLE d6a.atribuicoes_iniciadas (
    atribuicao_id     UUID        PRIMARY KEY,
    event_id_sorteio  UUID        NOT NULL,
    conselheiro_id    UUID        NOT NULL,
    demanda_id        UUID        NOT NULL,
    iniciada_em       TIMESTAMPTZ NOT NULL,
    event_id          UUID        NOT NULL UNIQUE,
    registrado_em     TIMESTAMPTZ NOT NULL
);

-- Active assignments by age: the console's "ocupados" and the automatic
-- timeout walk the oldest first.
CREATE INDEX atribuicoes_ativas_data_sorteio_idx
    ON d6a.atribuicoes (data_sorteio, id) WHERE status = 'ativa';

-- Every suspension decided by a refusal (spec 3.12 step 4), with the
-- parameter version in force.
CREATE TABLE d6a.suspensoes (
    id                    BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    conselheiro_id        UUID        NOT NULL,
    evento_id_recusa      UUID        NOT NULL,
    recusas_consecutivas  INTEGER     NOT NULL,
    data_suspensao_ate    TIMESTAMPTZ NOT NULL,
    versao_parametros     INTEGER     NOT NULL REFERENCES d6a.config (versao),
    criado_em             TIMESTAMPTZ NOT NULL
);
CREATE INDEX suspensoes_conselheiro_id_idx ON d6a.suspensoes (conselheiro_id, criado_em);

-- The draw's audit record carries the parameter version in force. The
-- version is read when the row is inserted, in the draw's own transaction
-- (which holds the executor's lock, as every parameter change does), so the
-- draw code need not carry it; NULL for draws made before this migration.
ALTER TABLE d6a.auditoria_sorteios ADD COLUMN versao_parametros INTEGER;
-- +goose StatementBegin
CREATE FUNCTION d6a.auditoria_versao_parametros() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.versao_parametros IS NULL THEN
        SELECT max(versao) INTO NEW.versao_parametros FROM d6a.config;
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER auditoria_sorteios_versao_parametros
    BEFORE INSERT ON d6a.auditoria_sorteios
    FOR EACH ROW EXECUTE FUNCTION d6a.auditoria_versao_parametros();

-- +goose Down
DROP TRIGGER auditoria_sorteios_versao_parametros ON d6a.auditoria_sorteios;
DROP FUNCTION d6a.auditoria_versao_parametros();
ALTER TABLE d6a.auditoria_sorteios DROP COLUMN versao_parametros;
DROP TABLE d6a.suspensoes;
DROP INDEX d6a.atribuicoes_ativas_data_sorteio_idx;
DROP TABLE d6a.atribuicoes_iniciadas;
DROP TABLE d6a.acoes_administrativas;
DROP TABLE d6a.config;
DROP FUNCTION d6a.somente_insercao();
