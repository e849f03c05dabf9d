-- name: InserirAuditoria :exec
INSERT INTO d6a.auditoria_sorteios (
    event_id_sorteio, atribuicao_id, demanda_id, unidade_civica_id, conselheiro_id,
    base, base_fallback, base_sequence, timestamp_sorteio, seed, elegiveis_entrada,
    ordenados, selecionado, lista_elegiveis_hash, degrau, cadeia, excluido, criado_em
) VALUES (
    @event_id_sorteio, @atribuicao_id, @demanda_id, @unidade_civica_id, @conselheiro_id,
    @base, @base_fallback, @base_sequence, @timestamp_sorteio, @seed, @elegiveis_entrada,
    @ordenados, @selecionado, @lista_elegiveis_hash, @degrau, @cadeia, @excluido, @criado_em
);

-- name: BuscarAuditoria :one
SELECT * FROM d6a.auditoria_sorteios WHERE event_id_sorteio = @event_id_sorteio;

-- name: ListarAuditorias :many
SELECT * FROM d6a.auditoria_sorteios ORDER BY criado_em, event_id_sorteio;
