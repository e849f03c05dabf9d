-- The civic-unit links the transparency log holds (CONTRACT §7
-- "Hierarchy"): for each unit a decision's chain climbed, the parent its
-- latest hierarquia.uc record names (NULL: a root). The executor reads it
-- to know which links are already public, and upserts it in the
-- transaction that appends their records, so the table and the log never
-- disagree. Units are public geography, never personal data.

-- +goose Up
CREATE TABLE d6a.hierarquia_registrada (
    unidade_civica_id uuid    PRIMARY KEY,
    parent_uc_id      uuid    NULL,
    nivel             integer NOT NULL CHECK (nivel >= 0)
);

-- +goose Down
DROP TABLE d6a.hierarquia_registrada;
