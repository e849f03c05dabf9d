-- The connection's generic plans refitted in the round trip that takes the
-- draw lock (issue 24, CONTRACT §5). d6a.ajustar_planos discards the
-- connection's cached plans (DISCARD PLANS) when a table of the draw path
-- doubled or halved in pages since the connection last planned, or when it
-- never planned, and keeps the sizes it planned for in a session setting.
-- Called from the lock's statement, it runs before the reads queued behind
-- it in the same pipeline are bound, so they plan for the tables as they
-- are: BEGIN, the lock and the batch's opening reads go in one round trip
-- (store.Planos did this in Go, which needed the sizes back first: a round
-- trip of its own).

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION d6a.ajustar_planos() RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    -- The tables the draw path reads.
    tamanhos bigint[] := ARRAY[
        pg_relation_size('d6a.conselheiros'), pg_relation_size('d6a.atribuicoes'),
        pg_relation_size('d6a.fila_pendentes'), pg_relation_size('d6a.outbox'),
        pg_relation_size('d6a.eventos_processados'), pg_relation_size('d6a.auditoria_sorteios'),
        pg_relation_size('d6a.contador_recusas')
    ];
    antes  bigint[] := nullif(current_setting('d6a.tamanhos_planejados', true), '')::bigint[];
    pagina constant bigint := 8192;
    a bigint;
    b bigint;
BEGIN
    IF antes IS NOT NULL AND cardinality(antes) = cardinality(tamanhos) THEN
        FOR i IN 1 .. cardinality(tamanhos) LOOP
            a := antes[i] / pagina;
            b := tamanhos[i] / pagina;
            IF b >= 2 * a + 1 OR a >= 2 * b + 1 THEN
                antes := NULL;
                EXIT;
            END IF;
        END LOOP;
        IF antes IS NOT NULL THEN
            RETURN false;
        END IF;
    END IF;
    EXECUTE 'DISCARD PLANS';
    PERFORM set_config('d6a.tamanhos_planejados', tamanhos::text, false);
    RETURN true;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION d6a.ajustar_planos();
