package commands

import (
	"strings"
	"testing"
)

// A budget owner of three teams who is a member of none asks /gpu quota: they read each team they
// own, its GPUs in use of its quota and its GPU-hours, not a team named after their directory
// group; /gpu quota TEAM still shows one team in full.
func TestQuotaOfABudgetOwnerInNoTeamShowsTheTeamsTheyOwn(t *testing.T) {
	h := newHarnessOn(t, ploverPolicy)
	const ines = "ines@plover.example"
	mustOK(t, h.say("rita@plover.example", "/gpu request 1 wren for 2h"))

	r := mustOK(t, h.say(ines, "/gpu quota"))
	all := r.Text
	for _, s := range r.Sections {
		all += "\n" + s.Title + "\n" + s.Text
		for _, f := range s.Fields {
			all += "\n" + f.Label + ": " + f.Value
		}
	}
	if strings.Contains(all, "g-owners") {
		t.Errorf("/gpu quota of an owner in no team names their group:\n%s", all)
	}
	for _, want := range []string{
		"budget owner of 3 teams",
		"tides: osprey 0 of 16, wren 0 of 4 GPUs in use; 0 GPU-hours this week, no weekly limit",
		"dunes: osprey 0 of 4, wren 1 of 2 GPUs in use; 2 GPU-hours this week, no weekly limit",
		"reefs: osprey 0 of 2, wren 0 of 1 GPUs in use",
		"/gpu quota tides",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("/gpu quota of an owner in no team does not say %q:\n%s", want, all)
		}
	}
	one := mustOK(t, h.say(ines, "/gpu quota dunes"))
	if !strings.HasPrefix(one.Text, "Team dunes this week") {
		t.Errorf("/gpu quota dunes answered %q", one.Text)
	}
	// A member of a team sees their team's quota, as before.
	if r := mustOK(t, h.say("joao@plover.example", "/gpu quota")); !strings.HasPrefix(r.Text, "Team tides this week") {
		t.Errorf("a member's /gpu quota answered %q", r.Text)
	}
}
