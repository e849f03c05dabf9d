-- The stream sequence of the consumed event whose unit of work queued each
-- outbox row (NULL for units without one: boot steps, the console, the
-- response timeout). Every result is published with it in the header
-- D6a-Entrada-Seq, so a repair after an asynchronous failover knows which
-- lost input led to which result on the bus and applies the input where its
-- commit was, not where its message sits in the stream (issue 14,
-- docs/decisions.md).
-- +goose Up
ALTER TABLE d6a.outbox ADD COLUMN entrada_sequence bigint;

-- +goose Down
ALTER TABLE d6a.outbox DROP COLUMN entrada_sequence;
