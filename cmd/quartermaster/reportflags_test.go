package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A mistake in report's flags or arguments is one sentence on standard error with an example that
// works at the time the report is asked for (--now, when given): the command as typed, the flag
// put right, and no example week that has not begun yet.
func TestReportFlagMistakesGiveOneSentenceAndAWorkingExample(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--now", "2026-10-07T00:00:00Z", "--bogus"},
			`quartermaster report: --bogus is not a flag of quartermaster report; it takes --db, --format, --now, --out, --policy, --team and --week (quartermaster report --help says what each does), e.g. quartermaster report --now 2026-10-07T00:00:00Z`},
		{[]string{"--now", "2026-10-07T00:00:00Z", "--x"},
			`quartermaster report: --x is not a flag of quartermaster report; it takes --db, --format, --now, --out, --policy, --team and --week (quartermaster report --help says what each does), e.g. quartermaster report --now 2026-10-07T00:00:00Z`},
		{[]string{"--now", "2026-10-07T00:00:00Z", "--weeek", "2026-W40"},
			`quartermaster report: --weeek is not a flag of quartermaster report; the nearest is --week, e.g. quartermaster report --now 2026-10-07T00:00:00Z --week 2026-W40`},
		{[]string{"--now", "2026-10-07T00:00:00Z", "--week"},
			`quartermaster report: --week needs a value; e.g. quartermaster report --now 2026-10-07T00:00:00Z --week 2026-W40`},
		{[]string{"--now", "2026-10-07T00:00:00Z", "--format", "csv", "2026-W40"},
			`quartermaster report: report takes only flags, but got "2026-W40"; e.g. quartermaster report --now 2026-10-07T00:00:00Z --format csv --week 2026-W40`},
		{[]string{"--now", "2026-10-07T00:00:00Z", "--format", "xlsx"},
			`quartermaster report: --format "xlsx" is not one of text, csv, json, png; e.g. quartermaster report --now 2026-10-07T00:00:00Z --format csv`},
	} {
		_, stderr, code := runCLI(append([]string{"report"}, c.args...)...)
		if code != 2 || strings.TrimSpace(stderr) != c.want {
			t.Errorf("report %v: exit %d, %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// A report is read from a database that exists: a --db naming no file (a typo, or the default
// data/quartermaster.db in another directory) is refused, not answered with an empty week from a
// database created on the spot. Where --out cannot be written (its directory does not exist, or it
// is a directory) the answer says so in a sentence with a file name that works, and nothing is
// left behind.
func TestReportNeedsAnExistingDatabaseAndAFileToWrite(t *testing.T) {
	dir := t.TempDir()
	// The examples name the database where the console keeps it, under QM_DATA_DIR.
	t.Setenv("QM_DATA_DIR", dir)
	t.Setenv("QM_DATABASE_URL", "")
	runConsoleAt(t, dir, "2026-11-24T15:00:00Z", "alice@acme.example: /gpu request 1 interactive 2h\n:advance 3h\n")
	db := "sqlite:" + filepath.Join(dir, "quartermaster.db")
	missing := filepath.Join(dir, "qm.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--db", "sqlite:" + missing},
			"quartermaster report: there is no database " + missing + "; name the one the service uses with --db or QM_DATABASE_URL; e.g. quartermaster report --now 2026-12-01T15:00:00Z --week 2026-W48 --db " + db},
		{[]string{"--db", db, "--format", "csv", "--out", filepath.Join(dir, "nope", "w.csv")},
			"quartermaster report: --out " + filepath.Join(dir, "nope", "w.csv") + " cannot be written: the directory " + filepath.Join(dir, "nope") + " does not exist; e.g. quartermaster report --now 2026-12-01T15:00:00Z --week 2026-W48 --db " + db + " --format csv --out showback-2026-W48.csv"},
		{[]string{"--db", db, "--format", "csv", "--out", dir},
			"quartermaster report: --out " + dir + " is a directory; name a file in it; e.g. quartermaster report --now 2026-12-01T15:00:00Z --week 2026-W48 --db " + db + " --format csv --out " + filepath.Join(dir, "showback-2026-W48.csv")},
	} {
		args := append([]string{"report", "--now", "2026-12-01T15:00:00Z", "--week", "2026-W48"}, c.args...)
		_, stderr, code := runCLI(args...)
		if code != 2 || strings.TrimSpace(stderr) != c.want {
			t.Errorf("report %v: exit %d, %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
	// Without --db, in a directory where nothing has run.
	elsewhere := t.TempDir()
	t.Setenv("QM_DATA_DIR", elsewhere)
	_, stderr, code := runCLI("report", "--now", "2026-12-01T15:00:00Z")
	if want := "quartermaster report: there is no database " + filepath.Join(elsewhere, "quartermaster.db") + " here; run the report where the console or serve keeps its database (QM_DATA_DIR), or name it with --db or QM_DATABASE_URL; e.g. quartermaster report --db sqlite:/var/lib/quartermaster/quartermaster.db --now 2026-12-01T15:00:00Z"; code != 2 || strings.TrimSpace(stderr) != want {
		t.Errorf("report without a database: exit %d, %q; want exit 2 and %q", code, stderr, want)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) > 0 {
		t.Errorf("report without a database left %v behind", entries)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("report created %s", missing)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("report left %s behind", e.Name())
		}
	}
}

// A flag of report given no value is one sentence saying what it needs, with an example that
// gives it one: --team's names a team of the policy in use (the first), or reads as a team where
// the policy cannot be read; never the list of every flag, nor an example without the flag. The
// example is the command as typed, with the flag given a value.
func TestReportFlagWithoutAValueSaysWhatItNeeds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	own := filepath.Join(dir, "own.yaml")
	example, err := os.ReadFile(filepath.Join(repoRoot, "docs", "quartermaster.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b := strings.ReplaceAll(string(example), "name: vision", "name: robotics")
	b = strings.ReplaceAll(b, "team: vision", "team: robotics")
	b = strings.ReplaceAll(b, "#vision-gpu", "#robotics-gpu")
	if err := os.WriteFile(own, []byte(b), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runQM("policy", "check", "--policy", own); code != 0 {
		t.Fatalf("the test's policy does not load: %s", stderr)
	}
	const now = "2026-10-07T00:00:00Z"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--now", now, "--team"},
			`quartermaster report: --team needs a team, by name or by its channel (as #vision-gpu); e.g. quartermaster report --now 2026-10-07T00:00:00Z --team vision`},
		{[]string{"--now", now, "--policy", own, "--team"},
			`quartermaster report: --team needs a team, by name or by its channel (as #robotics-gpu); e.g. quartermaster report --now 2026-10-07T00:00:00Z --policy ` + own + ` --team robotics`},
		{[]string{"--now", now, "--policy", filepath.Join(dir, "missing.yaml"), "--team"},
			`quartermaster report: --team needs a team, by name or by its channel; e.g. quartermaster report --now 2026-10-07T00:00:00Z --policy ` + filepath.Join(dir, "missing.yaml") + ` --team research`},
		{[]string{"--now", now, "--format", "csv", "--out"},
			`quartermaster report: --out needs a file to write; e.g. quartermaster report --now 2026-10-07T00:00:00Z --format csv --out showback-2026-W40.csv`},
		{[]string{"--now", now, "--db"},
			`quartermaster report: --db needs a database URL; e.g. quartermaster report --now 2026-10-07T00:00:00Z --db sqlite:data/quartermaster.db`},
		{[]string{"--now", now, "--policy"},
			`quartermaster report: --policy needs a policy file; e.g. quartermaster report --now 2026-10-07T00:00:00Z --policy /etc/quartermaster/quartermaster.yaml`},
		{[]string{"--week", "2026-W40", "--now"},
			`quartermaster report: --now needs an RFC3339 instant; e.g. quartermaster report --week 2026-W40 --now 2026-10-06T00:00:00Z`},
	} {
		_, stderr, code := runCLI(append([]string{"report"}, c.args...)...)
		if code != 2 || strings.TrimSpace(stderr) != c.want {
			t.Errorf("report %v: exit %d,\n%q; want exit 2 and\n%q", c.args, code, stderr, c.want)
		}
	}
}

// A --db naming no file, where the default database is not there either, is not answered with
// the default as its example (typed back, it is refused in the same words): the example names
// where an installed service keeps its database, as a report without --db is answered.
func TestReportOnAMissingDatabaseDoesNotSuggestAnotherMissingOne(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("QM_DATA_DIR", dir)
	t.Setenv("QM_DATABASE_URL", "")
	missing := filepath.Join(dir, "qm.db")
	_, stderr, code := runCLI("report", "--week", "2026-W48", "--db", "sqlite:"+missing)
	want := "quartermaster report: there is no database " + missing + "; name the one the service uses with --db or QM_DATABASE_URL; e.g. quartermaster report --week 2026-W48 --db sqlite:/var/lib/quartermaster/quartermaster.db"
	if code != 2 || strings.TrimSpace(stderr) != want {
		t.Errorf("exit %d, %q; want exit 2 and %q", code, stderr, want)
	}
}
