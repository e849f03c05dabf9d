-- name: BuscarFilaPendentePorDemandaId :one
SELECT * FROM d6a.fila_pendentes WHERE demanda_id = @demanda_id;

-- name: BuscarCabecasDaFilaPorUcs :many
-- The input of spec 4.7's rule (fila.Devida), read, not decided: the row
-- at the head of each unit's queue in the index's order, at most one per
-- unit of @ucs, each one descent of
-- fila_pendentes_unidade_civica_id_data_entrada_idx (the planner never
-- gets to walk the whole queue filtering by unit, issue 11). Go picks the
-- demand a release serves among them.
SELECT f.* FROM unnest(@ucs::uuid[]) AS u(uc)
CROSS JOIN LATERAL (
    SELECT p.* FROM d6a.fila_pendentes p
    WHERE p.unidade_civica_id = u.uc
    ORDER BY p.data_entrada, p.ordem_entrada
    LIMIT 1
) f;

-- name: BuscarTodosPendentes :many
SELECT * FROM d6a.fila_pendentes ORDER BY data_entrada, ordem_entrada;

-- name: RemoverFilaPendentePorDemanda :execrows
DELETE FROM d6a.fila_pendentes WHERE demanda_id = @demanda_id;

-- name: ContarPendentes :one
SELECT count(*) FROM d6a.fila_pendentes;

-- name: EnfileirarPendentes :exec
-- spec 4.4 step 2 for the demands a batch (or one unit) queued in memory:
-- each enters the pending queue or, already there, counts its failed
-- attempts (T35), in their order (the FIFO's ordem_entrada follows it), in
-- one round trip.
INSERT INTO d6a.fila_pendentes (
    id, demanda_id, unidade_civica_id, categoria_id, nivel_precedencia, score_final,
    grupo_id, data_entrada, event_id_origem, tentativas_sorteio
)
SELECT md5('d6a.fila_pendentes|' || demanda_id::text)::uuid, demanda_id, unidade_civica_id, categoria_id, nivel_precedencia, score_final,
    grupo_id, agora, event_id_origem, tentativas
FROM ROWS FROM (jsonb_to_recordset(@linhas::jsonb) AS (
    demanda_id uuid, unidade_civica_id uuid, categoria_id text, nivel_precedencia int,
    score_final numeric, grupo_id uuid, agora timestamptz, event_id_origem uuid, tentativas int
)) WITH ORDINALITY AS x (
    demanda_id, unidade_civica_id, categoria_id, nivel_precedencia,
    score_final, grupo_id, agora, event_id_origem, tentativas, ordem
)
ORDER BY ordem
ON CONFLICT (demanda_id) DO UPDATE
SET tentativas_sorteio = d6a.fila_pendentes.tentativas_sorteio + EXCLUDED.tentativas_sorteio;

-- name: ListarFila :many
-- The pending queue, oldest first, optionally of one unit.
SELECT * FROM d6a.fila_pendentes
WHERE (sqlc.narg('uc')::uuid IS NULL OR unidade_civica_id = sqlc.narg('uc')::uuid)
ORDER BY data_entrada, ordem_entrada
LIMIT @limite;

-- name: ResumoFila :one
-- The pending queue by age at @agora, in one scan: the age buckets of
-- d6a_fila_pendentes_por_idade and the oldest demand's age in seconds.
SELECT
    count(*) FILTER (WHERE data_entrada > sqlc.arg(agora)::timestamptz - interval '1 hour') AS ate_1h,
    count(*) FILTER (WHERE data_entrada <= sqlc.arg(agora)::timestamptz - interval '1 hour'
                       AND data_entrada > sqlc.arg(agora)::timestamptz - interval '24 hours') AS de_1h_a_24h,
    count(*) FILTER (WHERE data_entrada <= sqlc.arg(agora)::timestamptz - interval '24 hours'
                       AND data_entrada > sqlc.arg(agora)::timestamptz - interval '72 hours') AS de_24h_a_72h,
    count(*) FILTER (WHERE data_entrada <= sqlc.arg(agora)::timestamptz - interval '72 hours'
                       AND data_entrada > sqlc.arg(agora)::timestamptz - interval '7 days') AS de_72h_a_7d,
    count(*) FILTER (WHERE data_entrada <= sqlc.arg(agora)::timestamptz - interval '7 days') AS mais_de_7d,
    COALESCE(EXTRACT(EPOCH FROM sqlc.arg(agora)::timestamptz) - EXTRACT(EPOCH FROM min(data_entrada)), 0)::float8 AS mais_antiga_segundos
FROM d6a.fila_pendentes;
