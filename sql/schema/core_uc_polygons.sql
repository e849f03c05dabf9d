-- The part of core.uc_polygons that d6a reads (CONTRACT §5). Owned by another
-- colony and never migrated here: sqlc reads this file to type the hierarchy
-- query, and tests create it to stand in for the real table.
CREATE SCHEMA IF NOT EXISTS core;
CREATE TABLE IF NOT EXISTS core.uc_polygons (
    id           UUID PRIMARY KEY,
    parent_uc_id UUID
);
