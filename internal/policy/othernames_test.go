package policy

import (
	"strings"
	"testing"
)

// otherPolicy is a policy that shares no name with the example: other teams, classes, groups,
// data classes, currency and time zone.
const otherPolicy = `organization: Kita Bio Labs
currency: JPY
timezone: Asia/Tokyo
classes:
  - name: a10-notebook
    sku: A10G
    price_per_gpu_hour: 135
    max_gpus: 2
    max_duration: 6h
default_quota: {gpus: {a10-notebook: 1}, gpu_hours_per_week: 10}
teams:
  - name: genomics-2
    idp_groups: [grp-genomics]
    budget_owners: [hana@kita.example]
    data_classes: [open, phi-restricted]
exceptions:
  - name: too-many
    when: request.gpus > class.max_gpus
  - name: too-long
    when: request.duration > class.max_duration
  - name: external-staff
    when: "'externals' in user.groups"
directory:
  - {user: hana@kita.example, groups: [grp-genomics]}
sim:
  nodes:
    - {name: a10g, count: 1, class: a10-notebook, gpus: 4}
`

func refusedOther(t *testing.T, old, new string) *Error {
	t.Helper()
	if !strings.Contains(otherPolicy, old) {
		t.Fatalf("the policy has no %q", old)
	}
	_, err := Load([]byte(strings.Replace(otherPolicy, old, new, 1)), "p.yaml")
	pe, ok := err.(*Error)
	if !ok {
		t.Fatalf("%q: want a refusal, got %v", new, err)
	}
	return pe
}

// TestRefusalExamplesNameThisPolicysThings: a refusal's example is written in the policy's own
// terms. A data class that is not one word was refused with "as a request names it (data
// internal)", and a rule over the cost limit with "e.g. 'contractors' in user.groups", naming a
// data class and a group that a policy with other names does not have.
func TestRefusalExamplesNameThisPolicysThings(t *testing.T) {
	pe := refusedOther(t, "data_classes: [open, phi-restricted]", "data_classes: [open, PHI Restricted]")
	wantProblem(t, pe, 15, `team genomics-2: data class "PHI Restricted" must be one word of the letters a to z, digits, -, _ or . (40 at most), as a request names it (data phi-restricted); write "phi-restricted"`)
	pe = refusedOther(t, "data_classes: [open, phi-restricted]", "data_classes: [\"★ ★\", open]")
	wantProblem(t, pe, 15, `team genomics-2: data class "★ ★" must be one word of the letters a to z, digits, -, _ or . (40 at most), as a request names it (data open)`)
	pe = refusedOther(t, "data_classes: [open, phi-restricted]", "data_classes: [\"★ ★\"]")
	wantProblem(t, pe, 15, `team genomics-2: data class "★ ★" must be one word of the letters a to z, digits, -, _ or . (40 at most), as a request names it (data public)`)

	pe = refusedOther(t, `"'externals' in user.groups"`, `"user.groups.exists(g, user.groups.exists(h, g == h))"`)
	if len(pe.Problems) != 1 || !strings.HasSuffix(pe.Problems[0].Msg, "write it with fewer nested exists/all/map/filter over lists, e.g. 'grp-genomics' in user.groups") {
		t.Errorf("want the cost limit's example to name a group of this policy; got:\n%v", pe)
	}
}

// A quota that names a class the catalog lacks is refused with the class meant, as a rule's
// misspelled class is, or else with the catalog's classes.
func TestAQuotasUnknownClassNamesTheClassMeant(t *testing.T) {
	pe := refusedOther(t, "{gpus: {a10-notebook: 1}", "{gpus: {a10-notebok: 1}")
	wantProblem(t, pe, 10, `default_quota: names class "a10-notebok", which is not in the catalog; did you mean 'a10-notebook'?`)
	pe = refusedOther(t, "{gpus: {a10-notebook: 1}", "{gpus: {h100: 1}")
	wantProblem(t, pe, 10, `default_quota: names class "h100", which is not in the catalog; its classes are a10-notebook`)
}

// A sim node group whose class the catalog lacks is refused with the class meant, as a quota's
// is, or else with the catalog's classes.
func TestASimNodeGroupsUnknownClassNamesTheClassMeant(t *testing.T) {
	pe := refusedOther(t, "class: a10-notebook, gpus: 4", "class: a10notebook, gpus: 4")
	wantProblem(t, pe, 27, `sim node group a10g: class "a10notebook" is not in the catalog; did you mean 'a10-notebook'?`)
	pe = refusedOther(t, "class: a10-notebook, gpus: 4", "class: h100, gpus: 4")
	wantProblem(t, pe, 27, `sim node group a10g: class "h100" is not in the catalog; its classes are a10-notebook`)
}

// An approver nobody in the directory is, or is in, is warned of with the person or group meant
// when one is a letter or two away.
func TestAMisspelledApproverIsWarnedOfWithTheOneMeant(t *testing.T) {
	for _, c := range []struct{ owners, want string }{
		{"[hana@kita.exmple]", "team genomics-2's budget owner hana@kita.exmple is not in the directory, so without single sign-on nobody can decide as them; add an entry for them or fix the name; did you mean hana@kita.example?"},
		{"[grp-genomic]", "team genomics-2's budget owner grp-genomic is a group no directory entry is in, so without single sign-on nobody can decide as its members and no approval notice reaches them; add it to their entries' groups or fix the name; did you mean grp-genomics?"},
		{"[finance]", "team genomics-2's budget owner finance is a group no directory entry is in, so without single sign-on nobody can decide as its members and no approval notice reaches them; add it to their entries' groups or fix the name"},
	} {
		p, err := Load([]byte(strings.Replace(otherPolicy, "budget_owners: [hana@kita.example]", "budget_owners: "+c.owners, 1)), "p.yaml")
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, w := range p.Warnings {
			found = found || w.Msg == c.want && w.Line == 14
		}
		if !found {
			t.Errorf("budget_owners: %s: want at line 14 %q, got %v", c.owners, c.want, p.Warnings)
		}
	}
}

// A rule written as other languages write it (one =, and/or, a bare 12h, an operator with
// nothing after it) is refused at its line with how CEL writes it.
func TestARuleInAnotherLanguagesSyntaxSaysHowCELWritesIt(t *testing.T) {
	for when, want := range map[string]string{
		`"request.gpus = 4"`:                         "; CEL compares with ==, e.g. request.gpus == 4",
		`"request.gpus > 4 and request.reservation"`: "; CEL writes and as &&, e.g. request.gpus > 4 && request.reservation",
		`"request.gpus > 4 or request.reservation"`:  "; CEL writes or as ||, e.g. request.gpus > 4 || request.reservation",
		`"request.duration > 8h"`:                    "; a duration is written duration('8h'), e.g. request.duration > duration('8h')",
		`"request.duration > 2d"`:                    "; a duration is written duration('48h'), e.g. request.duration > duration('48h')",
		`"request.gpus > 4 &&"`:                      "; the rule ends too soon: write what its last operator compares or joins",
	} {
		pe := refusedOther(t, `"'externals' in user.groups"`, when)
		if len(pe.Problems) != 1 || pe.Problems[0].Line != 22 || !strings.HasSuffix(pe.Problems[0].Msg, want) {
			t.Errorf("when: %s: want at line 22 a problem ending %q, got:\n%v", when, want, pe)
		}
	}
}

// A policy whose teams list the data classes they are cleared for, with no rule that reads
// them, is warned of once: a request for another data class is granted without approval.
func TestTeamDataClassesNoRuleReadsAreWarnedOf(t *testing.T) {
	p, err := Load([]byte(otherPolicy), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := "no exception rule reads team.data_classes, so a request of team genomics-2 for a data class it is not cleared for (not open or phi-restricted) is granted without approval; add a rule with when: !(request.data_class in team.data_classes)"
	n := 0
	for _, w := range p.Warnings {
		if strings.Contains(w.Msg, "team.data_classes") {
			n++
			if w.Msg != want || w.Line != 15 {
				t.Errorf("warning at line %d: %q, want at line 15 %q", w.Line, w.Msg, want)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d data class warnings, want 1: %v", n, p.Warnings)
	}
	p, err = Load([]byte(strings.Replace(otherPolicy, `"'externals' in user.groups"`, `"!(request.data_class in team.data_classes)"`, 1)), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range p.Warnings {
		if strings.Contains(w.Msg, "team.data_classes") {
			t.Errorf("a rule reads them, yet: %v", w)
		}
	}
}
