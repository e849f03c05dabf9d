package store

import "github.com/formigueiro/d6a/internal/store/dbsqlc"

// Rows and parameters of the phase-2 queries (sql/queries/fase2.sql,
// CONTRACT §8).
type (
	Vinculo                          = dbsqlc.D6aVinculo
	RegrasElegibilidade              = dbsqlc.D6aRegrasElegibilidade
	RegistrarCapacitacaoParams       = dbsqlc.RegistrarCapacitacaoParams
	MarcarCapacitacaoConcluidaParams = dbsqlc.MarcarCapacitacaoConcluidaParams
	RegistrarVinculoParams           = dbsqlc.RegistrarVinculoParams
	ProgredirConselheiroParams       = dbsqlc.ProgredirConselheiroParams
	RegistrarCriteriosParams         = dbsqlc.RegistrarCriteriosParams
	InserirRegrasParams              = dbsqlc.InserirRegrasParams
	ContarRazoesPorUcsParams         = dbsqlc.ContarRazoesPorUcsParams
	RazoesPorUcs                     = dbsqlc.ContarRazoesPorUcsRow
)
