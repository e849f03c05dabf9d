-- Phase-2 eligibility inputs (CONTRACT §8, issue 41).

-- name: RegistrarCapacitacao :exec
-- capacitação.concluída: the external record, the latest winning.
INSERT INTO d6a.capacitacoes (conselheiro_id, curso_id, concluida_em, event_id, registrada_em)
VALUES (@conselheiro_id, @curso_id, @concluida_em, @event_id, @agora::timestamptz)
ON CONFLICT (conselheiro_id) DO UPDATE
SET curso_id = EXCLUDED.curso_id, concluida_em = EXCLUDED.concluida_em,
    event_id = EXCLUDED.event_id, registrada_em = EXCLUDED.registrada_em;

-- name: TemCapacitacaoExterna :one
SELECT EXISTS (SELECT 1 FROM d6a.capacitacoes WHERE conselheiro_id = @conselheiro_id)::boolean AS tem;

-- name: MarcarCapacitacaoConcluida :execrows
-- Without D6A_CAPACITACAO_EXTERNA the external record sets the
-- registration's flag (CONTRACT §8).
UPDATE d6a.conselheiros
SET capacitacao_concluida = true, event_id_ultima_alteracao = @event_id, atualizado_em = @agora::timestamptz
WHERE id = @id AND NOT capacitacao_concluida;

-- name: RegistrarVinculo :exec
INSERT INTO d6a.vinculos (conselheiro_id, unidade_civica_id, valido, origem, validado_em, event_id, atualizado_em)
VALUES (@conselheiro_id, @unidade_civica_id, @valido, @origem, sqlc.narg('validado_em'), @event_id, @agora::timestamptz)
ON CONFLICT (conselheiro_id, unidade_civica_id) DO UPDATE
SET valido = EXCLUDED.valido, origem = EXCLUDED.origem, validado_em = EXCLUDED.validado_em,
    event_id = EXCLUDED.event_id, atualizado_em = EXCLUDED.atualizado_em;

-- name: ProgredirConselheiro :execrows
-- progressão.habilitada: the unit of action becomes the larger unit; the
-- registration's unit is kept once, in unidade_civica_id_cadastro.
UPDATE d6a.conselheiros
SET unidade_civica_id_cadastro = coalesce(unidade_civica_id_cadastro, unidade_civica_id),
    unidade_civica_id = @unidade_civica_id, nivel_progressao = @nivel,
    event_id_ultima_alteracao = @event_id, atualizado_em = @agora::timestamptz
WHERE id = @id;

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
