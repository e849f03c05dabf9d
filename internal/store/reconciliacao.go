package store

import "github.com/formigueiro/d6a/internal/store/dbsqlc"

// Parameters of the reconciliation queries (sql/queries/reconciliacao.sql).
type (
	InserirReconciliacaoParams   = dbsqlc.InserirReconciliacaoParams
	InserirOutboxPublicadoParams = dbsqlc.InserirOutboxPublicadoParams
)
