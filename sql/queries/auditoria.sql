-- name: BuscarAuditoria :one
SELECT * FROM d6a.auditoria_sorteios WHERE event_id_sorteio = @event_id_sorteio;
