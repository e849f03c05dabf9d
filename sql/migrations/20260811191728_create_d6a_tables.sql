-- spec 2.2–2.6: the d6a schema as the specification defines it.
-- +goose Up
CREATE SCHEMA IF NOT EXISTS d6a;

CREATE TABLE d6a.conselheiros (
    id                        UUID           PRIMARY KEY DEFAULT gen_random_uuid(),
    cidadao_id                UUID           NOT NULL,
    unidade_civica_id         UUID           NOT NULL,
    nivel_atuacao             INTEGER        NOT NULL DEFAULT 1,
    status                    VARCHAR(20)    NOT NULL DEFAULT 'disponivel',
    capacitacao_concluida     BOOLEAN        NOT NULL DEFAULT false,
    data_cadastro             TIMESTAMPTZ(2) NOT NULL DEFAULT NOW(),
    data_ultima_atribuicao    TIMESTAMPTZ(2),
    data_suspensao_ate        TIMESTAMPTZ(2),
    event_id_cadastro         UUID           NOT NULL,
    event_id_ultima_alteracao UUID           NOT NULL,
    atualizado_em             TIMESTAMPTZ(2) NOT NULL DEFAULT NOW(),

    CONSTRAINT conselheiros_cidadao_id_unidade_civica_id_nivel_atuacao_key
        UNIQUE (cidadao_id, unidade_civica_id, nivel_atuacao)
);

CREATE INDEX conselheiros_unidade_civica_id_status_idx
    ON d6a.conselheiros (unidade_civica_id, status);
CREATE INDEX conselheiros_cidadao_id_idx
    ON d6a.conselheiros (cidadao_id);
CREATE INDEX conselheiros_event_id_cadastro_idx
    ON d6a.conselheiros (event_id_cadastro);

CREATE TABLE d6a.atribuicoes (
    id                    UUID           PRIMARY KEY DEFAULT gen_random_uuid(),
    conselheiro_id        UUID           NOT NULL,
    demanda_id            UUID           NOT NULL,
    unidade_civica_id     UUID           NOT NULL,
    seed_publico          VARCHAR(128)   NOT NULL,
    metodo_sorteio        VARCHAR(30)    NOT NULL DEFAULT 'fisher_yates',
    posicao_sorteada      INTEGER        NOT NULL,
    total_elegiveis       INTEGER        NOT NULL,
    lista_elegiveis_hash  VARCHAR(64),
    status                VARCHAR(20)    NOT NULL DEFAULT 'ativa',
    data_sorteio          TIMESTAMPTZ(2) NOT NULL DEFAULT NOW(),
    event_id_sorteio      UUID           NOT NULL,
    event_id_encerramento UUID,
    criado_em             TIMESTAMPTZ(2) NOT NULL DEFAULT NOW(),

    CONSTRAINT atribuicoes_event_id_sorteio_key
        UNIQUE (event_id_sorteio)
);

CREATE INDEX atribuicoes_conselheiro_id_idx
    ON d6a.atribuicoes (conselheiro_id);
CREATE INDEX atribuicoes_demanda_id_idx
    ON d6a.atribuicoes (demanda_id);
CREATE INDEX atribuicoes_unidade_civica_id_status_idx
    ON d6a.atribuicoes (unidade_civica_id, status);
CREATE INDEX atribuicoes_conselheiro_id_status_idx
    ON d6a.atribuicoes (conselheiro_id, status);

CREATE TABLE d6a.fila_pendentes (
    id                  UUID           PRIMARY KEY DEFAULT gen_random_uuid(),
    demanda_id          UUID           NOT NULL,
    unidade_civica_id   UUID           NOT NULL,
    categoria_id        VARCHAR(10)    NOT NULL,
    nivel_precedencia   INTEGER        NOT NULL,
    score_final         NUMERIC(12,2)  NOT NULL,
    grupo_id            UUID,
    data_entrada        TIMESTAMPTZ(2) NOT NULL DEFAULT NOW(),
    event_id_origem     UUID           NOT NULL,
    tentativas_sorteio  INTEGER        NOT NULL DEFAULT 0,

    CONSTRAINT fila_pendentes_demanda_id_key
        UNIQUE (demanda_id)
);

CREATE INDEX fila_pendentes_unidade_civica_id_data_entrada_idx
    ON d6a.fila_pendentes (unidade_civica_id, data_entrada ASC);

CREATE TABLE d6a.contador_recusas (
    id                     UUID           PRIMARY KEY DEFAULT gen_random_uuid(),
    conselheiro_id         UUID           NOT NULL,
    recusas_consecutivas   INTEGER        NOT NULL DEFAULT 1,
    data_ultima_recusa     TIMESTAMPTZ(2) NOT NULL DEFAULT NOW(),
    demanda_id_recusada    UUID           NOT NULL,
    evento_id_recusa       UUID           NOT NULL,

    CONSTRAINT contador_recusas_evento_id_recusa_key
        UNIQUE (evento_id_recusa)
);

CREATE INDEX contador_recusas_conselheiro_id_idx
    ON d6a.contador_recusas (conselheiro_id);

CREATE TABLE d6a.consumer_offset (
    tipo_evento    VARCHAR(255)  PRIMARY KEY,
    last_sequence  BIGINT        NOT NULL DEFAULT 0,
    updated_at     TIMESTAMPTZ(2) NOT NULL DEFAULT NOW()
);

-- +goose Down
DROP SCHEMA d6a CASCADE;
