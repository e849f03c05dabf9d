package store

import "github.com/formigueiro/d6a/internal/store/dbsqlc"

// Rows and parameters of the fairness statistics' queries
// (sql/queries/estatisticas.sql, run by internal/estatisticas).
type (
	EstatisticaConselheiro          = dbsqlc.D6aTransparenciaEstatistica
	RegistrosParaEstatisticasParams = dbsqlc.RegistrosParaEstatisticasParams
	EstatisticasAposParams          = dbsqlc.EstatisticasAposParams
	GravarEstatisticasParams        = dbsqlc.GravarEstatisticasParams
	AvancarEstatisticasParams       = dbsqlc.AvancarEstatisticasParams
)
