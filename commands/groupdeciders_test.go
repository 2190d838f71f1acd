package commands

import (
	"strings"
	"testing"
)

// kelpLeads is harbor.yaml where team kelp's budget owner is the group kelp-leads, of members.
// The requester mere is one of them when members names her.
func kelpLeads(t *testing.T, members ...string) string {
	t.Helper()
	var dir strings.Builder
	edits := []string{"budget_owners: [tane@harbor.example]", "budget_owners: [kelp-leads]"}
	for _, m := range members {
		if m == "mere@harbor.example" {
			edits = append(edits, "{user: mere@harbor.example, groups: [hr-kelp]}", "{user: mere@harbor.example, groups: [hr-kelp, kelp-leads]}")
			continue
		}
		dir.WriteString("  - {user: " + m + ", groups: [kelp-leads]}\n")
	}
	return policyVariant(t, "testdata/harbor.yaml", append(edits, "directory:\n", "directory:\n"+dir.String())...)
}

// When a team's budget owner is a group, whoever waits on it reads who is in it (the members
// the directory knows, a few of them and how many more), not the group's name alone.
func TestAGroupThatDecidesIsNamedWithItsMembers(t *testing.T) {
	const mere = "mere@harbor.example"
	for _, tc := range []struct {
		name    string
		members []string
		want    string
	}{
		{"two members", []string{"rangi@harbor.example", "aroha@harbor.example"},
			"the group kelp-leads (aroha@harbor.example, rangi@harbor.example) will decide"},
		{"five members", []string{"rangi@harbor.example", "aroha@harbor.example", "hemi@harbor.example", "nikau@harbor.example", "wai@harbor.example"},
			"the group kelp-leads (aroha@harbor.example, hemi@harbor.example, nikau@harbor.example and 2 more) will decide"},
		{"the requester among them", []string{"rangi@harbor.example", mere},
			"the group kelp-leads (rangi@harbor.example) will decide"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarnessOn(t, kelpLeads(t, tc.members...))
			r := mustOK(t, h.say(mere, "/gpu request 3 bench for 2h"))
			if !strings.Contains(r.Text, "so "+tc.want) {
				t.Errorf("the request waiting on kelp-leads says %q; want %q", r.Text, "so "+tc.want)
			}
			q := mustOK(t, h.say(mere, "/gpu quota request +1 bench for 1w because a survey"))
			if !strings.Contains(q.Text, tc.want) {
				t.Errorf("the quota request says %q; want %q", q.Text, tc.want)
			}
		})
	}
	// A group the directory knows no member of is named as it is, and then the fallback
	// approvers, to whom the request went since nobody of the group could be told.
	h := newHarnessOn(t, policyVariant(t, "testdata/harbor.yaml", "budget_owners: [tane@harbor.example]", "budget_owners: [kelp-leads]"))
	if r := mustOK(t, h.say(mere, "/gpu request 3 bench for 2h")); !strings.Contains(r.Text, "so kelp-leads or harbor-ops@harbor.example will decide") {
		t.Errorf("a request waiting on a group of unknown members says %q", r.Text)
	}
}

// An extension that waits on a group names the group with its members wherever it is said to
// wait (a second extension refused meanwhile, the lease's status), as the request's own answer does.
func TestAWaitingExtensionNamesTheGroupWithItsMembers(t *testing.T) {
	const mere = "mere@harbor.example"
	h := newHarnessOn(t, kelpLeads(t, "rangi@harbor.example", "aroha@harbor.example", mere))
	id := leaseIn(t, mustOK(t, h.say(mere, "/gpu request 1 bench for 9h")).Text).String()
	const want = "the group kelp-leads (aroha@harbor.example, rangi@harbor.example)"
	ask := mustOK(t, h.say(mere, "/gpu extend "+id+" 2h"))
	if !strings.Contains(ask.Text, want) {
		t.Fatalf("the extension's own answer says %q; want %q", ask.Text, want)
	}
	again := h.say(mere, "/gpu extend "+id+" 1h")
	st := h.say(mere, "/gpu status "+id)
	for what, text := range map[string]string{"a second extension while one waits": again.Text, "status while the extension waits": st.Text} {
		// One sentence: the extension, then who decides it, with no two brackets in a row.
		if !strings.Contains(text, "is already waiting for approval by "+want+",") && !strings.Contains(text, "is already waiting for approval by "+want+";") {
			t.Errorf("%s says %q; want it to name %q", what, text, want)
		}
		if strings.Contains(text, ") (") {
			t.Errorf("%s says %q, with two brackets in a row", what, text)
		}
	}
}
