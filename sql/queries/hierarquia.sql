-- name: BuscarTodasHierarquias :many
-- Read-only, once per cache TTL (spec 6.4); d6a never writes to core.
SELECT id, parent_uc_id FROM core.uc_polygons;

-- name: AdvisoryLockSorteio :exec
-- Serializes draws across d6a processes for the life of the transaction.
SELECT pg_advisory_xact_lock(@chave::bigint);
