package main

import (
	"path/filepath"
	"testing"
)

// asOfBefore is a week in progress on another policy (Borealis, Europe/Berlin), up to Wednesday
// 25 Nov 15:30 CET; asOfAfter is what happened after it.
const asOfBefore = `# Monday 23 Nov 08:00 CET
rita@borealis.example: /gpu request 2 dev for 6h
sam@borealis.example: /gpu request 1 bigiron for 40h
:advance 1h
:util L-2 0
:advance 46h
# Wednesday 07:00: vic asks for more than the class allows; vera has not decided by 15:30
vic@borealis.example: /gpu request 3 dev for 4h
:advance 1h
rolf@borealis.example: /gpu request 1 dev for 10h
:advance 7h30m
`

const asOfAfter = `# after Wednesday 15:30: the lease running then is released, vera approves, more leases
:advance 30m
rolf@borealis.example: /gpu release L-4
vera@borealis.example: /gpu approve L-3
sven@borealis.example: /gpu request 2 dev for 3h
:advance 5h
`

// A report made with --now T tells the week as it stood at T, as the scheduler would have told it
// then: a lease released after T is billed up to T, a decision after T is still pending, leases
// asked for and telemetry recorded after T are not in it.
func TestReportAsOfHidesWhatCameLater(t *testing.T) {
	t.Parallel()
	pol := filepath.Join("..", "..", "commands", "testdata", "other.yaml")
	const start, at = "2026-11-23T07:00:00Z", "2026-11-25T14:30:00Z"
	reports := func(script string) map[string]string {
		dir := t.TempDir()
		runConsoleAt(t, dir, start, script, "--policy", pol)
		db := "sqlite:" + filepath.Join(dir, "quartermaster.db")
		out := map[string]string{}
		for _, f := range []string{"text", "csv", "json"} {
			stdout, stderr, code := runCLI("report", "--policy", pol, "--db", db, "--now", at, "--week", "this week", "--format", f)
			if code != 0 {
				t.Fatalf("report --format %s: exit %d: %s", f, code, stderr)
			}
			out[f] = stdout
		}
		return out
	}
	then := reports(asOfBefore)
	later := reports(asOfBefore + asOfAfter)
	for _, f := range []string{"text", "csv", "json"} {
		if then[f] != later[f] {
			t.Errorf("report --now %s --format %s changed with what happened after it:\n--- made at %s\n%s\n--- made later\n%s", at, f, at, then[f], later[f])
		}
	}
}
