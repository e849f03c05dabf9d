-- name: InserirReconciliacao :exec
INSERT INTO d6a.reconciliacoes (event_id_sorteio, atribuicao_id, demanda_id, conselheiro_id, sequence, base, base_sequence, reconciliado_em)
VALUES (@event_id_sorteio, @atribuicao_id, @demanda_id, @conselheiro_id, @sequence, @base, @base_sequence, @agora::timestamptz);

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

-- name: AtribuicoesExistentes :many
-- The consistency check: which of these conselheiro.sorteado have their
-- assignment.
SELECT event_id_sorteio FROM d6a.atribuicoes WHERE event_id_sorteio = ANY(@ids::uuid[]);

-- name: OutboxNaoPublicadoEm :many
-- The repair: the results a unit of work just queued (its rows carry its
-- clock reading, and the global lock keeps every other unit of work out).
SELECT event_id, tipo, (envelope->'payload'->>'demanda_id')::uuid AS demanda_id
FROM d6a.outbox WHERE publicado_em IS NULL AND criado_em = @agora::timestamptz;

-- name: DescartarSorteio :exec
-- The repair: a draw its unit of work just made for a demand the bus already
-- shows drawn is undone before commit (never published): assignment, audit,
-- outbox row, and the counsellor it occupied back to disponivel.
WITH a AS (
    DELETE FROM d6a.atribuicoes t WHERE t.event_id_sorteio = @event_id RETURNING t.conselheiro_id
), au AS (
    DELETE FROM d6a.auditoria_sorteios s WHERE s.event_id_sorteio = @event_id
), o AS (
    DELETE FROM d6a.outbox x WHERE x.event_id = @event_id AND x.publicado_em IS NULL
)
UPDATE d6a.conselheiros c SET status = 'disponivel'
WHERE c.id IN (SELECT a.conselheiro_id FROM a) AND c.status = 'ocupado';
