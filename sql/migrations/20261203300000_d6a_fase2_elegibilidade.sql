-- Phase-2 eligibility inputs (spec 8.3, CONTRACT §8, issue 41): the
-- training on the external record, the counsellor's link per unit, the
-- unit of action after a progression (spec 2.7: nivel_progressao), the
-- criteria version of a unit, and the gates in force. The tables of spec 2
-- keep their columns; conselheiros gains two nullable ones.

-- +goose Up
-- The counsellor's level of action after a progressão.habilitada (spec
-- 2.7 "nivel_progressao"); null: never progressed. A progression moves
-- unidade_civica_id to the larger unit, so every eligibility query keeps
-- reading one column; unidade_civica_id_cadastro keeps the unit the
-- registration named (docs/decisions.md).
ALTER TABLE d6a.conselheiros ADD COLUMN nivel_progressao integer;
ALTER TABLE d6a.conselheiros ADD COLUMN unidade_civica_id_cadastro uuid;

-- capacitação.concluída: training verified on the external record, and
-- when (concluida_em as the producer wrote it; registrada_em the service's
-- clock). One row per counsellor: the latest record.
CREATE TABLE d6a.capacitacoes (
    conselheiro_id UUID           PRIMARY KEY,
    curso_id       TEXT           NOT NULL,
    concluida_em   TEXT           NOT NULL,
    event_id       UUID           NOT NULL,
    registrada_em  TIMESTAMPTZ(2) NOT NULL
);

-- vínculo.validado (and the link a progression grants): the counsellor's
-- link to each unit, valid or revoked, the latest input winning. The
-- primary key (conselheiro_id, unidade_civica_id) is the composite index
-- the eligibility probe uses (spec 2.7 "índices compostos para queries de
-- elegibilidade"): one probe per candidate, with or without statistics.
CREATE TABLE d6a.vinculos (
    conselheiro_id    UUID           NOT NULL,
    unidade_civica_id UUID           NOT NULL,
    valido            BOOLEAN        NOT NULL,
    -- origem: 'vinculo.validado' or 'progressao.habilitada'.
    origem            VARCHAR(40)    NOT NULL,
    validado_em       TEXT,
    event_id          UUID           NOT NULL,
    atualizado_em     TIMESTAMPTZ(2) NOT NULL,
    PRIMARY KEY (conselheiro_id, unidade_civica_id)
);

-- Counsellors by level of action and unit (spec 2.7): the progressed ones.
CREATE INDEX conselheiros_nivel_progressao_uc_idx
    ON d6a.conselheiros (nivel_progressao, unidade_civica_id) WHERE nivel_progressao IS NOT NULL;

-- conselheiro.elegibilidade_atualizada: the criteria version of each unit.
CREATE TABLE d6a.criterios_uc (
    unidade_civica_id UUID           PRIMARY KEY,
    versao_parametros TEXT           NOT NULL,
    event_id          UUID           NOT NULL,
    atualizado_em     TIMESTAMPTZ(2) NOT NULL
);

-- The gates in force (D6A_CAPACITACAO_EXTERNA, D6A_EXIGIR_VINCULO), one
-- row per change: a start whose gates differ from the latest row adds one,
-- and its record in the transparency log (CONTRACT §8). No row: both off.
CREATE TABLE d6a.regras_elegibilidade (
    versao              SERIAL         PRIMARY KEY,
    capacitacao_externa BOOLEAN        NOT NULL,
    exigir_vinculo      BOOLEAN        NOT NULL,
    event_id            UUID           NOT NULL,
    criado_em           TIMESTAMPTZ(2) NOT NULL
);

-- The situacao route shows the training record and the link (CONTRACT
-- §8): their changes tell the other processes' caches, as the counsellor
-- row's do (d6a.notificar_situacao reads conselheiro_id).
CREATE TRIGGER capacitacoes_notificar_situacao
    AFTER INSERT OR UPDATE OR DELETE ON d6a.capacitacoes
    FOR EACH ROW EXECUTE FUNCTION d6a.notificar_situacao();
CREATE TRIGGER vinculos_notificar_situacao
    AFTER INSERT OR UPDATE OR DELETE ON d6a.vinculos
    FOR EACH ROW EXECUTE FUNCTION d6a.notificar_situacao();

-- +goose Down
DROP TRIGGER vinculos_notificar_situacao ON d6a.vinculos;
DROP TRIGGER capacitacoes_notificar_situacao ON d6a.capacitacoes;
DROP TABLE d6a.regras_elegibilidade;
DROP TABLE d6a.criterios_uc;
DROP INDEX d6a.conselheiros_nivel_progressao_uc_idx;
DROP TABLE d6a.vinculos;
DROP TABLE d6a.capacitacoes;
ALTER TABLE d6a.conselheiros DROP COLUMN unidade_civica_id_cadastro;
ALTER TABLE d6a.conselheiros DROP COLUMN nivel_progressao;
