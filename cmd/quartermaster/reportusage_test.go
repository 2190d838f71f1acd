package main

import (
	"flag"
	"os"
	"strings"
	"testing"
)

// report's usage line and docs/reports.md name every flag report takes: --now was in neither,
// so no one reading them could make a report as of another time.
func TestReportUsageAndDocsNameEveryFlag(t *testing.T) {
	t.Parallel()
	sc := subcommands["report"]
	docs, err := os.ReadFile("../../docs/reports.md")
	if err != nil {
		t.Fatal(err)
	}
	sc.flags().VisitAll(func(f *flag.Flag) {
		if !strings.Contains(sc.usage, "[--"+f.Name+" ") && !strings.Contains(sc.usage, "[--"+f.Name+"]") {
			t.Errorf("report's usage line lacks --%s: %s", f.Name, sc.usage)
		}
		if !strings.Contains(string(docs), "--"+f.Name) {
			t.Errorf("docs/reports.md does not name report's --%s", f.Name)
		}
	})
	stdout, _, _ := runCLI("report", "--help")
	if !strings.Contains(stdout, "[--now 2026-11-30T15:00:00Z]") {
		t.Errorf("report --help does not show --now in its usage:\n%s", stdout)
	}
}
