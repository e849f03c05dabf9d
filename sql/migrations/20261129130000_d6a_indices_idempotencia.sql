-- Indexes for the idempotency lookups of spec 3.9 step 1
-- (buscarFilaPendentePorEventIdOrigem) and 3.11/3.12 step 1
-- (buscarAtribuicaoPorEventIdEncerramento), which the spec's schema leaves
-- to sequential scans: atribuicoes only grows.
-- +goose Up
CREATE INDEX fila_pendentes_event_id_origem_idx
    ON d6a.fila_pendentes (event_id_origem);
CREATE INDEX atribuicoes_event_id_encerramento_idx
    ON d6a.atribuicoes (event_id_encerramento) WHERE event_id_encerramento IS NOT NULL;

-- +goose Down
DROP INDEX d6a.atribuicoes_event_id_encerramento_idx;
DROP INDEX d6a.fila_pendentes_event_id_origem_idx;
