-- The public transparency log (CONTRACT §7): its Merkle tree's leaves, hashes
-- and state, and its signed checkpoints. internal/transparencia computes
-- every hash; these statements only store and read them, behind store/log.go's methods.

-- name: BuscarEstadoTransparencia :one
-- The tree's size and frontier, and the latest signed checkpoint read with
-- them (0 and NULL before the first). Not locked: appenders are serialised
-- by the draw's lock, and the append checks the state it computed from.
SELECT e.tamanho, e.fronteira, coalesce(c.tamanho, 0)::bigint AS assinado, c.raiz AS raiz_assinada
FROM d6a.transparencia_estado e
LEFT JOIN LATERAL (SELECT tamanho, raiz FROM d6a.transparencia_checkpoints ORDER BY tamanho DESC LIMIT 1) c ON true;

-- name: AnexarTransparencia :exec
-- An append computed from the state (tamanho, fronteira): the records,
-- their leaf hashes and every tlog hash they add. When the state row is not
-- that any more, the hashes it would write are NULL and their NOT NULL
-- constraints fail the statement: a queued append cannot commit a batch
-- whose draws miss their leaves. ROWS FROM (unnest(a), unnest(b)) is what
-- PostgreSQL makes of unnest(a, b), which sqlc's catalog lacks.
WITH e AS (
    UPDATE d6a.transparencia_estado SET tamanho = sqlc.arg(tamanho)::bigint + sqlc.arg(novas)::bigint, fronteira = sqlc.arg(nova_fronteira)::bytea
    WHERE tamanho = sqlc.arg(tamanho)::bigint AND fronteira = sqlc.arg(fronteira)::bytea
    RETURNING 1
), r AS (
    INSERT INTO d6a.transparencia_registros (indice, event_id_sorteio, demanda_id, registro, hash_folha)
    SELECT x.i, x.ev, x.dem, x.reg, CASE WHEN EXISTS (SELECT FROM e) THEN x.hf END
    FROM ROWS FROM (unnest(sqlc.arg(indices)::bigint[]), unnest(sqlc.arg(eventos)::uuid[]), unnest(sqlc.arg(demandas)::uuid[]),
                    unnest(sqlc.arg(registros)::bytea[]), unnest(sqlc.arg(hashes_folha)::bytea[])) AS x (i, ev, dem, reg, hf)
)
INSERT INTO d6a.transparencia_hashes (indice, hash)
SELECT x.i, CASE WHEN EXISTS (SELECT FROM e) THEN x.h END
FROM ROWS FROM (unnest(sqlc.arg(indices_hashes)::bigint[]), unnest(sqlc.arg(hashes)::bytea[])) AS x (i, h);

-- name: BuscarHashesTransparencia :many
-- Stored tlog hashes by storage index.
SELECT indice, hash FROM d6a.transparencia_hashes WHERE indice = ANY(@indices::bigint[]);

-- name: BuscarTamanhoTransparencia :one
SELECT tamanho FROM d6a.transparencia_estado;

-- name: BuscarFolhaPorEvento :one
SELECT indice, event_id_sorteio, registro, hash_folha FROM d6a.transparencia_registros
WHERE event_id_sorteio = @event_id;

-- name: BuscarFolhas :many
-- Leaves inicio ≤ indice < fim, at most limite of them.
SELECT indice, event_id_sorteio, registro, hash_folha FROM d6a.transparencia_registros
WHERE indice >= @inicio AND indice < @fim ORDER BY indice LIMIT @limite;

-- name: BuscarFolhasPorDemanda :many
-- A demand's draws below size fim, oldest first.
SELECT indice, event_id_sorteio FROM d6a.transparencia_registros
WHERE demanda_id = @demanda_id AND indice < @fim ORDER BY indice;

-- name: EliminarRegistroTransparencia :many
-- Blanks a draw's record body (spec 2.2 / N-0d); the leaf hash stays. Its
-- index goes into the d6a.eliminacao record.
UPDATE d6a.transparencia_registros SET registro = NULL, eliminado_em = now()
WHERE event_id_sorteio = @event_id AND registro IS NOT NULL
RETURNING indice, event_id_sorteio;

-- name: EliminarRegistrosDoCidadao :many
-- Blanks every record that names the citizen (a full scan of the records
-- not yet eliminated; eliminations are rare).
UPDATE d6a.transparencia_registros SET registro = NULL, eliminado_em = now()
WHERE registro IS NOT NULL AND position(convert_to(@cidadao::text, 'UTF8') IN registro) > 0
RETURNING indice, event_id_sorteio;

-- name: AdvisoryLockAssinatura :exec
-- Serialises checkpoint signing across instances, for the transaction.
SELECT pg_advisory_xact_lock(@chave::bigint);

-- name: InserirCheckpoint :exec
INSERT INTO d6a.transparencia_checkpoints (tamanho, raiz, nota) VALUES (@tamanho, @raiz, @nota)
ON CONFLICT (tamanho) DO NOTHING;

-- name: BuscarUltimoCheckpoint :one
SELECT tamanho, raiz, nota FROM d6a.transparencia_checkpoints ORDER BY tamanho DESC LIMIT 1;

-- name: BuscarIndicesPorEventos :many
-- The indices of the records with these ids (the commitment records
-- already appended).
SELECT indice, event_id_sorteio FROM d6a.transparencia_registros
WHERE event_id_sorteio = ANY(@ids::uuid[]);

-- name: BuscarResumoDoLog :one
-- GET /d6a/transparencia/resumo: the latest signed checkpoint (no row
-- before the first) and the first index whose draws follow their trigger
-- (CONTRACT §4; 0 when the rule has no row).
SELECT c.tamanho, c.raiz, c.assinado_em,
       coalesce((SELECT desde_indice FROM d6a.transparencia_regras WHERE regra = 'gatilho'), 0)::bigint AS gatilho_desde
FROM d6a.transparencia_checkpoints c
ORDER BY c.tamanho DESC
LIMIT 1;
