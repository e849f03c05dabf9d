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

-- name: GuardasAgenda :one
-- spec 3.9 steps 1, 3 and 4 in one round trip, with the spec 5.4 guard of
-- the demand's sorteio.sem_candidatos (one per correlacao_id).
SELECT
    EXISTS (SELECT 1 FROM d6a.fila_pendentes f WHERE f.event_id_origem = @event_id) AS pendente_pelo_evento,
    EXISTS (SELECT 1 FROM d6a.atribuicoes a WHERE a.demanda_id = @demanda_id AND a.status = 'ativa') AS atribuida,
    EXISTS (SELECT 1 FROM d6a.fila_pendentes f WHERE f.demanda_id = @demanda_id) AS pendente,
    EXISTS (SELECT 1 FROM d6a.outbox o WHERE o.tipo = 'sorteio.sem_candidatos' AND o.correlacao_id = @correlacao_id::text) AS sem_candidatos_publicado;

-- name: GravarSorteios :exec
-- The draws a batch decided in memory (or one unit decided, written at
-- once), in their order, in one round trip (issue 11): the assignments
-- with their demand snapshot, the counsellors' status and the audit
-- records. Their outbox rows go with the others (InserirOutboxLote), in
-- decision order.
WITH r AS (
    SELECT * FROM ROWS FROM (jsonb_to_recordset(@linhas::jsonb) AS (
        atribuicao_id uuid, event_id_sorteio uuid, conselheiro_id uuid, demanda_id uuid,
        unidade_civica_id uuid, seed text, posicao_sorteada int, total_elegiveis int,
        lista_elegiveis_hash text, data_sorteio timestamptz, score_final numeric,
        categoria_id text, nivel_precedencia int, grupo_id uuid, base text, base_sequence bigint,
        timestamp_sorteio text, elegiveis_entrada text[], ordenados text[], degrau uuid,
        cadeia text[], excluido uuid, agora timestamptz, status text,
        rodada bigint, assinatura_rodada text, compromisso text
    )) WITH ORDINALITY AS x (
        atribuicao_id, event_id_sorteio, conselheiro_id, demanda_id,
        unidade_civica_id, seed, posicao_sorteada, total_elegiveis,
        lista_elegiveis_hash, data_sorteio, score_final,
        categoria_id, nivel_precedencia, grupo_id, base, base_sequence,
        timestamp_sorteio, elegiveis_entrada, ordenados, degrau,
        cadeia, excluido, agora, status, rodada, assinatura_rodada, compromisso, ordem
    )
), atribuicao AS (
    INSERT INTO d6a.atribuicoes (
        id, conselheiro_id, demanda_id, unidade_civica_id, seed_publico, metodo_sorteio,
        posicao_sorteada, total_elegiveis, lista_elegiveis_hash, status, data_sorteio,
        event_id_sorteio, score_final, categoria_id, nivel_precedencia, grupo_id, criado_em
    )
    SELECT atribuicao_id, conselheiro_id, demanda_id, unidade_civica_id, seed, 'fisher_yates',
        posicao_sorteada, total_elegiveis, lista_elegiveis_hash, 'ativa', data_sorteio,
        event_id_sorteio, score_final, categoria_id, nivel_precedencia, grupo_id, data_sorteio
    FROM r ORDER BY ordem
), ocupado AS (
    -- r.status is the winner's status the rules give
    -- (elegibilidade.StatusAposSorteio).
    UPDATE d6a.conselheiros c
    SET status = r.status, data_ultima_atribuicao = r.data_sorteio,
        event_id_ultima_alteracao = r.event_id_sorteio, atualizado_em = r.data_sorteio
    FROM r
    -- The ids again as an array: an index probe per counsellor whatever the
    -- planner thinks of the JSON rows' count or of the table's size.
    WHERE c.id = ANY(@conselheiros::uuid[]) AND c.id = r.conselheiro_id
)
INSERT INTO d6a.auditoria_sorteios (
    event_id_sorteio, atribuicao_id, demanda_id, unidade_civica_id, conselheiro_id,
    base, base_fallback, base_sequence, timestamp_sorteio, seed, elegiveis_entrada,
    ordenados, selecionado, lista_elegiveis_hash, degrau, cadeia, excluido, criado_em,
    rodada, assinatura_rodada, compromisso
)
SELECT event_id_sorteio, atribuicao_id, demanda_id, unidade_civica_id, conselheiro_id,
    base, false, base_sequence, timestamp_sorteio, seed, elegiveis_entrada,
    ordenados, conselheiro_id, lista_elegiveis_hash, degrau, cadeia, excluido, agora,
    rodada, assinatura_rodada, compromisso
FROM r ORDER BY ordem;

-- name: GuardasAgendaLote :many
-- GuardasAgenda for every agenda item of a batch at once (issue 11). Each
-- probe is a scalar subquery with LIMIT, never turned into a join or a
-- hashed scan, so it stays one index probe per item whatever the
-- statistics.
SELECT g.event_id::uuid AS event_id,
    ((SELECT 1 FROM d6a.fila_pendentes f WHERE f.event_id_origem = g.event_id LIMIT 1) IS NOT NULL)::boolean AS pendente_pelo_evento,
    ((SELECT 1 FROM d6a.atribuicoes a WHERE a.demanda_id = g.demanda_id AND a.status = 'ativa' LIMIT 1) IS NOT NULL)::boolean AS atribuida,
    ((SELECT 1 FROM d6a.fila_pendentes f WHERE f.demanda_id = g.demanda_id LIMIT 1) IS NOT NULL)::boolean AS pendente,
    ((SELECT 1 FROM d6a.outbox o WHERE o.tipo = 'sorteio.sem_candidatos' AND o.correlacao_id = g.correlacao_id LIMIT 1) IS NOT NULL)::boolean AS sem_candidatos_publicado
FROM (
    SELECT unnest(@event_ids::uuid[]) AS event_id, unnest(@demanda_ids::uuid[]) AS demanda_id,
           unnest(@correlacoes::text[]) AS correlacao_id
) g;
