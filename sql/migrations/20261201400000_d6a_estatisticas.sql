-- The fairness statistics of the transparency log (CONTRACT §7 "Fairness
-- statistics", issue 23), kept incrementally so that GET
-- /d6a/transparencia/estatisticas reads one row per counsellor whatever
-- the number of draws: each counsellor's sums over the draws processed so
-- far (internal/equidade defines them), and how far the log was
-- processed. Counsellor ids are the records' text, as the records hold
-- them.

-- +goose Up
CREATE TABLE d6a.transparencia_estatisticas (
    conselheiro_id    text             PRIMARY KEY,
    sorteios_elegivel bigint           NOT NULL,
    esperado          double precision NOT NULL,
    observado         bigint           NOT NULL,
    variancia         double precision NOT NULL,
    esperado_n2       double precision NOT NULL,
    observado_n2      bigint           NOT NULL
);
CREATE TABLE d6a.transparencia_estatisticas_estado (
    um          boolean PRIMARY KEY DEFAULT true CHECK (um),
    registros   bigint  NOT NULL,
    sorteios    bigint  NOT NULL,
    sorteios_n1 bigint  NOT NULL
);
INSERT INTO d6a.transparencia_estatisticas_estado (registros, sorteios, sorteios_n1) VALUES (0, 0, 0);

-- +goose Down
DROP TABLE d6a.transparencia_estatisticas_estado;
DROP TABLE d6a.transparencia_estatisticas;
