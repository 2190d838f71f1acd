package ingest

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// Every outcome quartermaster_agent_reports_total counts is a row of docs/agent.md's table of what
// the service does with a report, so an operator reading a non-zero series finds what it means.
func TestEveryReportOutcomeIsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/agent.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "| what | answer | counted as |")
	if !ok {
		t.Fatal("docs/agent.md has no table of report outcomes")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)\\| `([a-z_]+)` \\|$").FindAllStringSubmatch(table, -1) {
		documented[m[1]] = true
	}
	for _, r := range reasons {
		if !documented[r] {
			t.Errorf("outcome %q is counted but not in docs/agent.md's table", r)
		}
	}
}
