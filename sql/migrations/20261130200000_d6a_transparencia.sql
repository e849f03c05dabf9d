-- The public transparency log (CONTRACT §7, docs/verificacao.md): every
-- successful draw is the next leaf of an RFC 6962 Merkle tree whose hashes
-- are stored here by golang.org/x/mod/sumdb/tlog, in the draw's own
-- transaction. Rows are only ever inserted; the one allowed change is the
-- elimination of a record's body (spec 2.2 / N-0d): registro becomes NULL,
-- hash_folha and every tree hash stay, so all other proofs still verify.
-- +goose Up
CREATE TABLE d6a.transparencia_registros (
    indice           bigint PRIMARY KEY CHECK (indice >= 0),
    event_id_sorteio uuid NOT NULL UNIQUE,
    demanda_id       uuid NOT NULL,
    -- the leaf's exact bytes (compact JSON); NULL once eliminated
    registro         bytea NULL,
    hash_folha       bytea NOT NULL CHECK (octet_length(hash_folha) = 32),
    eliminado_em     timestamptz NULL,
    CHECK ((registro IS NULL) = (eliminado_em IS NOT NULL))
);
CREATE INDEX transparencia_registros_demanda_idx ON d6a.transparencia_registros (demanda_id, indice);

-- tlog stored hashes, by storage index (tlog.StoredHashIndex).
CREATE TABLE d6a.transparencia_hashes (
    indice bigint PRIMARY KEY CHECK (indice >= 0),
    hash   bytea NOT NULL CHECK (octet_length(hash) = 32)
);

-- One row: the tree size and its frontier (the hashes of the complete
-- subtrees of the tree, left to right: all that the next append reads).
-- Every append updates it only if it still holds what the append computed
-- from, so two transactions can never pick the same leaf index even
-- outside the draw's advisory lock.
CREATE TABLE d6a.transparencia_estado (
    id        boolean PRIMARY KEY DEFAULT true CHECK (id),
    tamanho   bigint NOT NULL CHECK (tamanho >= 0),
    fronteira bytea NOT NULL
);
INSERT INTO d6a.transparencia_estado (id, tamanho, fronteira) VALUES (true, 0, '');

-- Every checkpoint ever signed (a C2SP tlog-checkpoint signed note); the
-- latest is the one with the largest size. Instances share them, so all
-- serve the same checkpoints.
CREATE TABLE d6a.transparencia_checkpoints (
    tamanho     bigint PRIMARY KEY CHECK (tamanho >= 0),
    raiz        bytea NOT NULL CHECK (octet_length(raiz) = 32),
    nota        text NOT NULL,
    assinado_em timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE d6a.transparencia_checkpoints;
DROP TABLE d6a.transparencia_estado;
DROP TABLE d6a.transparencia_hashes;
DROP TABLE d6a.transparencia_registros;
