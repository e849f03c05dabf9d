-- The public reads of the HTTP routes (internal/httpapi) that no other
-- consumer shares, through store/leituras_publicas.go's methods.

-- name: BuscarResumoDoLog :one
-- GET /d6a/transparencia/resumo: the latest signed checkpoint (no row
-- before the first) and the first index whose draws follow their trigger
-- (CONTRACT §4; 0 when the rule has no row).
SELECT c.tamanho, c.raiz, c.assinado_em,
       coalesce((SELECT desde_indice FROM d6a.transparencia_regras WHERE regra = 'gatilho'), 0)::bigint AS gatilho_desde
FROM d6a.transparencia_checkpoints c
ORDER BY c.tamanho DESC
LIMIT 1;
