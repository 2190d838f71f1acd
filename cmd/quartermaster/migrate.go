package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/shellword"
	"github.com/acme/quartermaster/internal/store"
)

func init() {
	registerCommand("migrate", subcommand{
		summary: "migrate up|down|status: apply, roll back one, or list the database migrations",
		usage: "quartermaster migrate up|down|status [--db URL]\n" +
			"example: quartermaster migrate up --db sqlite:data/quartermaster.db",
		flags: func() *flag.FlagSet { fs, _ := migrateFlags(); return fs },
		run:   runMigrate,
	})
}

func migrateFlags() (*flag.FlagSet, *commonFlags) {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	var f commonFlags
	f.registerDB(fs)
	return fs, &f
}

// parseInterleaved parses flags that may come before, between or after the positional words, as
// an operator writes them (`migrate up --db URL`), and returns the words.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return words, nil
		}
		if args[0] == "--" {
			return append(words, args[1:]...), nil
		}
		words = append(words, args[0])
		args = args[1:]
	}
}

func runMigrate(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	fs, f := migrateFlags()
	fs.SetOutput(io.Discard)
	words, err := parseInterleaved(fs, args)
	if err != nil {
		verb := verbIn(args, "up", "up", "down", "status")
		line := []string{"quartermaster", "migrate"}
		if !slices.Contains(args, verb) {
			line = append(line, verb)
		}
		return flagMistake(fs, "quartermaster migrate "+verb, line, args, err)
	}
	verbs := []string{"up", "down", "status"}
	switch {
	case len(words) == 0:
		return needsVerb("migrate", false, verbs, "up", args, nil)
	case !slices.Contains(verbs, words[0]):
		// status only reads: it works on whichever database was named.
		return notAVerb("migrate", words[0], verbs, args, append([]string{"status"}, givenFlag(fs, "db")...))
	case len(words) > 1:
		return strayWords(fs, "migrate "+words[0], words[1:], args)
	}
	verb := words[0]
	dbURL := f.dbURL
	if verb != "up" {
		dbURL = f.existingDBURL // status and down only read or undo: they create no database
	}
	url, err := dbURL()
	if err != nil {
		return err
	}
	db, err := f.connect(ctx, url, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	up := "quartermaster migrate up"
	if f.dbFrom == "--db" && f.db != "" {
		up += " --db " + shellword.Quote(store.Redact(url))
	}
	if err := migrateVerb(ctx, db, verb, up, stdout); err != nil {
		return f.migrateError(url, err)
	}
	return nil
}

// migrateVerb runs migrate up, down or status on db; up is the command that migrates it, for
// status to suggest.
func migrateVerb(ctx context.Context, db *store.DB, verb, up string, stdout io.Writer) error {
	switch verb {
	case "up":
		before, err := db.Status(ctx)
		if err != nil {
			return err
		}
		if err := db.Migrate(ctx); err != nil {
			return err
		}
		after, err := db.Status(ctx)
		if err != nil {
			return err
		}
		n := applied(after) - applied(before)
		if n == 0 {
			fmt.Fprintf(stdout, "the %s database is up to date: %d migrations applied\n", db.Dialect(), applied(after))
		} else {
			fmt.Fprintf(stdout, "applied %s; the %s database is up to date at version %d\n", policy.Count(n, "migration", "migrations"), db.Dialect(), lastApplied(after))
		}
	case "down":
		before, err := db.Status(ctx)
		if err != nil {
			return err
		}
		if applied(before) == 0 {
			return fmt.Errorf("the %s database has no migration to roll back", db.Dialect())
		}
		if err := db.MigrateDown(ctx); err != nil {
			return err
		}
		var name string
		for _, m := range before {
			if m.Applied {
				name = m.Name
			}
		}
		fmt.Fprintf(stdout, "rolled back %s; the %s database is now at version %d\n", name, db.Dialect(), lastAppliedAfterDown(before))
	case "status":
		st, err := db.Status(ctx)
		if err != nil {
			return err
		}
		return printMigrations(stdout, db.Dialect(), st, up)
	}
	return nil
}

// verbIn is the first of args that is one of verbs, else def: the verb a command line meant
// even where its flags did not parse.
func verbIn(args []string, def string, verbs ...string) string {
	for _, a := range args {
		if slices.Contains(verbs, a) {
			return a
		}
	}
	return def
}

// applied counts the migrations of this binary that the database has.
func applied(st []store.MigrationStatus) int {
	n := 0
	for _, m := range st {
		if m.Applied && !m.Unknown {
			n++
		}
	}
	return n
}

func lastApplied(st []store.MigrationStatus) int64 {
	var v int64
	for _, m := range st {
		if m.Applied {
			v = m.Version
		}
	}
	return v
}

func lastAppliedAfterDown(before []store.MigrationStatus) int64 {
	var prev, last int64
	for _, m := range before {
		if m.Applied {
			prev, last = last, m.Version
		}
	}
	return prev
}

// printMigrations is migrate status: one line per migration, in version order, then how many are
// applied and, where some are not, the command up that applies them.
func printMigrations(w io.Writer, dialect string, st []store.MigrationStatus, up string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tMIGRATION\tSTATE\tAPPLIED AT (UTC)")
	var unknown []string
	for _, m := range st {
		state, at, name := "pending", "-", m.Name
		if m.Applied {
			state, at = "applied", m.AppliedAt.UTC().Format("2006-01-02 15:04:05")
			if m.AppliedAt.IsZero() {
				at = "-"
			}
		}
		if m.Unknown {
			state, name = "unknown", "(not in this binary)"
			unknown = append(unknown, fmt.Sprint(m.Version))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", m.Version, name, state, at)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	n, known := applied(st), len(st)-len(unknown)
	switch {
	case n == 0 && len(unknown) == 0:
		fmt.Fprintf(w, "%s: no migrations applied yet; %s applies them (serve also does at start)", dialect, up)
	case n < known && len(unknown) == 0:
		fmt.Fprintf(w, "%s: %d of %d migrations applied; %s applies the rest (serve also does at start)", dialect, n, known, up)
	default:
		fmt.Fprintf(w, "%s: %d of %d migrations applied", dialect, n, known)
	}
	if len(unknown) > 0 {
		fmt.Fprintf(w, "; the database also has %s, which this quartermaster does not know: a newer quartermaster migrated it, and this one refuses to start on it (run that version, or roll back with its migrate down)",
			strings.Join(unknown, ", "))
	}
	fmt.Fprintln(w)
	return nil
}
