package store

import (
	"errors"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// isUniqueViolation reports whether err is a unique constraint refusing a row, on either database.
func isUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	if e := pq.As(err, pqerror.UniqueViolation); e != nil {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// isForeignKeyViolation reports whether err is a foreign key refusing a row, on either database.
func isForeignKeyViolation(err error) bool {
	if err == nil {
		return false
	}
	if e := pq.As(err, pqerror.ForeignKeyViolation); e != nil {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
	}
	return false
}

// PostgresError is the SQLSTATE code ("28P01") and the message of the PostgreSQL error in err's
// chain, for a caller that explains it; ok is false when there is none.
func PostgresError(err error) (code, message string, ok bool) {
	var e *pq.Error
	if errors.As(err, &e) {
		return string(e.Code), e.Message, true
	}
	return "", "", false
}
