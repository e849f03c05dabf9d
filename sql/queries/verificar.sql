-- The reads of the draw's verifier (internal/verificar/banco) that no
-- other consumer shares, through store/verificar.go's methods.

-- name: SorteioSegueGatilho :one
-- Whether the record of the draw event_id_sorteio was logged under the
-- trigger's rule (CONTRACT §4): its index at or past the rule's
-- desde_indice. No row when the draw has no record or the rule none.
SELECT (r.indice >= g.desde_indice)::boolean AS segue
FROM d6a.transparencia_registros r, d6a.transparencia_regras g
WHERE r.event_id_sorteio = @event_id_sorteio AND g.regra = 'gatilho';
