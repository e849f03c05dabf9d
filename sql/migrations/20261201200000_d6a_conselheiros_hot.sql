-- A draw sets its counsellor's status to 'ocupado', and the end of the
-- assignment sets it back. Two indexes named status: the spec's
-- (unidade_civica_id, status) and this design's (status). So every such
-- update was a non-HOT one: a new row version on another page and a new
-- entry in each of the table's six indexes, at random pages of indexes
-- that grow with K. Its WAL (full-page images after each checkpoint) and
-- its buffer misses grew with the number of counsellors (issue 11:
-- K=1,000,000 over K=1,000). No index names status any more, and each page
-- keeps room (fillfactor 90, which COPY and INSERT respect), so the status
-- update is HOT: it stays on its page and touches no index.
--
-- - The index by unit alone serves the eligibility steps as well: each
--   reads one unit's counsellors and checks status on the row it reads
--   anyway (capacitacao_concluida and data_suspensao_ate are in no index).
-- - The periodic reactivation (spec 4.8) finds expired suspensions by
--   their end, which the draw never changes.
-- - Boot's lookup of 'ocupado' counsellors and the metrics' count by status
--   read the table whole, once per start and once per scrape, outside the
--   draw path.
-- (CONTRACT §5, docs/decisions.md.)
-- +goose Up
CREATE INDEX conselheiros_unidade_civica_id_idx ON d6a.conselheiros (unidade_civica_id);
DROP INDEX d6a.conselheiros_unidade_civica_id_status_idx;
CREATE INDEX conselheiros_data_suspensao_ate_idx ON d6a.conselheiros (data_suspensao_ate)
    WHERE data_suspensao_ate IS NOT NULL;
DROP INDEX d6a.conselheiros_status_idx;
ALTER TABLE d6a.conselheiros SET (fillfactor = 90);

-- +goose Down
ALTER TABLE d6a.conselheiros RESET (fillfactor);
CREATE INDEX conselheiros_status_idx ON d6a.conselheiros (status);
DROP INDEX d6a.conselheiros_data_suspensao_ate_idx;
CREATE INDEX conselheiros_unidade_civica_id_status_idx
    ON d6a.conselheiros (unidade_civica_id, status);
DROP INDEX d6a.conselheiros_unidade_civica_id_idx;
