// Package migrations holds Quartermaster's database schema as goose SQL migrations, one folder per
// dialect: postgres/ and sqlite/. Both folders carry the same numbered steps (00001_..., 00002_...),
// so a version means the same schema on either database. internal/store picks a folder with fs.Sub
// and applies it.
//
// To change the schema, add the next number to both folders; never edit a file that has shipped.
package migrations

import "embed"

// FS holds postgres/*.sql and sqlite/*.sql.
//
//go:embed postgres/*.sql sqlite/*.sql
var FS embed.FS
