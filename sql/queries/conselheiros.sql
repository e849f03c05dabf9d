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

-- name: InativarConselheiro :execrows
UPDATE d6a.conselheiros
SET status = 'inativo', event_id_ultima_alteracao = @event_id, atualizado_em = @agora::timestamptz
WHERE id = @id;

-- name: MarcarCapacitacaoConcluida :execrows
-- Without D6A_CAPACITACAO_EXTERNA the external record sets the
-- registration's flag (CONTRACT §8).
UPDATE d6a.conselheiros
SET capacitacao_concluida = true, event_id_ultima_alteracao = @event_id, atualizado_em = @agora::timestamptz
WHERE id = @id AND NOT capacitacao_concluida;

-- name: ProgredirConselheiro :execrows
-- progressão.habilitada: the unit of action becomes the larger unit; the
-- registration's unit is kept once, in unidade_civica_id_cadastro.
UPDATE d6a.conselheiros
SET unidade_civica_id_cadastro = coalesce(unidade_civica_id_cadastro, unidade_civica_id),
    unidade_civica_id = @unidade_civica_id, nivel_progressao = @nivel,
    event_id_ultima_alteracao = @event_id, atualizado_em = @agora::timestamptz
WHERE id = @id;

-- name: InserirSuspensao :exec
INSERT INTO d6a.suspensoes (
    conselheiro_id, evento_id_recusa, recusas_consecutivas, data_suspensao_ate, versao_parametros, criado_em
) VALUES (@conselheiro_id, @evento_id_recusa, @recusas_consecutivas, @data_suspensao_ate::timestamptz,
          @versao_parametros, @agora::timestamptz);

-- name: BuscarRecusaPorEventoId :one
SELECT * FROM d6a.contador_recusas WHERE evento_id_recusa = @event_id;

-- name: ContarRecusasDesdeData :one
-- spec 3.12 step 4: refusals since the last acceptance (all when never).
SELECT count(*) FROM d6a.contador_recusas
WHERE conselheiro_id = @conselheiro_id
  AND (sqlc.narg('desde')::timestamptz IS NULL OR data_ultima_recusa > sqlc.narg('desde')::timestamptz);

-- name: InserirRecusa :exec
-- The row id comes from the refusal, not at random (issue 22, determinism
-- from the bus).
INSERT INTO d6a.contador_recusas (
    id, conselheiro_id, recusas_consecutivas, data_ultima_recusa, demanda_id_recusada, evento_id_recusa
) VALUES (
    md5('d6a.contador_recusas|' || (@evento_id_recusa::uuid)::text)::uuid, @conselheiro_id, @recusas_consecutivas, @agora::timestamptz, @demanda_id_recusada, @evento_id_recusa
);
