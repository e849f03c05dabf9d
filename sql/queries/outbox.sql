-- name: ExisteOutboxPorTipoCorrelacao :one
-- spec 5.4: one sorteio.sem_candidatos per correlacao_id.
SELECT EXISTS (
    SELECT 1 FROM d6a.outbox WHERE tipo = @tipo AND correlacao_id = @correlacao_id
);

-- name: BuscarOutboxPendentes :many
-- Oldest first; SKIP LOCKED lets a second instance's relay take other rows.
SELECT id, event_id, subject, envelope, entrada_sequence, beacon_rodada FROM d6a.outbox
WHERE publicado_em IS NULL
ORDER BY id
LIMIT @limite
FOR UPDATE SKIP LOCKED;

-- name: MarcarOutboxPublicados :exec
-- One statement per relay pass, however many rows it published: ids[i] was
-- acknowledged by the bus with stream sequence sequences[i] (two unnest in
-- one select list walk the arrays in step; sqlc does not know the two-array
-- unnest).
UPDATE d6a.outbox o SET publicado_em = @agora::timestamptz, sequence = p.sequence
FROM (SELECT unnest(@ids::bigint[]) AS id, unnest(@sequences::bigint[]) AS sequence) p
WHERE o.id = p.id AND o.publicado_em IS NULL;

-- name: ContarOutboxPendentes :one
SELECT count(*) FROM d6a.outbox WHERE publicado_em IS NULL;

-- name: BuscarOutboxPorEventId :one
SELECT * FROM d6a.outbox WHERE event_id = @event_id;

-- name: MarcarOutboxPublicadosPorEventId :exec
-- The executor's direct publication after commit (the relay only sweeps):
-- event_ids[i] was acknowledged with stream sequence sequences[i].
UPDATE d6a.outbox o SET publicado_em = @agora::timestamptz, sequence = p.sequence
FROM (SELECT unnest(@event_ids::uuid[]) AS event_id, unnest(@sequences::bigint[]) AS sequence) p
WHERE o.event_id = p.event_id AND o.publicado_em IS NULL;

-- name: InserirOutboxLote :exec
-- The outbox rows a batch decided in memory, in decision order (the relay's
-- order), in one round trip.
INSERT INTO d6a.outbox (event_id, tipo, subject, correlacao_id, envelope, criado_em, entrada_sequence, beacon_rodada)
SELECT event_id, tipo, subject, correlacao_id, envelope, criado_em, entrada_sequence, beacon_rodada
FROM ROWS FROM (jsonb_to_recordset(@linhas::jsonb) AS (
    event_id uuid, tipo text, subject text, correlacao_id text, envelope jsonb, criado_em timestamptz,
    entrada_sequence bigint, beacon_rodada bigint
)) WITH ORDINALITY AS x (event_id, tipo, subject, correlacao_id, envelope, criado_em, entrada_sequence, beacon_rodada, ordem)
ORDER BY ordem;

-- name: ExisteOutboxPorEventId :one
SELECT EXISTS (SELECT 1 FROM d6a.outbox WHERE event_id = @event_id);

-- name: InserirOutboxPublicado :exec
-- A result already on the bus (reconciliation): the row the relay would have
-- marked, so the relay never sends it and the spec 5.4 guard sees it.
INSERT INTO d6a.outbox (event_id, tipo, subject, correlacao_id, envelope, criado_em, publicado_em, sequence)
VALUES (@event_id, @tipo, @subject, @correlacao_id, @envelope, @agora::timestamptz, @agora::timestamptz, @sequence)
ON CONFLICT (event_id) DO NOTHING;

-- name: OutboxExistentes :many
-- The consistency check: which of these published event ids have their
-- outbox row.
SELECT event_id FROM d6a.outbox WHERE event_id = ANY(@ids::uuid[]);

-- name: AjustarPlanos :one
-- AdvisoryLockSorteio's refit, for the relay's transactions.
SELECT d6a.ajustar_planos();
