package store

import (
	"context"
	"fmt"
	"sync"
)

// memoryImage is a private in-memory SQLite database (sqlite::memory:) as the migrations leave it,
// serialized the first time this process migrates one. Every later one starts as a copy of it:
// applying the migrations one statement at a time again costs far more than the copy (tests open
// hundreds of them), and Migrate then finds nothing left to apply.
var memoryImage struct {
	sync.Mutex
	buf []byte
}

// plainMemory says whether url is exactly the private in-memory SQLite database, with no options
// that could change what a copy of another one would hold.
func plainMemory(url string) bool {
	return url == "sqlite::memory:"
}

// sqliteImage is the part of modernc.org/sqlite's connection that copies a database out and in.
type sqliteImage interface {
	Serialize() ([]byte, error)
	Deserialize([]byte) error
}

// withImage runs fn on the driver connection of the DB's one SQLite connection.
func (db *DB) withImage(ctx context.Context, fn func(sqliteImage) error) error {
	c, err := db.x.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(func(dc any) error {
		im, ok := dc.(sqliteImage)
		if !ok {
			return fmt.Errorf("store: the SQLite driver's connection (%T) cannot copy a database", dc)
		}
		return fn(im)
	})
}

// restoreMemoryImage makes the DB, a new in-memory database, a copy of the migrated image, if this
// process has one. It reports whether it did; the caller migrates from scratch where it did not.
func (db *DB) restoreMemoryImage(ctx context.Context) bool {
	memoryImage.Lock()
	buf := memoryImage.buf
	memoryImage.Unlock()
	if buf == nil {
		return false
	}
	err := db.withImage(ctx, func(im sqliteImage) error { return im.Deserialize(buf) })
	if err != nil {
		db.logger.WarnContext(ctx, "in-memory database: migrating instead of copying the migrated image", "err", err)
		return false
	}
	return true
}

// saveMemoryImage keeps a copy of the DB, an in-memory database just migrated, for the next ones.
func (db *DB) saveMemoryImage(ctx context.Context) {
	var buf []byte
	err := db.withImage(ctx, func(im sqliteImage) error {
		var err error
		buf, err = im.Serialize()
		return err
	})
	if err != nil || len(buf) == 0 {
		return
	}
	memoryImage.Lock()
	if memoryImage.buf == nil {
		memoryImage.buf = buf
	}
	memoryImage.Unlock()
}
