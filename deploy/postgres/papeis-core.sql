-- d6a's runtime role reads core.uc_polygons (the civic units' hierarchy,
-- CONTRACT §5) and nothing else of core. Run by the owner of core, once the
-- table exists:
--
--   psql -v ON_ERROR_STOP=1 -v app=d6a_app -d d6a -f deploy/postgres/papeis-core.sql
GRANT USAGE ON SCHEMA core TO :"app";
GRANT SELECT ON core.uc_polygons TO :"app";
