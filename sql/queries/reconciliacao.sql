-- name: InserirReconciliacao :exec
INSERT INTO d6a.reconciliacoes (event_id_sorteio, atribuicao_id, demanda_id, conselheiro_id, sequence, base, base_sequence, reconciliado_em)
VALUES (@event_id_sorteio, @atribuicao_id, @demanda_id, @conselheiro_id, @sequence, @base, @base_sequence, @agora::timestamptz);
