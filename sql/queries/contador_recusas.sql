-- name: BuscarRecusaPorEventoId :one
SELECT * FROM d6a.contador_recusas WHERE evento_id_recusa = @event_id;

-- name: ContarRecusasDesdeData :one
-- spec 3.12 step 4: refusals since the last acceptance (all when never).
SELECT count(*) FROM d6a.contador_recusas
WHERE conselheiro_id = @conselheiro_id
  AND (sqlc.narg('desde')::timestamptz IS NULL OR data_ultima_recusa > sqlc.narg('desde')::timestamptz);

-- name: InserirRecusa :exec
INSERT INTO d6a.contador_recusas (
    conselheiro_id, recusas_consecutivas, data_ultima_recusa, demanda_id_recusada, evento_id_recusa
) VALUES (
    @conselheiro_id, @recusas_consecutivas, @agora::timestamptz, @demanda_id_recusada, @evento_id_recusa
);
