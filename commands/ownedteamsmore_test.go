package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// manyOwnedPolicy is a policy of n teams (k001, k002, …) that one person, in none of them, owns.
func manyOwnedPolicy(t *testing.T, n int) string {
	var b strings.Builder
	b.WriteString("organization: Kestrel Works\ncurrency: CHF\ntimezone: Europe/Zurich\nclasses:\n")
	b.WriteString("  - {name: falke, sku: L40S, price_per_gpu_hour: 1.5, max_gpus: 4, max_duration: 12h}\n")
	b.WriteString("default_quota: {gpus: {falke: 1}, gpu_hours_per_week: 10}\nteams:\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  - {name: k%03d, idp_groups: [gk%03d], budget_owners: [vreni@kestrel.example], quota: {gpus: {falke: 2}}}\n", i, i)
	}
	b.WriteString("approvals: {timeout: 24h, fallback_approvers: [vreni@kestrel.example]}\nbackend: sim\ndirectory:\n")
	b.WriteString("  - {user: vreni@kestrel.example, groups: [g-finanz]}\n  - {user: urs@kestrel.example, groups: [gk001]}\n")
	b.WriteString("sim:\n  nodes:\n    - {name: n, count: 1, class: falke, gpus: 8}\n")
	file := filepath.Join(t.TempDir(), "kestrel.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// /gpu quota for a budget owner in no team, of more teams than it gives a line each, names the
// teams left over as the other lists of names do ("k021, k022, … and 5 more"), not in a line of
// its own that only counts them; and one team more than the lines is shown in a line, as such
// lists never end "and 1 more".
func TestQuotaOfAnOwnerOfManyTeamsNamesTheRestAsOtherListsDo(t *testing.T) {
	all := func(h *harness) string {
		r := mustOK(t, h.say("vreni@kestrel.example", "/gpu quota"))
		s := r.Text
		for _, sec := range r.Sections {
			s += "\n" + sec.Title + "\n" + sec.Text
		}
		return s
	}
	// 21 teams: each has its line.
	got := all(newHarnessOn(t, manyOwnedPolicy(t, maxTeamsNamed+1)))
	for i := 1; i <= maxTeamsNamed+1; i++ {
		if !strings.Contains(got, fmt.Sprintf("k%03d: falke 0 of 2 GPUs in use", i)) {
			t.Errorf("%d teams: no line of k%03d:\n%s", maxTeamsNamed+1, i, got)
		}
	}
	if strings.Contains(got, "more") {
		t.Errorf("%d teams: a team is left to \"more\":\n%s", maxTeamsNamed+1, got)
	}
	// 45 teams: 20 lines, then the others named, 20 of them, and how many more.
	got = all(newHarnessOn(t, manyOwnedPolicy(t, 45)))
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "and ") {
			t.Errorf("a line of its own counts the teams left over: %q\n%s", line, got)
		}
	}
	var names []string
	for i := maxTeamsNamed + 1; i <= 2*maxTeamsNamed; i++ {
		names = append(names, fmt.Sprintf("k%03d", i))
	}
	if want := strings.Join(names, ", ") + " and 5 more"; !strings.Contains(got, want) {
		t.Errorf("45 teams: the teams left over are not named as %q:\n%s", want, got)
	}
	if strings.Contains(got, fmt.Sprintf("k%03d: ", maxTeamsNamed+1)) {
		t.Errorf("45 teams: more than %d lines:\n%s", maxTeamsNamed, got)
	}
	h := newHarnessOn(t, manyOwnedPolicy(t, 45))
	if r := mustOK(t, h.say("vreni@kestrel.example", "/gpu quota k021")); !strings.HasPrefix(r.Text, "Team k021 this week") {
		t.Errorf("/gpu quota k021 answered %q", r.Text)
	}
}
