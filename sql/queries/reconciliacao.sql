-- name: InserirReconciliacao :exec
INSERT INTO d6a.reconciliacoes (event_id_sorteio, atribuicao_id, demanda_id, conselheiro_id, sequence, base, base_sequence, reconciliado_em)
VALUES (@event_id_sorteio, @atribuicao_id, @demanda_id, @conselheiro_id, @sequence, @base, @base_sequence, @agora::timestamptz);

-- name: InserirOutboxPublicado :exec
-- A result already on the bus (reconciliation): the row the relay would have
-- marked, so the relay never sends it and the spec 5.4 guard sees it.
INSERT INTO d6a.outbox (event_id, tipo, subject, correlacao_id, envelope, criado_em, publicado_em, sequence)
VALUES (@event_id, @tipo, @subject, @correlacao_id, @envelope, @agora::timestamptz, @agora::timestamptz, @sequence)
ON CONFLICT (event_id) DO NOTHING;

-- name: OutboxExistentes :many
-- The consistency check: which of these published event ids have their
-- outbox row.
SELECT event_id FROM d6a.outbox WHERE event_id = ANY(@ids::uuid[]);

-- name: AtribuicoesExistentes :many
-- The consistency check: which of these conselheiro.sorteado have their
-- assignment.
SELECT event_id_sorteio FROM d6a.atribuicoes WHERE event_id_sorteio = ANY(@ids::uuid[]);

-- name: ProcessadosExistentes :many
-- The consistency check: which of these consumed event ids have their inbox
-- row.
SELECT event_id FROM d6a.eventos_processados WHERE event_id = ANY(@ids::uuid[]);
