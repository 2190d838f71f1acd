package store

import (
	"database/sql/driver"
	"fmt"
	"time"
)

// Precision is the resolution at which the store keeps times (PostgreSQL's timestamptz).
const Precision = time.Microsecond

// dbTime is a nullable time column: the zero time.Time is NULL, and every other time is written in
// UTC truncated to Precision and read back in UTC, so a value round-trips alike on both databases.
type dbTime time.Time

// StoredTime is t as the store keeps it: UTC, truncated to Precision; the zero time stays zero.
func StoredTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(Precision)
}

// Value implements driver.Valuer.
func (t dbTime) Value() (driver.Value, error) {
	tt := time.Time(t)
	if tt.IsZero() {
		return nil, nil
	}
	return StoredTime(tt), nil
}

// sqliteTimeLayouts are the text forms a time column can come back in when the driver does not
// parse it itself (an expression rather than a DATETIME column).
var sqliteTimeLayouts = []string{
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02T15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	time.RFC3339Nano,
}

// Scan implements sql.Scanner.
func (t *dbTime) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*t = dbTime{}
		return nil
	case time.Time:
		*t = dbTime(StoredTime(v))
		return nil
	case []byte:
		return t.parse(string(v))
	case string:
		return t.parse(v)
	}
	return fmt.Errorf("store: cannot read a time from %T", src)
}

func (t *dbTime) parse(s string) error {
	for _, layout := range sqliteTimeLayouts {
		if v, err := time.Parse(layout, s); err == nil {
			*t = dbTime(StoredTime(v))
			return nil
		}
	}
	return fmt.Errorf("store: cannot read a time from %q", s)
}
