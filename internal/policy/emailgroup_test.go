package policy

import (
	"strings"
	"testing"
)

const brackwater = `organization: Brackwater Lab
currency: EUR
classes:
  - name: tidal
    sku: L40S
    max_gpus: 2
    max_duration: 8h
teams:
  - name: estuary
    idp_groups: [g-estuary]
    budget_owners: [estuary-leads@brackwater.example]
  - name: harbour
    idp_groups: [harbour-staff@brackwater.example]
    budget_owners: [ines@brackwater.example]
  - name: platform
    idp_groups: [platform@brackwater.example]
exceptions:
  - name: long
    when: request.duration > class.max_duration
    why: Longer than the class allows
approvals:
  fallback_approvers: [platform@brackwater.example]
backend: sim
directory:
  - {user: ines@brackwater.example, groups: [g-estuary, estuary-leads@brackwater.example, harbour-staff@brackwater.example]}
  - {user: olu@brackwater.example, groups: [platform@brackwater.example]}
sim:
  nodes:
    - {name: t, count: 1, class: tidal, gpus: 2}
`

// TestPolicyCheckWarnsOfAGroupWrittenAsAnEmail: an approver entry with an @ is taken for a person,
// so a group named like an email (a Google Workspace group through a broker) used as a budget
// owner or fallback approver never reaches its members: where the policy shows it is a group (a
// directory entry is in it, or it is a team's idp_groups), policy check warns at its line, in one
// sentence, that it is taken for a person and what to write instead. Without a directory (single
// sign-on) a team's idp_groups still shows it. A person's email draws nothing.
func TestPolicyCheckWarnsOfAGroupWrittenAsAnEmail(t *testing.T) {
	for _, c := range []struct {
		name string
		src  string
		want map[string]string // the line's text -> what its warning says
	}{
		{"directory", brackwater, map[string]string{
			"budget_owners: [estuary-leads@brackwater.example]": "team estuary's budget owner estuary-leads@brackwater.example is a group (a directory entry is in it), but an approver written with @ is taken for a person, so approval requests go to that address and never to the group's members; name its members by email instead (ines@brackwater.example)",
			"fallback_approvers: [platform@brackwater.example]": "fallback approver platform@brackwater.example is a group (a directory entry is in it), but an approver written with @ is taken for a person, so approval requests go to that address and never to the group's members; name its members by email instead (olu@brackwater.example)",
		}},
		{"single sign-on", strings.Split(brackwater, "directory:\n")[0] + "sim:\n  nodes:\n    - {name: t, count: 1, class: tidal, gpus: 2}\n", map[string]string{
			"fallback_approvers: [platform@brackwater.example]": "fallback approver platform@brackwater.example is a group (team platform's idp_groups), but an approver written with @ is taken for a person",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Load([]byte(c.src), "b.yaml")
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(c.src, "\n")
			found := map[string]bool{}
			for _, w := range p.Warnings {
				if !strings.Contains(w.Msg, "taken for a person") {
					continue
				}
				line := strings.TrimSpace(lines[w.Line-1])
				want, ok := c.want[line]
				if !ok || !strings.HasPrefix(w.Msg, want) || strings.Count(w.Msg, ";") > 1 {
					t.Errorf("warning at line %d (%s): %q", w.Line, line, w.Msg)
					continue
				}
				found[line] = true
			}
			for line := range c.want {
				if !found[line] {
					t.Errorf("no warning at %q in %v", line, p.Warnings)
				}
			}
		})
	}
}
