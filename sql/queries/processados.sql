-- name: SeedOffset :exec
-- spec 4.5 step 2: seeded at the bus head, never overwriting.
INSERT INTO d6a.consumer_offset (tipo_evento, last_sequence, updated_at)
VALUES (@tipo_evento, @last_sequence, @agora::timestamptz)
ON CONFLICT (tipo_evento) DO NOTHING;

-- name: RegistrarEventoProcessado :execrows
-- Returns 0 rows when the event was already applied.
INSERT INTO d6a.eventos_processados (event_id, tipo_evento, sequence, processado_em)
VALUES (@event_id, @tipo_evento, @sequence, @agora::timestamptz)
ON CONFLICT (event_id) DO NOTHING;

-- name: EventoJaProcessado :one
SELECT EXISTS (SELECT 1 FROM d6a.eventos_processados WHERE event_id = @event_id);

-- name: RegistrarProcessamento :exec
-- The end of every handled event, in its transaction: the inbox row and the
-- consumer_offset record (spec 2.6) in one round trip.
WITH inbox AS (
    INSERT INTO d6a.eventos_processados (event_id, tipo_evento, sequence, processado_em)
    VALUES (@event_id, @tipo_evento, @sequence, @agora::timestamptz)
)
INSERT INTO d6a.consumer_offset (tipo_evento, last_sequence, updated_at)
VALUES (@tipo_evento, @sequence, @agora::timestamptz)
ON CONFLICT (tipo_evento) DO UPDATE
SET last_sequence = EXCLUDED.last_sequence, updated_at = EXCLUDED.updated_at;

-- name: EventosJaProcessados :many
-- The inbox look-up of a whole batch in one round trip. One probe of the
-- primary key per event, as a scalar subquery with LIMIT: "event_id =
-- ANY(array)" let the planner read a small inbox whole (thousands of rows
-- per batch) whatever its statistics.
SELECT i.event_id::uuid AS event_id
FROM unnest(@event_ids::uuid[]) AS i (event_id)
WHERE (SELECT 1 FROM d6a.eventos_processados e WHERE e.event_id = i.event_id LIMIT 1) IS NOT NULL;

-- name: RegistrarProcessamentos :exec
-- RegistrarProcessamento for a whole batch, written once before its
-- commit: one inbox row per event, and per type the consumer_offset of the
-- last event of that type in the batch (two unnest in one select list walk
-- the arrays in step).
WITH inbox AS (
    INSERT INTO d6a.eventos_processados (event_id, tipo_evento, sequence, processado_em)
    SELECT unnest(@event_ids::uuid[]), unnest(@tipos::text[]), unnest(@sequences::bigint[]), unnest(@agoras::timestamptz[])
)
INSERT INTO d6a.consumer_offset (tipo_evento, last_sequence, updated_at)
SELECT unnest(@offset_tipos::text[]), unnest(@offset_sequences::bigint[]), unnest(@offset_agoras::timestamptz[])
ON CONFLICT (tipo_evento) DO UPDATE
SET last_sequence = EXCLUDED.last_sequence, updated_at = EXCLUDED.updated_at;
