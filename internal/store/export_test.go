package store

import "github.com/formigueiro/d6a/internal/store/dbsqlc"

// Consultas gives the store's own tests the generated queries of t, which
// nothing outside the package reaches.
func Consultas(t Tx) *dbsqlc.Queries { return t.q }

// Conexao gives the store's own tests what t runs on, for the statements
// no method of Tx makes (locks, plans, settings).
func Conexao(t Tx) dbsqlc.DBTX { return t.db }
