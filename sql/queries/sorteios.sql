-- name: AdvisoryLockSorteio :one
-- Serializes draws across d6a processes for the life of the transaction,
-- and in the same statement refits the connection's generic plans to the
-- tables the draw path reads (d6a.ajustar_planos), before the reads queued
-- behind it are planned.
SELECT pg_backend_pid()::int AS pid, d6a.ajustar_planos() AS descartou
FROM (SELECT pg_advisory_xact_lock(@chave::bigint)) AS trava;

-- name: GravarSorteios :exec
-- The draws a batch decided in memory, in their order, in one round
-- trip: the assignments
-- with their demand snapshot, the counsellors' status and the audit
-- records. Their outbox rows go with the others (InserirOutboxLote), in
-- decision order.
WITH r AS (
    SELECT * FROM ROWS FROM (jsonb_to_recordset(@linhas::jsonb) AS (
        atribuicao_id uuid, event_id_sorteio uuid, conselheiro_id uuid, demanda_id uuid,
        unidade_civica_id uuid, seed text, posicao_sorteada int, total_elegiveis int,
        lista_elegiveis_hash text, data_sorteio timestamptz, score_final numeric,
        categoria_id text, nivel_precedencia int, grupo_id uuid, base text, base_sequence bigint,
        timestamp_sorteio text, elegiveis_entrada text[], ordenados text[], degrau uuid,
        cadeia text[], excluido uuid, agora timestamptz, status text,
        rodada bigint, assinatura_rodada text, compromisso text
    )) WITH ORDINALITY AS x (
        atribuicao_id, event_id_sorteio, conselheiro_id, demanda_id,
        unidade_civica_id, seed, posicao_sorteada, total_elegiveis,
        lista_elegiveis_hash, data_sorteio, score_final,
        categoria_id, nivel_precedencia, grupo_id, base, base_sequence,
        timestamp_sorteio, elegiveis_entrada, ordenados, degrau,
        cadeia, excluido, agora, status, rodada, assinatura_rodada, compromisso, ordem
    )
), atribuicao AS (
    INSERT INTO d6a.atribuicoes (
        id, conselheiro_id, demanda_id, unidade_civica_id, seed_publico, metodo_sorteio,
        posicao_sorteada, total_elegiveis, lista_elegiveis_hash, status, data_sorteio,
        event_id_sorteio, score_final, categoria_id, nivel_precedencia, grupo_id, criado_em
    )
    SELECT atribuicao_id, conselheiro_id, demanda_id, unidade_civica_id, seed, 'fisher_yates',
        posicao_sorteada, total_elegiveis, lista_elegiveis_hash, 'ativa', data_sorteio,
        event_id_sorteio, score_final, categoria_id, nivel_precedencia, grupo_id, data_sorteio
    FROM r ORDER BY ordem
), ocupado AS (
    -- r.status is the winner's status the rules give
    -- (elegibilidade.StatusAposSorteio).
    UPDATE d6a.conselheiros c
    SET status = r.status, data_ultima_atribuicao = r.data_sorteio,
        event_id_ultima_alteracao = r.event_id_sorteio, atualizado_em = r.data_sorteio
    FROM r
    -- The ids again as an array: an index probe per counsellor whatever the
    -- planner thinks of the JSON rows' count or of the table's size.
    WHERE c.id = ANY(@conselheiros::uuid[]) AND c.id = r.conselheiro_id
)
INSERT INTO d6a.auditoria_sorteios (
    event_id_sorteio, atribuicao_id, demanda_id, unidade_civica_id, conselheiro_id,
    base, base_fallback, base_sequence, timestamp_sorteio, seed, elegiveis_entrada,
    ordenados, selecionado, lista_elegiveis_hash, degrau, cadeia, excluido, criado_em,
    rodada, assinatura_rodada, compromisso
)
SELECT event_id_sorteio, atribuicao_id, demanda_id, unidade_civica_id, conselheiro_id,
    base, false, base_sequence, timestamp_sorteio, seed, elegiveis_entrada,
    ordenados, conselheiro_id, lista_elegiveis_hash, degrau, cadeia, excluido, agora,
    rodada, assinatura_rodada, compromisso
FROM r ORDER BY ordem;

-- name: BuscarAuditoria :one
SELECT * FROM d6a.auditoria_sorteios WHERE event_id_sorteio = @event_id_sorteio;
