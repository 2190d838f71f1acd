package showback_test

import (
	"regexp"
	"testing"

	"github.com/acme/quartermaster/reports/showback"
)

// The files of a person's report (its CSV, written into the console's --reports folder and
// attached in chat) are named after them. People whose addresses differ only in letters beyond a
// to z (山田@ and 田中@, jürgen@ and jörgen@, müller@ and muller@) get files of different names,
// so one's report never overwrites another's in that folder; the names stay plain ASCII, with an
// accented letter written as its letter.
func TestPeopleBeyondAToZGetReportFilesOfTheirOwn(t *testing.T) {
	plain := regexp.MustCompile(`^showback-2026-W40-[A-Za-z0-9._-]+\.csv$`)
	for _, pair := range [][2]string{
		{"山田@fabrica.example", "田中@fabrica.example"},
		{"jürgen@fabrica.example", "jörgen@fabrica.example"},
		{"müller@fabrica.example", "muller@fabrica.example"},
	} {
		var names [2]string
		for i, user := range pair {
			names[i] = (&showback.Report{Week: "2026-W40", Scope: showback.Filter{User: user}}).FileName("csv")
			if !plain.MatchString(names[i]) {
				t.Errorf("%s: file %q is not a plain name", user, names[i])
			}
		}
		if names[0] == names[1] {
			t.Errorf("%s and %s both get the file %q", pair[0], pair[1], names[0])
		}
	}
	if got := (&showback.Report{Week: "2026-W40", Scope: showback.Filter{User: "jürgen@fabrica.example"}}).FileName("csv"); !regexp.MustCompile(`^showback-2026-W40-jurgen_fabrica\.example`).MatchString(got) {
		t.Errorf("jürgen@fabrica.example: file %q; want it to begin showback-2026-W40-jurgen_fabrica.example", got)
	}
	if got := (&showback.Report{Week: "2026-W40", Scope: showback.Filter{User: "ana@odd.example"}}).FileName("csv"); got != "showback-2026-W40-ana_odd.example.csv" {
		t.Errorf("ana@odd.example: file %q, want showback-2026-W40-ana_odd.example.csv", got)
	}
}
