-- name: InserirConselheiro :exec
-- spec 3.10 step 3: unified identity, id = cidadao_id.
INSERT INTO d6a.conselheiros (
    id, cidadao_id, unidade_civica_id, nivel_atuacao, status, capacitacao_concluida,
    data_cadastro, event_id_cadastro, event_id_ultima_alteracao, atualizado_em
) VALUES (
    @cidadao_id, @cidadao_id, @unidade_civica_id, @nivel_atuacao, @status, @capacitacao_concluida,
    @agora::timestamptz, @event_id, @event_id, @agora::timestamptz
);

-- name: BuscarConselheiroPorEventIdCadastro :one
SELECT * FROM d6a.conselheiros WHERE event_id_cadastro = @event_id LIMIT 1;

-- name: BuscarConselheiroPorId :one
SELECT * FROM d6a.conselheiros WHERE id = @id;

-- name: BuscarConselheiroPorIdParaAtualizar :one
-- Locks the row so the state machine (spec 4.6) sees the committed status.
SELECT * FROM d6a.conselheiros WHERE id = @id FOR UPDATE;

-- name: BuscarConselheiroPorCidadao :many
SELECT * FROM d6a.conselheiros WHERE cidadao_id = @cidadao_id ORDER BY data_cadastro, id;

-- name: BuscarConselheirosPorUcsEStatus :many
-- spec 4.3 step 2, as the spec's repository names it.
SELECT * FROM d6a.conselheiros
WHERE unidade_civica_id = ANY(@ucs::uuid[]) AND status = @status
ORDER BY id;

-- name: BuscarCandidatosPorUcs :many
-- Eligibility input (spec 4.3) in one indexed round trip: every counsellor
-- registered on the chain, with whether it holds an active assignment. Cost
-- follows the chain's counsellors, not the whole table nor the active
-- assignments (issue 3): the LATERAL … LIMIT 1 keeps the planner on one
-- probe of the partial unique index per candidate, where an EXISTS was
-- turned into a hashed scan of every active assignment (docs/bench.md).
SELECT c.id, c.unidade_civica_id, c.status, c.capacitacao_concluida, c.data_suspensao_ate,
       (a.ativa IS NOT NULL)::boolean AS ocupado
FROM d6a.conselheiros c
LEFT JOIN LATERAL (
    SELECT true AS ativa FROM d6a.atribuicoes a
    WHERE a.conselheiro_id = c.id AND a.status = 'ativa'
    LIMIT 1
) a ON true
WHERE c.unidade_civica_id = ANY(@ucs::uuid[])
ORDER BY c.id;

-- name: ContarConselheirosPorUcs :one
SELECT count(*) FROM d6a.conselheiros WHERE unidade_civica_id = ANY(@ucs::uuid[]);

-- name: ContarConselheirosOcupadosPorUcs :one
-- spec 4.3: occupied = holding an active assignment, not status 'ocupado'.
SELECT count(DISTINCT c.id) FROM d6a.conselheiros c
JOIN d6a.atribuicoes a ON a.conselheiro_id = c.id AND a.status = 'ativa'
WHERE c.unidade_civica_id = ANY(@ucs::uuid[]);

-- name: BuscarConselheirosPorStatus :many
SELECT * FROM d6a.conselheiros WHERE status = @status ORDER BY id;

-- name: BuscarSuspensosComPrazoVencido :many
SELECT * FROM d6a.conselheiros
WHERE status = 'suspenso' AND data_suspensao_ate IS NOT NULL AND data_suspensao_ate < @agora::timestamptz
ORDER BY id;

-- name: AtualizarStatusConselheiro :execrows
UPDATE d6a.conselheiros
SET status = @status, event_id_ultima_alteracao = @event_id, atualizado_em = @agora::timestamptz
WHERE id = @id;

-- name: MarcarConselheiroOcupado :execrows
UPDATE d6a.conselheiros
SET status = 'ocupado', data_ultima_atribuicao = @agora::timestamptz,
    event_id_ultima_alteracao = @event_id, atualizado_em = @agora::timestamptz
WHERE id = @id;

-- name: SuspenderConselheiro :execrows
UPDATE d6a.conselheiros
SET status = 'suspenso', data_suspensao_ate = @ate,
    event_id_ultima_alteracao = @event_id, atualizado_em = @agora::timestamptz
WHERE id = @id;

-- name: ContarConselheirosPorStatus :many
SELECT status, count(*) AS total FROM d6a.conselheiros GROUP BY status ORDER BY status;

-- name: BuscarSituacao :one
-- GET /d6a/conselheiros/me/situacao (CONTRACT §6) in one statement, so one
-- snapshot: the counsellor row of the citizen (the oldest, should there be
-- several) and its active assignment, never a status from before a draw
-- with an assignment from after it.
SELECT c.id, c.unidade_civica_id, c.nivel_atuacao, c.status, c.capacitacao_concluida,
       c.data_suspensao_ate,
       -- sqlc cannot see that a LEFT JOIN LATERAL makes these nullable: an
       -- explicit flag and zero values instead of NULLs.
       (a.demanda_id IS NOT NULL)::boolean AS tem_atribuicao,
       COALESCE(a.demanda_id, '00000000-0000-0000-0000-000000000000'::uuid)::uuid AS atribuicao_demanda_id,
       COALESCE(a.unidade_civica_id, '00000000-0000-0000-0000-000000000000'::uuid)::uuid AS atribuicao_unidade_civica_id,
       COALESCE(a.data_sorteio, 'epoch'::timestamptz)::timestamptz AS atribuicao_data_sorteio,
       COALESCE(a.seed_publico, '')::text AS atribuicao_seed_publico,
       COALESCE(a.event_id_sorteio, '00000000-0000-0000-0000-000000000000'::uuid)::uuid AS atribuicao_event_id_sorteio,
       -- Phase 2 (CONTRACT §8): the external training record and the link
       -- at the unit of action, as the service holds them.
       c.nivel_progressao,
       (k.conselheiro_id IS NOT NULL)::boolean AS tem_capacitacao_externa,
       COALESCE(k.curso_id, '')::text AS capacitacao_curso_id,
       COALESCE(k.concluida_em, '')::text AS capacitacao_concluida_em,
       (v.conselheiro_id IS NOT NULL)::boolean AS tem_vinculo,
       COALESCE(v.valido, false)::boolean AS vinculo_valido,
       COALESCE(v.origem, '')::text AS vinculo_origem
FROM d6a.conselheiros c
LEFT JOIN LATERAL (
    SELECT a.demanda_id, a.unidade_civica_id, a.data_sorteio, a.seed_publico, a.event_id_sorteio
    FROM d6a.atribuicoes a
    WHERE a.conselheiro_id = c.id AND a.status = 'ativa'
    LIMIT 1
) a ON true
LEFT JOIN d6a.capacitacoes k ON k.conselheiro_id = c.id
LEFT JOIN d6a.vinculos v ON v.conselheiro_id = c.id AND v.unidade_civica_id = c.unidade_civica_id
WHERE c.cidadao_id = @cidadao_id
ORDER BY c.data_cadastro, c.id
LIMIT 1;

-- name: BuscarElegiveisDoDegrau :one
-- spec 4.3 in SQL, reading the winning step only: the chain is walked from
-- the demand's unit up and the walk stops at the first step with an
-- eligible counsellor (trained, no current suspension — an expired one
-- counts as disponivel, CONTRACT §5 —, no active assignment, not the
-- excluded refuser, not drawn earlier in the batch: ocupados, whose
-- writes are still in memory). One row: the step's 1-based position and
-- its counsellors, or, when nobody on the chain qualifies, ordem 0, no
-- ids and the counts the motive needs. The active assignment probe is a
-- scalar subquery with LIMIT, which PostgreSQL never turns into a join, so
-- it stays one probe of atribuicoes_uma_ativa_por_conselheiro_key per
-- candidate with or without statistics (docs/decisions.md).
WITH RECURSIVE degrau (ordem, ids, vencidos, vencidos_ate) AS (
    SELECT 0, NULL::uuid[], NULL::uuid[], NULL::timestamptz[]
  UNION ALL
    SELECT d.ordem + 1, e.ids, e.vencidos, e.vencidos_ate
    FROM degrau d
    CROSS JOIN LATERAL (
        -- An aggregate without GROUP BY: always one row, like the scalar
        -- subquery it replaces. vencidos are the step's eligible
        -- counsellors still marked suspenso (their suspension has passed,
        -- CONTRACT §5): a draw that takes one ends that suspension and
        -- publishes it (issue 21).
        SELECT array_agg(c.id) AS ids,
               array_agg(c.id) FILTER (WHERE c.status = 'suspenso') AS vencidos,
               array_agg(c.data_suspensao_ate) FILTER (WHERE c.status = 'suspenso') AS vencidos_ate
        FROM d6a.conselheiros c
        WHERE c.unidade_civica_id = (@cadeia::uuid[])[d.ordem + 1]
          AND c.status IN ('disponivel', 'suspenso')
          -- Phase-2 gates (CONTRACT §8, elegibilidade.Portoes): both off,
          -- this is the MVP's c.capacitacao_concluida.
          AND (@capacitacao_externa::boolean OR c.capacitacao_concluida)
          AND (NOT @capacitacao_externa::boolean OR (SELECT 1 FROM d6a.capacitacoes k
               WHERE k.conselheiro_id = c.id LIMIT 1) IS NOT NULL)
          AND (NOT @exigir_vinculo::boolean OR (SELECT 1 FROM d6a.vinculos v
               WHERE v.conselheiro_id = c.id AND v.unidade_civica_id = c.unidade_civica_id AND v.valido LIMIT 1) IS NOT NULL)
          AND CASE WHEN c.status = 'disponivel'
                   THEN c.data_suspensao_ate IS NULL OR c.data_suspensao_ate < @agora::timestamptz
                   ELSE c.data_suspensao_ate < @agora::timestamptz END
          AND c.id IS DISTINCT FROM sqlc.narg('excluir')::uuid
          AND c.id <> ALL(coalesce(@ocupados::uuid[], '{}'))
          AND (SELECT 1 FROM d6a.atribuicoes a
               WHERE a.conselheiro_id = c.id AND a.status = 'ativa' LIMIT 1) IS NULL
    ) e
    WHERE d.ids IS NULL AND d.ordem < cardinality(@cadeia::uuid[])
)
SELECT coalesce(a.ordem, 0)::int AS ordem, a.ids::uuid[] AS ids,
       a.vencidos::uuid[] AS vencidos, a.vencidos_ate::timestamptz[] AS vencidos_ate,
       -- Only when nobody qualifies, the motive (spec 4.3 step 5) needs the
       -- whole chain: registered counsellors and those holding an active
       -- assignment (in the database, or drawn earlier in the batch).
       coalesce(CASE WHEN a.ids IS NULL THEN (
           SELECT count(*) FROM d6a.conselheiros c
           WHERE c.unidade_civica_id = ANY(@cadeia::uuid[])
       ) END, 0)::bigint AS cadastrados,
       coalesce(CASE WHEN a.ids IS NULL THEN (
           SELECT count(*) FROM d6a.conselheiros c
           WHERE c.unidade_civica_id = ANY(@cadeia::uuid[])
             AND (c.id = ANY(coalesce(@ocupados::uuid[], '{}'))
                  OR (SELECT 1 FROM d6a.atribuicoes a
                      WHERE a.conselheiro_id = c.id AND a.status = 'ativa' LIMIT 1) IS NOT NULL)
       ) END, 0)::bigint AS ocupados
FROM (SELECT 1) AS um
LEFT JOIN (SELECT ordem, ids, vencidos, vencidos_ate FROM degrau WHERE ids IS NOT NULL) a ON true;

-- name: BuscarElegiveisDosDegraus :many
-- BuscarElegiveisDoDegrau for every chain of a run of agenda items, in one
-- round trip (issue 11: the executor waited one round trip per draw). The
-- chains come flattened in @ucs: chain n (from 1) is the @tamanhos[n]
-- units after position @inicios[n], the demand's unit first; every access
-- to a chain is by array position, so the statement's cost follows the
-- steps walked, whatever the planner knows. One row per chain: the winning
-- step and its counsellors as at @agora, or, when nobody on the chain
-- qualifies, ordem 0 and the motive's counts. proxima is the earliest
-- suspension end at or after @agora among the counsellors of the steps
-- walked: the caller may use the row for a draw at a later time only
-- before it, since eligibility only grows with time. Nothing drawn earlier
-- in the batch is excluded: the caller removes those from ids and asks
-- BuscarElegiveisDoDegrau when none is left.
WITH RECURSIVE degrau (cadeia, ordem, ids, vencidos, vencidos_ate, proxima) AS (
    SELECT n::int, 0, NULL::uuid[], NULL::uuid[], NULL::timestamptz[], NULL::timestamptz
    FROM generate_series(1, cardinality(@tamanhos::int[])) AS n
  UNION ALL
    SELECT d.cadeia, d.ordem + 1, e.ids, e.vencidos, e.vencidos_ate, least(d.proxima, e.proxima)
    FROM degrau d
    CROSS JOIN LATERAL (
        SELECT array_agg(c.id) FILTER (WHERE
                   CASE WHEN c.status = 'disponivel'
                        THEN c.data_suspensao_ate IS NULL OR c.data_suspensao_ate < @agora::timestamptz
                        ELSE c.data_suspensao_ate < @agora::timestamptz END
                   AND (SELECT 1 FROM d6a.atribuicoes a
                        WHERE a.conselheiro_id = c.id AND a.status = 'ativa' LIMIT 1) IS NULL) AS ids,
               -- The step's counsellors still marked suspenso whose
               -- suspension has passed (BuscarElegiveisDoDegrau): a winner
               -- among them ends that suspension. A superset of those in ids
               -- is enough, so the assignment probe is not repeated.
               array_agg(c.id) FILTER (WHERE c.status = 'suspenso'
                   AND c.data_suspensao_ate < @agora::timestamptz) AS vencidos,
               array_agg(c.data_suspensao_ate) FILTER (WHERE c.status = 'suspenso'
                   AND c.data_suspensao_ate < @agora::timestamptz) AS vencidos_ate,
               min(c.data_suspensao_ate) FILTER (WHERE c.data_suspensao_ate >= @agora::timestamptz) AS proxima
        FROM d6a.conselheiros c
        WHERE c.unidade_civica_id = (@ucs::uuid[])[(@inicios::int[])[d.cadeia] + d.ordem + 1]
          AND c.status IN ('disponivel', 'suspenso')
          -- Phase-2 gates, as in BuscarElegiveisDoDegrau.
          AND (@capacitacao_externa::boolean OR c.capacitacao_concluida)
          AND (NOT @capacitacao_externa::boolean OR (SELECT 1 FROM d6a.capacitacoes k
               WHERE k.conselheiro_id = c.id LIMIT 1) IS NOT NULL)
          AND (NOT @exigir_vinculo::boolean OR (SELECT 1 FROM d6a.vinculos v
               WHERE v.conselheiro_id = c.id AND v.unidade_civica_id = c.unidade_civica_id AND v.valido LIMIT 1) IS NOT NULL)
    ) e
    WHERE d.ids IS NULL AND d.ordem < (@tamanhos::int[])[d.cadeia]
)
SELECT d.cadeia::int AS cadeia,
       (CASE WHEN d.ids IS NULL THEN 0 ELSE d.ordem END)::int AS ordem,
       d.ids::uuid[] AS ids,
       d.vencidos::uuid[] AS vencidos,
       d.vencidos_ate::timestamptz[] AS vencidos_ate,
       d.proxima AS proxima,
       coalesce(CASE WHEN d.ids IS NULL THEN (
           SELECT count(*) FROM d6a.conselheiros c
           WHERE c.unidade_civica_id = ANY((@ucs::uuid[])[(@inicios::int[])[d.cadeia] + 1 : (@inicios::int[])[d.cadeia] + d.ordem])
       ) END, 0)::bigint AS cadastrados,
       coalesce(CASE WHEN d.ids IS NULL THEN (
           SELECT count(*) FROM d6a.conselheiros c
           WHERE c.unidade_civica_id = ANY((@ucs::uuid[])[(@inicios::int[])[d.cadeia] + 1 : (@inicios::int[])[d.cadeia] + d.ordem])
             AND (SELECT 1 FROM d6a.atribuicoes a
                  WHERE a.conselheiro_id = c.id AND a.status = 'ativa' LIMIT 1) IS NOT NULL
       ) END, 0)::bigint AS ocupados
FROM degrau d
WHERE d.ordem > 0 AND (d.ids IS NOT NULL OR d.ordem = (@tamanhos::int[])[d.cadeia])
ORDER BY d.cadeia;
