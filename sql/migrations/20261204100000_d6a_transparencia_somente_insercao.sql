-- The transparency log's tables are insert-only in the database, not only
-- in the code (issue 50): a leaf, a tlog hash, a signed checkpoint or a
-- witness's cosignature is never changed nor removed. The one change the
-- log allows is the elimination of a record's body (spec 2.2 / N-0d):
-- registro becomes NULL and eliminado_em is set, every other column stays.
-- The runtime role (deploy/postgres/papeis.sql) owns none of these tables,
-- so it can neither drop nor disable these triggers.
-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION d6a.transparencia_somente_eliminacao() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.registro IS NOT NULL AND NEW.registro IS NULL AND NEW.eliminado_em IS NOT NULL
       AND NEW.indice = OLD.indice AND NEW.event_id_sorteio = OLD.event_id_sorteio
       AND NEW.demanda_id = OLD.demanda_id AND NEW.hash_folha = OLD.hash_folha THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'd6a.transparencia_registros: só a eliminação do corpo de um registro é permitida'
        USING ERRCODE = 'insufficient_privilege';
END
$$;
-- +goose StatementEnd
CREATE TRIGGER transparencia_registros_somente_eliminacao
    BEFORE UPDATE ON d6a.transparencia_registros
    FOR EACH ROW EXECUTE FUNCTION d6a.transparencia_somente_eliminacao();
CREATE TRIGGER transparencia_registros_somente_insercao
    BEFORE DELETE ON d6a.transparencia_registros
    FOR EACH ROW EXECUTE FUNCTION d6a.somente_insercao();
CREATE TRIGGER transparencia_hashes_somente_insercao
    BEFORE UPDATE OR DELETE ON d6a.transparencia_hashes
    FOR EACH ROW EXECUTE FUNCTION d6a.somente_insercao();
CREATE TRIGGER transparencia_checkpoints_somente_insercao
    BEFORE UPDATE OR DELETE ON d6a.transparencia_checkpoints
    FOR EACH ROW EXECUTE FUNCTION d6a.somente_insercao();
CREATE TRIGGER transparencia_cossinaturas_somente_insercao
    BEFORE UPDATE OR DELETE ON d6a.transparencia_cossinaturas
    FOR EACH ROW EXECUTE FUNCTION d6a.somente_insercao();
-- TRUNCATE skips row triggers: a statement trigger refuses it.
CREATE TRIGGER transparencia_registros_sem_truncate
    BEFORE TRUNCATE ON d6a.transparencia_registros
    FOR EACH STATEMENT EXECUTE FUNCTION d6a.somente_insercao();
CREATE TRIGGER transparencia_hashes_sem_truncate
    BEFORE TRUNCATE ON d6a.transparencia_hashes
    FOR EACH STATEMENT EXECUTE FUNCTION d6a.somente_insercao();
CREATE TRIGGER transparencia_checkpoints_sem_truncate
    BEFORE TRUNCATE ON d6a.transparencia_checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION d6a.somente_insercao();
CREATE TRIGGER transparencia_cossinaturas_sem_truncate
    BEFORE TRUNCATE ON d6a.transparencia_cossinaturas
    FOR EACH STATEMENT EXECUTE FUNCTION d6a.somente_insercao();
CREATE TRIGGER config_sem_truncate
    BEFORE TRUNCATE ON d6a.config
    FOR EACH STATEMENT EXECUTE FUNCTION d6a.somente_insercao();
CREATE TRIGGER acoes_administrativas_sem_truncate
    BEFORE TRUNCATE ON d6a.acoes_administrativas
    FOR EACH STATEMENT EXECUTE FUNCTION d6a.somente_insercao();

-- +goose Down
DROP TRIGGER acoes_administrativas_sem_truncate ON d6a.acoes_administrativas;
DROP TRIGGER config_sem_truncate ON d6a.config;
DROP TRIGGER transparencia_cossinaturas_sem_truncate ON d6a.transparencia_cossinaturas;
DROP TRIGGER transparencia_checkpoints_sem_truncate ON d6a.transparencia_checkpoints;
DROP TRIGGER transparencia_hashes_sem_truncate ON d6a.transparencia_hashes;
DROP TRIGGER transparencia_registros_sem_truncate ON d6a.transparencia_registros;
DROP TRIGGER transparencia_cossinaturas_somente_insercao ON d6a.transparencia_cossinaturas;
DROP TRIGGER transparencia_checkpoints_somente_insercao ON d6a.transparencia_checkpoints;
DROP TRIGGER transparencia_hashes_somente_insercao ON d6a.transparencia_hashes;
DROP TRIGGER transparencia_registros_somente_insercao ON d6a.transparencia_registros;
DROP TRIGGER transparencia_registros_somente_eliminacao ON d6a.transparencia_registros;
DROP FUNCTION d6a.transparencia_somente_eliminacao();
