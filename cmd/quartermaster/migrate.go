package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/acme/quartermaster/internal/store"
)

func init() {
	register("migrate", "migrate up|down|status: apply, roll back one, or list the database migrations", runMigrate)
}

func runMigrate(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f commonFlags
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return errUsage{err.Error()}
	}
	verb := fs.Arg(0)
	if fs.NArg() != 1 || (verb != "up" && verb != "down" && verb != "status") {
		return errUsage{"usage: quartermaster migrate up|down|status [--db URL] (example: quartermaster migrate up --db sqlite:data/quartermaster.db)"}
	}
	url, err := f.dbURL()
	if err != nil {
		return err
	}
	db, err := store.Connect(ctx, url, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	switch verb {
	case "up":
		if err := db.Migrate(ctx); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "migrations applied")
	case "down":
		if err := db.MigrateDown(ctx); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "rolled back one migration")
	case "status":
		st, err := db.Status(ctx)
		if err != nil {
			return err
		}
		fmt.Fprint(stdout, st)
	}
	return nil
}
