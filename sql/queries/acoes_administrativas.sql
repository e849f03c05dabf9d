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
