// Package migrations holds the d6a schema migrations (goose SQL files) that
// both the binary applies and sqlc reads to generate the store.
package migrations

import "embed"

// FS holds every migration, named <version>_<name>.sql.
//
//go:embed *.sql
var FS embed.FS
