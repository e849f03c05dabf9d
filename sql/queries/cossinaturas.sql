-- The witnesses' cosignatures of the log's checkpoints (C2SP tlog-witness,
-- tlog-cosignature; CONTRACT §7 "Witnesses"), stored by internal/testemunha
-- through store/cossinaturas.go's methods.

-- name: InserirCossinatura :exec
-- Once per witness key and checkpoint size.
INSERT INTO d6a.transparencia_cossinaturas (chave, tamanho, linha, cossinada_em, recebida_em)
VALUES (@chave, @tamanho, @linha, @cossinada_em, @recebida_em) ON CONFLICT (chave, tamanho) DO NOTHING;

-- name: BuscarUltimaCossinatura :one
-- The latest size a witness key cosigned, and when (0 and NULL when none).
SELECT coalesce(max(tamanho), 0)::bigint AS tamanho, max(cossinada_em) AS cossinada_em
FROM d6a.transparencia_cossinaturas WHERE chave = @chave;

-- name: BuscarLinhasCossinatura :many
-- The signature lines received for the checkpoint of one size, by key.
SELECT linha FROM d6a.transparencia_cossinaturas WHERE tamanho = @tamanho ORDER BY chave;

-- name: BuscarCossinaturasCobrindo :many
-- Every cosignature of a checkpoint covering record @indice (size >
-- indice), with the log's note of that checkpoint: the inputs of a
-- commitment time (CONTRACT §4a), which Go computes.
SELECT s.chave, s.tamanho, s.linha, s.cossinada_em, c.nota
FROM d6a.transparencia_cossinaturas s
JOIN d6a.transparencia_checkpoints c ON c.tamanho = s.tamanho
WHERE s.tamanho > @indice
ORDER BY s.tamanho, s.chave;
