-- name: InserirAtribuicao :one
INSERT INTO d6a.atribuicoes (
    conselheiro_id, demanda_id, unidade_civica_id, seed_publico, metodo_sorteio,
    posicao_sorteada, total_elegiveis, lista_elegiveis_hash, status, data_sorteio,
    event_id_sorteio, score_final, categoria_id, nivel_precedencia, grupo_id, criado_em
) VALUES (
    @conselheiro_id, @demanda_id, @unidade_civica_id, @seed_publico, 'fisher_yates',
    @posicao_sorteada, @total_elegiveis, @lista_elegiveis_hash, 'ativa', @data_sorteio,
    @event_id_sorteio, @score_final, @categoria_id, @nivel_precedencia, @grupo_id, @data_sorteio
)
RETURNING id;

-- name: BuscarAtribuicaoAtivaPorDemanda :one
SELECT * FROM d6a.atribuicoes WHERE demanda_id = @demanda_id AND status = 'ativa';

-- name: BuscarAtribuicaoAtivaPorConselheiro :one
SELECT * FROM d6a.atribuicoes WHERE conselheiro_id = @conselheiro_id AND status = 'ativa';

-- name: BuscarAtribuicaoAtivaPorConselheiroEDemanda :one
SELECT * FROM d6a.atribuicoes
WHERE conselheiro_id = @conselheiro_id AND demanda_id = @demanda_id AND status = 'ativa';

-- name: BuscarAtribuicaoPorEventIdEncerramento :one
SELECT * FROM d6a.atribuicoes WHERE event_id_encerramento = @event_id LIMIT 1;

-- name: BuscarAtribuicaoPorEventIdSorteio :one
SELECT * FROM d6a.atribuicoes WHERE event_id_sorteio = @event_id_sorteio;

-- name: BuscarAtribuicoesAtivas :many
-- The spec's full scan (spec 6.4); the draw does not use it (issue 3).
SELECT * FROM d6a.atribuicoes WHERE status = 'ativa' ORDER BY data_sorteio, id;

-- name: AtualizarStatusAtribuicao :execrows
-- Only an active assignment closes (spec 4.6).
UPDATE d6a.atribuicoes
SET status = @status, event_id_encerramento = @event_id
WHERE id = @id AND status = 'ativa';

-- name: BuscarUltimaAceitacao :one
-- spec 3.12 step 4: the last accepted (concluded) assignment resets the
-- refusal count.
-- No row when the counsellor never concluded one.
SELECT data_sorteio FROM d6a.atribuicoes
WHERE conselheiro_id = @conselheiro_id AND status = 'concluida'
ORDER BY data_sorteio DESC
LIMIT 1;
