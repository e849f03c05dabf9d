-- name: BuscarTodasHierarquias :many
-- Read-only, once per cache TTL (spec 6.4); d6a never writes to core.
SELECT id, parent_uc_id FROM core.uc_polygons;

-- name: BuscarHierarquiaRegistrada :many
-- The links the transparency log holds, read when this process may not
-- know them all (its first batch, or another instance appended since).
SELECT unidade_civica_id, parent_uc_id, nivel FROM d6a.hierarquia_registrada;

-- name: RegistrarHierarquia :exec
-- The batch's new hierarquia.uc records, in one statement (uuid.Nil as
-- parent: a root).
INSERT INTO d6a.hierarquia_registrada (unidade_civica_id, parent_uc_id, nivel)
SELECT u.uc, NULLIF(u.parent, '00000000-0000-0000-0000-000000000000'::uuid), u.nivel
FROM (SELECT unnest(@ucs::uuid[]) AS uc, unnest(@parents::uuid[]) AS parent, unnest(@niveis::int[]) AS nivel) AS u
ON CONFLICT (unidade_civica_id) DO UPDATE
SET parent_uc_id = EXCLUDED.parent_uc_id, nivel = EXCLUDED.nivel;
