-- d6a's two database roles (issue 50; docs/operacao.md, "Security"), neither
-- a superuser:
--
--   :"dono"  owns the d6a schema and runs the migrations (`d6a migrate`,
--            a one-shot job); owner of the database, so goose can keep its
--            version table in public.
--   :"app"   what `d6a serve` (D6A_MIGRATE=false) connects as: SELECT,
--            INSERT, UPDATE, DELETE on the d6a tables and USAGE on their
--            sequences, nothing else. Not the owner of any table, it cannot
--            drop or disable the triggers that keep the transparency log
--            and the administrative journal insert-only, TRUNCATE, nor
--            create or alter anything.
--
-- Run once, as a superuser (or a role with CREATEROLE that owns the
-- database), connected to the d6a database, before the first `d6a migrate`:
--
--   psql -v ON_ERROR_STOP=1 -v banco=d6a -v dono=d6a_dono -v app=d6a_app \
--        -v senha_dono="$D6A_OWNER_PASSWORD" -v senha_app="$D6A_APP_PASSWORD" \
--        -d d6a -f deploy/postgres/papeis.sql
--
-- The runtime also reads core.uc_polygons, owned by another system: its
-- owner grants that with deploy/postgres/papeis-core.sql. Advisory locks,
-- LISTEN/NOTIFY and EXECUTE on the d6a functions need no grant.

CREATE ROLE :"dono" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'senha_dono';
CREATE ROLE :"app" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'senha_app';

ALTER DATABASE :"banco" OWNER TO :"dono";
-- Before PostgreSQL 15 every role could create in public.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;

CREATE SCHEMA IF NOT EXISTS d6a AUTHORIZATION :"dono";
ALTER SCHEMA d6a OWNER TO :"dono";
GRANT USAGE ON SCHEMA d6a TO :"app";

-- What the migrations create from now on.
ALTER DEFAULT PRIVILEGES FOR ROLE :"dono" IN SCHEMA d6a
    GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO :"app";
ALTER DEFAULT PRIVILEGES FOR ROLE :"dono" IN SCHEMA d6a
    GRANT USAGE, SELECT ON SEQUENCES TO :"app";
-- What is already there (a database that ran under one role until now,
-- after REASSIGN OWNED BY <old role> TO :"dono"; see docs/operacao.md).
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA d6a TO :"app";
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA d6a TO :"app";
