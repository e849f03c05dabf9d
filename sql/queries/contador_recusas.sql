-- name: BuscarRecusaPorEventoId :one
SELECT * FROM d6a.contador_recusas WHERE evento_id_recusa = @event_id;

-- name: ContarRecusasDesdeData :one
-- spec 3.12 step 4: refusals since the last acceptance (all when never).
SELECT count(*) FROM d6a.contador_recusas
WHERE conselheiro_id = @conselheiro_id
  AND (sqlc.narg('desde')::timestamptz IS NULL OR data_ultima_recusa > sqlc.narg('desde')::timestamptz);

-- name: InserirRecusa :exec
-- The row id comes from the refusal, not at random (issue 22, determinism
-- from the bus).
INSERT INTO d6a.contador_recusas (
    id, conselheiro_id, recusas_consecutivas, data_ultima_recusa, demanda_id_recusada, evento_id_recusa
) VALUES (
    md5('d6a.contador_recusas|' || (@evento_id_recusa::uuid)::text)::uuid, @conselheiro_id, @recusas_consecutivas, @agora::timestamptz, @demanda_id_recusada, @evento_id_recusa
);
