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

-- name: BuscarDegrausCadastrados :many
-- The input of spec 4.3's rule (elegibilidade.Subir), read, not decided:
-- for each chain, the first step at or above its first unit that holds any
-- registered counsellor (structure, whatever their status), with every
-- column elegibilidade.Filtrar reads. Go decides who is eligible; when
-- nobody on the step is, it asks again from the step above. The chains come
-- flattened in @ucs: chain n (from 1) is the @tamanhos[n] units after
-- position @inicios[n]; every access to a chain is by array position, so
-- the cost follows the steps walked, whatever the planner knows. One row
-- per chain that has such a step (none: no one registered on the rest of
-- it): ordem, the step's 1-based position, and its counsellors as parallel
-- arrays. Each probe (active assignment, external training, valid link) is
-- a scalar subquery with LIMIT, which PostgreSQL never turns into a join,
-- so it stays one index probe per counsellor with or without statistics
-- (docs/decisions.md); the phase-2 probes run only under their gate.
WITH RECURSIVE degrau (cadeia, ordem, ids, status, capacitacao, ates, suspensos, ocupados, externas, vinculos) AS (
    SELECT n::int, 0, NULL::uuid[], NULL::text[], NULL::boolean[], NULL::timestamptz[], NULL::boolean[],
           NULL::boolean[], NULL::boolean[], NULL::boolean[]
    FROM generate_series(1, cardinality(@tamanhos::int[])) AS n
  UNION ALL
    SELECT d.cadeia, d.ordem + 1, e.ids, e.status, e.capacitacao, e.ates, e.suspensos, e.ocupados, e.externas, e.vinculos
    FROM degrau d
    CROSS JOIN LATERAL (
        -- An aggregate without GROUP BY: always one row, and every array in
        -- the same row order.
        SELECT array_agg(c.id) AS ids,
               array_agg(c.status) AS status,
               array_agg(c.capacitacao_concluida) AS capacitacao,
               -- An array cannot carry a NULL time to Go: suspensos says
               -- which counsellors have a suspension date at all.
               array_agg(coalesce(c.data_suspensao_ate, 'epoch'::timestamptz)) AS ates,
               array_agg(c.data_suspensao_ate IS NOT NULL) AS suspensos,
               array_agg((SELECT 1 FROM d6a.atribuicoes a
                          WHERE a.conselheiro_id = c.id AND a.status = 'ativa' LIMIT 1) IS NOT NULL) AS ocupados,
               array_agg(CASE WHEN @capacitacao_externa::boolean THEN (SELECT 1 FROM d6a.capacitacoes k
                          WHERE k.conselheiro_id = c.id LIMIT 1) IS NOT NULL ELSE false END) AS externas,
               array_agg(CASE WHEN @exigir_vinculo::boolean THEN (SELECT 1 FROM d6a.vinculos v
                          WHERE v.conselheiro_id = c.id AND v.unidade_civica_id = c.unidade_civica_id AND v.valido
                          LIMIT 1) IS NOT NULL ELSE false END) AS vinculos
        FROM d6a.conselheiros c
        WHERE c.unidade_civica_id = (@ucs::uuid[])[(@inicios::int[])[d.cadeia] + d.ordem + 1]
    ) e
    WHERE d.ids IS NULL AND d.ordem < (@tamanhos::int[])[d.cadeia]
)
SELECT d.cadeia::int AS cadeia, d.ordem::int AS ordem, d.ids::uuid[] AS ids, d.status::text[] AS status,
       d.capacitacao::boolean[] AS capacitacao, d.ates::timestamptz[] AS ates, d.suspensos::boolean[] AS suspensos,
       d.ocupados::boolean[] AS ocupados, d.externas::boolean[] AS externas, d.vinculos::boolean[] AS vinculos
FROM degrau d
WHERE d.ids IS NOT NULL
ORDER BY d.cadeia;
