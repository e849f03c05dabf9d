-- name: RegrasDoSorteio :one
-- Where the trigger rule began and the draw rule recorded last (its
-- d6a.regras_sorteio record's bytes, '' when none): a start appends its own
-- only when it differs.
SELECT coalesce((SELECT desde_indice FROM d6a.transparencia_regras WHERE regra = 'gatilho'), 0)::bigint AS gatilho_desde,
       coalesce((SELECT registro FROM d6a.transparencia_regras WHERE regra = 'sorteio'), '')::text AS registro;

-- name: GravarRegrasDoSorteio :exec
-- desde_indice is the log's size when it was recorded: its record is the
-- next leaf the transaction appends.
INSERT INTO d6a.transparencia_regras (regra, desde_indice, registro)
VALUES ('sorteio', @desde_indice, @registro)
ON CONFLICT (regra) DO UPDATE SET desde_indice = EXCLUDED.desde_indice, registro = EXCLUDED.registro, registrada_em = now();

-- name: SorteioSegueGatilho :one
-- Whether the record of the draw event_id_sorteio was logged under the
-- trigger's rule (CONTRACT §4): its index at or past the rule's
-- desde_indice. No row when the draw has no record or the rule none.
SELECT (r.indice >= g.desde_indice)::boolean AS segue
FROM d6a.transparencia_registros r, d6a.transparencia_regras g
WHERE r.event_id_sorteio = @event_id_sorteio AND g.regra = 'gatilho';

-- name: RegrasSorteioAntes :one
-- The last d6a.regras_sorteio record before leaf @antes: the rule a draw
-- decided before the rule recorded last was under. Rule records are a few
-- in a log's life; the scan walks back from @antes on the primary key.
SELECT indice, registro FROM d6a.transparencia_registros
WHERE indice < @antes AND registro IS NOT NULL
  AND position('"tipo":"d6a.regras_sorteio"'::bytea IN registro) > 0
ORDER BY indice DESC LIMIT 1;
