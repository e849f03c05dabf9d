-- The fairness statistics of the transparency log (CONTRACT §7 "Fairness
-- statistics"): the sums internal/estatisticas folds from the signed records,
-- one row per counsellor, and how far the fold has gone.

-- name: TravarEstatisticas :one
-- One fold at a time across instances, for the life of the transaction; the
-- sums are a cache of the signed log, so the fold does not wait for its WAL
-- to reach the disk.
SELECT pg_try_advisory_xact_lock(@chave::bigint) AS travado,
       set_config('synchronous_commit', 'off', true) = 'off' AS assincrono;

-- name: EstadoEstatisticas :one
-- The totals folded so far, and the size of the latest signed checkpoint:
-- only records under it are folded.
SELECT e.registros, e.sorteios, e.sorteios_n1,
       coalesce((SELECT max(tamanho) FROM d6a.transparencia_checkpoints), 0)::bigint AS assinado
FROM d6a.transparencia_estatisticas_estado e;

-- name: RegistrosParaEstatisticas :many
-- The records of one fold, in log order.
SELECT indice, registro FROM d6a.transparencia_registros
WHERE indice >= @desde AND indice < @ate ORDER BY indice;

-- name: EstatisticasDe :many
-- The stored sums of the counsellors a fold touches.
SELECT conselheiro_id, sorteios_elegivel, esperado, observado, variancia, esperado_n2, observado_n2
FROM d6a.transparencia_estatisticas WHERE conselheiro_id = ANY(@ids::text[]);

-- name: TodasEstatisticas :many
-- Every counsellor's stored sums (the route's answer lists them all).
SELECT conselheiro_id, sorteios_elegivel, esperado, observado, variancia, esperado_n2, observado_n2
FROM d6a.transparencia_estatisticas;

-- name: EstatisticasApos :many
-- One page of the stored sums in primary-key order, after the id apos: the
-- service's p-value metric streams them without holding every counsellor.
SELECT conselheiro_id, sorteios_elegivel, esperado, observado, variancia, esperado_n2, observado_n2
FROM d6a.transparencia_estatisticas WHERE conselheiro_id > @apos::text
ORDER BY conselheiro_id LIMIT @limite;

-- name: GravarEstatisticas :exec
-- A fold's new sums of the counsellors it touched, in one statement.
INSERT INTO d6a.transparencia_estatisticas AS t
    (conselheiro_id, sorteios_elegivel, esperado, observado, variancia, esperado_n2, observado_n2)
SELECT u.conselheiro_id, u.sorteios_elegivel, u.esperado, u.observado, u.variancia, u.esperado_n2, u.observado_n2
FROM (SELECT unnest(@ids::text[]) AS conselheiro_id, unnest(@sorteios_elegivel::bigint[]) AS sorteios_elegivel,
             unnest(@esperado::float8[]) AS esperado, unnest(@observado::bigint[]) AS observado,
             unnest(@variancia::float8[]) AS variancia, unnest(@esperado_n2::float8[]) AS esperado_n2,
             unnest(@observado_n2::bigint[]) AS observado_n2) AS u
ON CONFLICT (conselheiro_id) DO UPDATE SET
    sorteios_elegivel = excluded.sorteios_elegivel,
    esperado = excluded.esperado,
    observado = excluded.observado,
    variancia = excluded.variancia,
    esperado_n2 = excluded.esperado_n2,
    observado_n2 = excluded.observado_n2;

-- name: AvancarEstatisticas :exec
-- How far the fold has gone, and its totals.
UPDATE d6a.transparencia_estatisticas_estado
SET registros = @registros, sorteios = sorteios + @sorteios, sorteios_n1 = sorteios_n1 + @sorteios_n1;

-- name: RecomecarEstatisticas :exec
-- An erasure (d6a log-eliminar) changed records already folded: the sums
-- start again from record 0, over the records as they are now.
WITH d AS (DELETE FROM d6a.transparencia_estatisticas)
UPDATE d6a.transparencia_estatisticas_estado SET registros = 0, sorteios = 0, sorteios_n1 = 0;
