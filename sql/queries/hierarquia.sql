-- name: BuscarTodasHierarquias :many
-- Read-only, once per cache TTL (spec 6.4); d6a never writes to core.
SELECT id, parent_uc_id FROM core.uc_polygons;

-- name: AdvisoryLockSorteio :one
-- Serializes draws across d6a processes for the life of the transaction,
-- and in the same statement refits the connection's generic plans to the
-- tables the draw path reads (d6a.ajustar_planos), before the reads queued
-- behind it are planned.
SELECT pg_backend_pid()::int AS pid, d6a.ajustar_planos() AS descartou
FROM (SELECT pg_advisory_xact_lock(@chave::bigint)) AS trava;

-- name: AjustarPlanos :one
-- AdvisoryLockSorteio's refit, for the relay's transactions.
SELECT d6a.ajustar_planos();
