-- Phase-2 eligibility inputs (CONTRACT §8, issue 41), and the reads that
-- weigh the counsellors against them.

-- name: RegistrarCapacitacao :exec
-- capacitação.concluída: the external record, the latest winning.
INSERT INTO d6a.capacitacoes (conselheiro_id, curso_id, concluida_em, event_id, registrada_em)
VALUES (@conselheiro_id, @curso_id, @concluida_em, @event_id, @agora::timestamptz)
ON CONFLICT (conselheiro_id) DO UPDATE
SET curso_id = EXCLUDED.curso_id, concluida_em = EXCLUDED.concluida_em,
    event_id = EXCLUDED.event_id, registrada_em = EXCLUDED.registrada_em;

-- name: TemCapacitacaoExterna :one
SELECT EXISTS (SELECT 1 FROM d6a.capacitacoes WHERE conselheiro_id = @conselheiro_id)::boolean AS tem;

-- name: RegistrarVinculo :exec
INSERT INTO d6a.vinculos (conselheiro_id, unidade_civica_id, valido, origem, validado_em, event_id, atualizado_em)
VALUES (@conselheiro_id, @unidade_civica_id, @valido, @origem, sqlc.narg('validado_em'), @event_id, @agora::timestamptz)
ON CONFLICT (conselheiro_id, unidade_civica_id) DO UPDATE
SET valido = EXCLUDED.valido, origem = EXCLUDED.origem, validado_em = EXCLUDED.validado_em,
    event_id = EXCLUDED.event_id, atualizado_em = EXCLUDED.atualizado_em;

-- name: RegistrarCriterios :exec
INSERT INTO d6a.criterios_uc (unidade_civica_id, versao_parametros, event_id, atualizado_em)
VALUES (@unidade_civica_id, @versao_parametros, @event_id, @agora::timestamptz)
ON CONFLICT (unidade_civica_id) DO UPDATE
SET versao_parametros = EXCLUDED.versao_parametros, event_id = EXCLUDED.event_id, atualizado_em = EXCLUDED.atualizado_em;

-- name: RegrasVigentes :one
SELECT * FROM d6a.regras_elegibilidade ORDER BY versao DESC LIMIT 1;

-- name: InserirRegras :exec
INSERT INTO d6a.regras_elegibilidade (capacitacao_externa, exigir_vinculo, event_id, criado_em)
VALUES (@capacitacao_externa, @exigir_vinculo, @event_id, @agora::timestamptz);

-- name: ContarRazoesPorUcs :one
-- The console's queue view (issue 41): over a waiting demand's chain, how
-- many counsellors each exclusion of spec 4.3 and each phase-2 gate leaves
-- out, so an operator sees why nobody is eligible. A counsellor may count
-- under several.
SELECT count(*)::bigint AS cadastrados,
       count(*) FILTER (WHERE (SELECT 1 FROM d6a.atribuicoes a
                               WHERE a.conselheiro_id = c.id AND a.status = 'ativa' LIMIT 1) IS NOT NULL)::bigint AS ocupados,
       count(*) FILTER (WHERE c.status = 'inativo')::bigint AS inativos,
       count(*) FILTER (WHERE c.data_suspensao_ate IS NOT NULL AND c.data_suspensao_ate >= @agora::timestamptz
                              AND c.status IN ('suspenso', 'disponivel'))::bigint AS suspensos,
       count(*) FILTER (WHERE NOT CASE WHEN @capacitacao_externa::boolean
                                       THEN (SELECT 1 FROM d6a.capacitacoes k WHERE k.conselheiro_id = c.id LIMIT 1) IS NOT NULL
                                       ELSE c.capacitacao_concluida END)::bigint AS sem_capacitacao,
       count(*) FILTER (WHERE @exigir_vinculo::boolean AND (SELECT 1 FROM d6a.vinculos v
                               WHERE v.conselheiro_id = c.id AND v.unidade_civica_id = c.unidade_civica_id AND v.valido LIMIT 1) IS NULL)::bigint AS sem_vinculo
FROM d6a.conselheiros c
WHERE c.unidade_civica_id = ANY(@ucs::uuid[]);

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
