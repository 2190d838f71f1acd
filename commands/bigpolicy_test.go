package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// /gpu policy on a policy of 120 classes and 150 teams, each team with a quota in two classes,
// names each team's two classes and says how many it has none in, instead of a line of 120
// quotas per team (most of them 0) that leaves room in a reply for a few teams only.
func TestPolicyQuotasListOnlyTheClassesATeamHasGPUsIn(t *testing.T) {
	var b strings.Builder
	b.WriteString("organization: Many Classes Inc\ncurrency: USD\ntimezone: UTC\nclasses:\n")
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&b, "  - {name: c%03d, sku: H100, price_per_gpu_hour: 1, max_gpus: 8, max_duration: 8h}\n", i)
	}
	b.WriteString("default_quota: {gpus: {c001: 1}, gpu_hours_per_week: 10}\nteams:\n")
	for i := 1; i <= 150; i++ {
		fmt.Fprintf(&b, "  - {name: t%03d, idp_groups: [g%03d], budget_owners: [o@x.example], quota: {gpus: {c%03d: 2, c%03d: 4}, gpu_hours_per_week: 100}}\n",
			i, i, i%120+1, (i+7)%120+1)
	}
	b.WriteString("approvals: {timeout: 24h, fallback_approvers: [o@x.example]}\nbackend: sim\ndirectory:\n  - {user: u@x.example, groups: [g001]}\n")
	b.WriteString("sim:\n  nodes:\n    - {name: n, count: 1, class: c001, gpus: 8}\n")
	file := filepath.Join(t.TempDir(), "many.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarnessOn(t, file)
	r := mustOK(t, h.say("u@x.example", "/gpu policy"))
	var quotas string
	for _, s := range r.Sections {
		if s.Title == "Quotas" {
			quotas = s.Text
		}
	}
	lines := strings.Split(quotas, "\n")
	if len(lines) != 151 {
		t.Fatalf("the Quotas section has %d lines, want one per team and one for any other team", len(lines))
	}
	for i := 1; i <= 150; i++ {
		a, c := i%120+1, (i+7)%120+1
		want := fmt.Sprintf("t%03d: %d c%03d GPUs and %d c%03d GPUs at once, none in 118 other classes, 100 GPU-hours/week;", i, 2, a, 4, c)
		if c < a {
			want = fmt.Sprintf("t%03d: %d c%03d GPUs and %d c%03d GPUs at once, none in 118 other classes, 100 GPU-hours/week;", i, 4, c, 2, a)
		}
		if !strings.HasPrefix(lines[i-1], want) {
			t.Errorf("team t%03d's quota line is %q, want it to start %q", i, lines[i-1], want)
		}
	}
	if want := "any other team: 1 c001 GPU at once, none in 119 other classes, 10 GPU-hours/week;"; !strings.HasPrefix(lines[150], want) {
		t.Errorf("the default quota's line is %q, want %q", lines[150], want)
	}
	if len(quotas) > 150*120 {
		t.Errorf("the Quotas section is %d characters long", len(quotas))
	}
}

// /gpu quota with no team, from someone in 12 teams, shows the first team's quota and says which
// other teams they are in and how to see theirs, instead of leaving the other 11 out unsaid.
func TestQuotaNamesTheOtherTeamsOfSomeoneInMany(t *testing.T) {
	h := newHarnessOn(t, "testdata/big.yaml")
	p := h.svc.Policy
	r := mustOK(t, h.say("u@x.example", "/gpu quota"))
	if !strings.Contains(r.Text, p.Teams[0].Name) {
		t.Fatalf("the quota is not the first team's: %q", r.Text)
	}
	all := r.Text
	for _, s := range r.Sections {
		all += "\n" + s.Title + " " + s.Text
	}
	if !strings.Contains(all, "12 teams") || !strings.Contains(all, "/gpu quota "+p.Teams[1].Name) {
		t.Errorf("the answer does not say the asker is in 12 teams, nor how to see another's quota: %q", all)
	}
	for _, tm := range p.Teams[1:12] {
		if !strings.Contains(all, tm.Name) {
			t.Errorf("the answer does not name the team %s: %q", tm.Name, all)
		}
	}
	if strings.Contains(all, p.Teams[12].Name) {
		t.Errorf("the answer names a team the asker is not in: %q", all)
	}
	// Someone in one team is not told about other teams.
	r = mustOK(t, h.say("boss@x.example", "/gpu quota"))
	if strings.Contains(r.Text, "teams") {
		t.Errorf("someone in one team is told about teams: %q", r.Text)
	}
}

// /gpu quota in a catalog of 40 classes shows the classes the team has a quota of or GPUs in, and
// counts the rest in one field, instead of 40 fields of which 36 read "0 of 0 GPUs in use".
func TestQuotaListsOnlyTheClassesATeamHasQuotaOrGPUsIn(t *testing.T) {
	h := newHarnessOn(t, "testdata/big.yaml")
	p := h.svc.Policy
	mustOK(t, h.say("boss@x.example", "/gpu request 1 "+p.Classes[0].Name+" for 2h"))
	r := mustOK(t, h.say("boss@x.example", "/gpu quota"))
	if len(r.Sections) == 0 {
		t.Fatalf("no sections: %+v", r)
	}
	var got []string
	for _, f := range r.Sections[0].Fields {
		got = append(got, f.Label+": "+f.Value)
	}
	// t01 has a quota of c01, c02, c03 and c05.
	want := []string{
		p.Classes[0].Name + ": 1 of 400 GPUs in use", p.Classes[1].Name + ": 0 of 400 GPUs in use", p.Classes[2].Name + ": 0 of 400 GPUs in use",
		p.Classes[4].Name + ": 0 of 16 GPUs in use",
		"Other classes: none in use and no quota in 36 other classes",
		"GPU-hours: 2 of 100000 used or committed, 99998 left",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the quota's fields:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
