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

-- name: BuscarUltimaAtribuicaoPorConselheiroEDemanda :one
SELECT * FROM d6a.atribuicoes
WHERE conselheiro_id = @conselheiro_id AND demanda_id = @demanda_id
ORDER BY data_sorteio DESC, criado_em DESC
LIMIT 1;

-- name: AtribuicoesExistentes :many
-- The consistency check: which of these conselheiro.sorteado have their
-- assignment.
SELECT event_id_sorteio FROM d6a.atribuicoes WHERE event_id_sorteio = ANY(@ids::uuid[]);

-- name: RegistrarInicio :execrows
-- conselheiro.demanda_iniciada: the first start of an assignment wins.
INSERT INTO d6a.atribuicoes_iniciadas (
    atribuicao_id, event_id_sorteio, conselheiro_id, demanda_id, iniciada_em, event_id, registrado_em
) VALUES (@atribuicao_id, @event_id_sorteio, @conselheiro_id, @demanda_id, @iniciada_em::timestamptz,
          @event_id, @agora::timestamptz)
ON CONFLICT DO NOTHING;

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
