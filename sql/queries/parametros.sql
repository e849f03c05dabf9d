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
