-- name: ParametrosVigentes :one
-- The parameters in force: the latest version of d6a.config.
SELECT * FROM d6a.config ORDER BY versao DESC LIMIT 1;

-- name: HistoricoParametros :many
SELECT * FROM d6a.config ORDER BY versao;

-- name: InserirParametros :one
-- A new version, numbered after the latest; version 1 when the table is
-- empty. Callers hold the executor's lock, so two inserts never race.
INSERT INTO d6a.config (
    versao, n_recusas_suspensao, t_suspensao_dias, timeout_resposta_horas, sub, justificativa, criado_em
) SELECT COALESCE(max(versao), 0) + 1, @n_recusas_suspensao, @t_suspensao_dias, @timeout_resposta_horas,
         @sub, @justificativa, @agora::timestamptz
  FROM d6a.config
RETURNING versao;

-- name: SemearParametros :exec
-- Version 1 from the environment, only when there is none.
INSERT INTO d6a.config (
    versao, n_recusas_suspensao, t_suspensao_dias, timeout_resposta_horas, sub, justificativa, criado_em
) VALUES (1, @n_recusas_suspensao, @t_suspensao_dias, @timeout_resposta_horas, 'ambiente',
          'versão 1: D6A_N_RECUSAS_SUSPENSAO, D6A_T_SUSPENSAO_DIAS, D6A_TIMEOUT_RESPOSTA_HORAS', @agora::timestamptz)
ON CONFLICT (versao) DO NOTHING;

-- name: RegistrarAcao :one
INSERT INTO d6a.acoes_administrativas (sub, acao, alvo, justificativa, criado_em, event_id, detalhes)
VALUES (@sub, @acao, @alvo, @justificativa, @agora::timestamptz, @event_id, @detalhes)
RETURNING id;

-- name: ListarAcoes :many
-- The journal, oldest first, from the id after @depois_de.
SELECT * FROM d6a.acoes_administrativas
WHERE id > @depois_de
ORDER BY id
LIMIT @limite;

-- name: ContarAcoesPorTipo :many
SELECT acao, count(*) AS total FROM d6a.acoes_administrativas GROUP BY acao ORDER BY acao;

-- name: InserirSuspensao :exec
INSERT INTO d6a.suspensoes (
    conselheiro_id, evento_id_recusa, recusas_consecutivas, data_suspensao_ate, versao_parametros, criado_em
) VALUES (@conselheiro_id, @evento_id_recusa, @recusas_consecutivas, @data_suspensao_ate::timestamptz,
          @versao_parametros, @agora::timestamptz);

-- name: RegistrarInicio :execrows
-- conselheiro.demanda_iniciada: the first start of an assignment wins.
INSERT INTO d6a.atribuicoes_iniciadas (
    atribuicao_id, event_id_sorteio, conselheiro_id, demanda_id, iniciada_em, event_id, registrado_em
) VALUES (@atribuicao_id, @event_id_sorteio, @conselheiro_id, @demanda_id, @iniciada_em::timestamptz,
          @event_id, @agora::timestamptz)
ON CONFLICT DO NOTHING;

-- name: BuscarUltimaAtribuicaoPorConselheiroEDemanda :one
SELECT * FROM d6a.atribuicoes
WHERE conselheiro_id = @conselheiro_id AND demanda_id = @demanda_id
ORDER BY data_sorteio DESC, criado_em DESC
LIMIT 1;

-- name: BuscarOcupados :many
-- Active assignments drawn before @antes_de, oldest first, with whether
-- they started (the console's "ocupados", spec §9).
SELECT a.id, a.event_id_sorteio, a.conselheiro_id, a.demanda_id, a.unidade_civica_id, a.data_sorteio,
       c.status AS status_conselheiro,
       (i.atribuicao_id IS NOT NULL)::boolean AS iniciada,
       i.iniciada_em
FROM d6a.atribuicoes a
JOIN d6a.conselheiros c ON c.id = a.conselheiro_id
LEFT JOIN d6a.atribuicoes_iniciadas i ON i.atribuicao_id = a.id
WHERE a.status = 'ativa' AND a.data_sorteio < @antes_de::timestamptz
ORDER BY a.data_sorteio, a.id
LIMIT @limite;

-- name: BuscarAtivasSemInicio :many
-- Active assignments drawn before @antes_de that never started: the
-- automatic response timeout's candidates, oldest first.
SELECT a.* FROM d6a.atribuicoes a
WHERE a.status = 'ativa' AND a.data_sorteio < @antes_de::timestamptz
  AND NOT EXISTS (SELECT 1 FROM d6a.atribuicoes_iniciadas i WHERE i.atribuicao_id = a.id)
ORDER BY a.data_sorteio, a.id
LIMIT @limite;

-- name: ContarAtivasSemInicio :one
SELECT count(*) FROM d6a.atribuicoes a
WHERE a.status = 'ativa' AND a.data_sorteio < @antes_de::timestamptz
  AND NOT EXISTS (SELECT 1 FROM d6a.atribuicoes_iniciadas i WHERE i.atribuicao_id = a.id);

-- name: ListarFila :many
-- The pending queue, oldest first, optionally of one unit.
SELECT * FROM d6a.fila_pendentes
WHERE (sqlc.narg('uc')::uuid IS NULL OR unidade_civica_id = sqlc.narg('uc')::uuid)
ORDER BY data_entrada, ordem_entrada
LIMIT @limite;

-- name: ResumoFila :one
-- The pending queue by age at @agora, in one scan: the age buckets of
-- d6a_fila_pendentes_por_idade and the oldest demand's age in seconds.
SELECT
    count(*) FILTER (WHERE data_entrada > sqlc.arg(agora)::timestamptz - interval '1 hour') AS ate_1h,
    count(*) FILTER (WHERE data_entrada <= sqlc.arg(agora)::timestamptz - interval '1 hour'
                       AND data_entrada > sqlc.arg(agora)::timestamptz - interval '24 hours') AS de_1h_a_24h,
    count(*) FILTER (WHERE data_entrada <= sqlc.arg(agora)::timestamptz - interval '24 hours'
                       AND data_entrada > sqlc.arg(agora)::timestamptz - interval '72 hours') AS de_24h_a_72h,
    count(*) FILTER (WHERE data_entrada <= sqlc.arg(agora)::timestamptz - interval '72 hours'
                       AND data_entrada > sqlc.arg(agora)::timestamptz - interval '7 days') AS de_72h_a_7d,
    count(*) FILTER (WHERE data_entrada <= sqlc.arg(agora)::timestamptz - interval '7 days') AS mais_de_7d,
    COALESCE(EXTRACT(EPOCH FROM sqlc.arg(agora)::timestamptz) - EXTRACT(EPOCH FROM min(data_entrada)), 0)::float8 AS mais_antiga_segundos
FROM d6a.fila_pendentes;

-- name: ExisteOutboxPorEventId :one
SELECT EXISTS (SELECT 1 FROM d6a.outbox WHERE event_id = @event_id);

-- name: InativarConselheiro :execrows
UPDATE d6a.conselheiros
SET status = 'inativo', event_id_ultima_alteracao = @event_id, atualizado_em = @agora::timestamptz
WHERE id = @id;
