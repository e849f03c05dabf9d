-- Cosignatures of the transparency log's checkpoints by independent
-- witnesses (C2SP tlog-witness, tlog-cosignature; CONTRACT §7 "Witnesses",
-- issue 23). One row per witness key and checkpoint size: the signature
-- line the witness returned, exactly, and when it cosigned (the timestamp
-- inside a cosignature/v1) and when d6a received it. The checkpoint route
-- serves its checkpoint with every row of its size appended.

-- +goose Up
CREATE TABLE d6a.transparencia_cossinaturas (
    chave        text        NOT NULL,
    tamanho      bigint      NOT NULL,
    linha        text        NOT NULL,
    cossinada_em timestamptz NOT NULL,
    recebida_em  timestamptz NOT NULL,
    PRIMARY KEY (chave, tamanho)
);
-- The route reads the latest checkpoint's cosignatures by size.
CREATE INDEX transparencia_cossinaturas_tamanho_idx ON d6a.transparencia_cossinaturas (tamanho);

-- +goose Down
DROP TABLE d6a.transparencia_cossinaturas;
