package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A new team that first asks on a Sunday for an exception approved on Monday, after the weekly
// post, gets its first GPU in the next week: that week's report tells its time to first GPU,
// which the week of its request could not.
func TestTimeToFirstGPUOfARequestApprovedTheNextWeek(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Sunday 6 Dec 15:00 CST (2026-W49): maya of language asks for 2 GPUs (large-request);
	// lee approves on Monday 7 Dec at 10:00 (2026-W50) and it starts at once.
	runConsoleAt(t, dir, "2026-12-06T21:00:00Z", `maya@acme.example: /gpu request 2 interactive 1h
:advance 19h
lee@acme.example: /gpu approve L-1
:advance 2h
`)
	db := "sqlite:" + filepath.Join(dir, "quartermaster.db")
	for _, c := range []struct{ week, now, want string }{
		{"2026-W49", "2026-12-07T15:00:00Z", "New team: language asked for GPUs for the first time on Sun 6 Dec 15:00 CST; no workspace has started yet\n"},
		{"2026-W50", "2026-12-14T15:00:00Z", "New team: language asked for GPUs for the first time on Sun 6 Dec 15:00 CST; time to first GPU 19h\n"},
	} {
		out, stderr, code := runCLI("report", "--db", db, "--now", c.now, "--week", c.week)
		if code != 0 {
			t.Fatalf("report --week %s: exit %d: %s", c.week, code, stderr)
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("report --week %s does not say %q:\n%s", c.week, c.want, out)
		}
	}
}
