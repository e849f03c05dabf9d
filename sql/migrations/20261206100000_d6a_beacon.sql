-- The beacon round every draw mixes in from the d6a.regras_sorteio record
-- on (CONTRACT §4a): the audit keeps the round, its signature and the
-- commitment time; an outbox row of a draw keeps its round for the header
-- D6a-Beacon-Rodada. Draws before the rule keep null.

-- +goose Up
ALTER TABLE d6a.auditoria_sorteios
    ADD COLUMN rodada bigint,
    ADD COLUMN assinatura_rodada text,
    ADD COLUMN compromisso text;
ALTER TABLE d6a.outbox ADD COLUMN beacon_rodada bigint;
-- The draw rule recorded last (regra 'sorteio'): its record's bytes, so a
-- start appends a new d6a.regras_sorteio record only when its own differs.
ALTER TABLE d6a.transparencia_regras ADD COLUMN registro text;

-- +goose Down
DELETE FROM d6a.transparencia_regras WHERE regra = 'sorteio';
ALTER TABLE d6a.transparencia_regras DROP COLUMN registro;
ALTER TABLE d6a.outbox DROP COLUMN beacon_rodada;
ALTER TABLE d6a.auditoria_sorteios
    DROP COLUMN rodada,
    DROP COLUMN assinatura_rodada,
    DROP COLUMN compromisso;
