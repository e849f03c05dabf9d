-- name: BuscarTodasHierarquias :many
-- Read-only, once per cache TTL (spec 6.4); d6a never writes to core.
SELECT id, parent_uc_id FROM core.uc_polygons;

-- name: AdvisoryLockSorteio :one
-- Serializes draws across d6a processes for the life of the transaction,
-- and in the same round trip tells the connection's backend and the size of
-- the tables the draw path reads (store.TamanhosDasTabelas order), so the
-- connection's generic plans are discarded when a table doubled or halved
-- (store.AjustarPlanos).
SELECT pg_backend_pid()::int AS pid, (
    SELECT ARRAY[
        pg_relation_size('d6a.conselheiros'), pg_relation_size('d6a.atribuicoes'),
        pg_relation_size('d6a.fila_pendentes'), pg_relation_size('d6a.outbox'),
        pg_relation_size('d6a.eventos_processados'), pg_relation_size('d6a.auditoria_sorteios'),
        pg_relation_size('d6a.contador_recusas')
    ]::bigint[]
) AS tamanhos
FROM (SELECT pg_advisory_xact_lock(@chave::bigint)) AS trava;

-- name: TamanhosDasTabelas :one
-- AdvisoryLockSorteio's sizes, for the relay's transactions.
SELECT pg_backend_pid()::int AS pid, ARRAY[
    pg_relation_size('d6a.conselheiros'), pg_relation_size('d6a.atribuicoes'),
    pg_relation_size('d6a.fila_pendentes'), pg_relation_size('d6a.outbox'),
    pg_relation_size('d6a.eventos_processados'), pg_relation_size('d6a.auditoria_sorteios'),
    pg_relation_size('d6a.contador_recusas')
]::bigint[] AS tamanhos;
