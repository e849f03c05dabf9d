-- name: BuscarTodasHierarquias :many
-- Read-only, once per cache TTL (spec 6.4); d6a never writes to core.
SELECT id, parent_uc_id FROM core.uc_polygons;

-- name: AdvisoryLockSorteio :exec
-- Serializes draws across d6a processes for the life of the transaction.
-- In the same round trip it makes the rest of the unit of work plan each
-- statement for its arguments and the tables as they are now. The pool
-- keeps generic plans (store.Open), built once per connection; built while
-- d6a.atribuicoes held one row (a fresh deployment), the candidates probe
-- scanned the whole table instead of its index, and kept doing so while a
-- burst of draws grew it, until autovacuum's ANALYZE: 1.4 ms a call
-- instead of 0.2 ms over 5,000 draws (docs/bench.md).
SELECT pg_advisory_xact_lock(@chave::bigint), set_config('plan_cache_mode', 'force_custom_plan', true);
