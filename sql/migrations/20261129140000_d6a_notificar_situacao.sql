-- GET /d6a/conselheiros/me/situacao is answered from a cache in each d6a
-- process (internal/httpapi/cache.go). These triggers tell every process
-- what to forget: any change to a counsellor or to an assignment notifies
-- channel d6a_situacao with the citizen's id, at commit, whoever made it
-- (this instance, another one, an operator in psql). PostgreSQL folds
-- identical notifications of one transaction into one. TRUNCATE notifies
-- '*': forget everything.
-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION d6a.notificar_situacao() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'conselheiros' THEN
        IF TG_OP <> 'INSERT' THEN
            PERFORM pg_notify('d6a_situacao', OLD.cidadao_id::text);
        END IF;
        IF TG_OP <> 'DELETE' THEN
            PERFORM pg_notify('d6a_situacao', NEW.cidadao_id::text);
        END IF;
    ELSE -- atribuicoes: the citizen is the counsellor's
        IF TG_OP <> 'INSERT' THEN
            PERFORM pg_notify('d6a_situacao', c.cidadao_id::text)
            FROM d6a.conselheiros c WHERE c.id = OLD.conselheiro_id;
        END IF;
        IF TG_OP <> 'DELETE' THEN
            PERFORM pg_notify('d6a_situacao', c.cidadao_id::text)
            FROM d6a.conselheiros c WHERE c.id = NEW.conselheiro_id;
        END IF;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION d6a.notificar_situacao_tudo() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('d6a_situacao', '*');
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER conselheiros_notificar_situacao
    AFTER INSERT OR UPDATE OR DELETE ON d6a.conselheiros
    FOR EACH ROW EXECUTE FUNCTION d6a.notificar_situacao();
CREATE TRIGGER atribuicoes_notificar_situacao
    AFTER INSERT OR UPDATE OR DELETE ON d6a.atribuicoes
    FOR EACH ROW EXECUTE FUNCTION d6a.notificar_situacao();
CREATE TRIGGER conselheiros_notificar_situacao_truncate
    AFTER TRUNCATE ON d6a.conselheiros
    FOR EACH STATEMENT EXECUTE FUNCTION d6a.notificar_situacao_tudo();
CREATE TRIGGER atribuicoes_notificar_situacao_truncate
    AFTER TRUNCATE ON d6a.atribuicoes
    FOR EACH STATEMENT EXECUTE FUNCTION d6a.notificar_situacao_tudo();

-- +goose Down
DROP TRIGGER atribuicoes_notificar_situacao_truncate ON d6a.atribuicoes;
DROP TRIGGER conselheiros_notificar_situacao_truncate ON d6a.conselheiros;
DROP TRIGGER atribuicoes_notificar_situacao ON d6a.atribuicoes;
DROP TRIGGER conselheiros_notificar_situacao ON d6a.conselheiros;
DROP FUNCTION d6a.notificar_situacao_tudo();
DROP FUNCTION d6a.notificar_situacao();
