package policy

import (
	"os"
	"strings"
	"testing"
)

// stJohnsWith is the St. John's lab's policy (commands/testdata/stjohns.yaml) with each old text
// (in pairs: old, new; each old must be there) replaced once, loaded as p.yaml; it fails the test
// unless the policy is refused, and returns its problems.
func stJohnsWith(t *testing.T, pairs ...string) *Error {
	t.Helper()
	b, err := os.ReadFile("../../commands/testdata/stjohns.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(src, pairs[i]) {
			t.Fatalf("the policy has no %q", pairs[i])
		}
		src = strings.Replace(src, pairs[i], pairs[i+1], 1)
	}
	_, err = Load([]byte(src), "p.yaml")
	pe, ok := err.(*Error)
	if !ok {
		t.Fatalf("%q: want a refusal, got %v", pairs, err)
	}
	return pe
}

// wantOnly fails the test unless the problems are those given (line, then message), no more.
func wantOnly(t *testing.T, pe *Error, want ...any) {
	t.Helper()
	for i := 0; i+1 < len(want); i += 2 {
		wantProblem(t, pe, want[i].(int), want[i+1].(string))
	}
	if len(pe.Problems) != len(want)/2 {
		t.Errorf("want %d problems, got %d:\n%v", len(want)/2, len(pe.Problems), pe)
	}
}

// TestAValueOfTheWrongKindDoesNotHideTheFilesOtherMistakes: a file with a max_gpus of two, a
// negative idle_grace and a price written as a word, a timezone mistyped, a team's channel
// without # and a quota naming a class mistyped named only the three values of the wrong kind;
// each of the others came to light once those were put right. Every mistake is named at once,
// and none that follows only from a value of the wrong kind (max_gpus must be at least 1).
func TestAValueOfTheWrongKindDoesNotHideTheFilesOtherMistakes(t *testing.T) {
	pe := stJohnsWith(t,
		"timezone: America/St_Johns", "timezone: America/St_John",
		"price_per_gpu_hour: 125", `price_per_gpu_hour: "ten"`,
		"max_gpus: 4", "max_gpus: two",
		"idle_grace: 15m", "idle_grace: -5m",
		`channel: "#zoë"`, `channel: "zoë"`,
		"mi300x: 1}", "mi300y: 1}")
	wantOnly(t, pe,
		6, `timezone "America/St_John" is unknown; did you mean America/St_Johns? e.g. timezone: America/St_Johns`,
		12, `class l40s: price_per_gpu_hour must be a number, not "ten"; e.g. price_per_gpu_hour: 2.50`,
		25, `class h200-sxm: max_gpus must be a whole number, not "two"; e.g. max_gpus: 2`,
		38, `class mi300x: idle_grace "-5m" is not a duration; e.g. idle_grace: 10m`,
		50, `team zoe-lab: channel "zoë" must start with #; e.g. channel: "#zoe-lab-gpu"`,
		51, `team zoe-lab: quota names class "mi300y", which is not in the catalog; did you mean 'mi300x'?`)

	// A value of the wrong kind in a section of the policy itself, a class's mapping, a team's
	// list and an exception rule's when: each is named with the file's other mistake, alone.
	for _, c := range []struct {
		old, new string
		line     int
		msg      string
	}{
		{"  timeout: 12h", "  timeout: soon", 70, `approvals.timeout "soon" is not a duration; e.g. timeout: 24h`},
		{"    max_duration: 6h", "    max_duration: [6h]", 15, `class l40s: max_duration must be a duration, not a list; e.g. max_duration: 8h`},
		{"    idp_groups: [søk]", "    idp_groups: {søk: 1}", 42, `team sok-analyse: idp_groups must be a list, not a map; e.g. idp_groups: [ai-vision]`},
		{"    when: request.gpus > class.max_gpus", "    when: [request.gpus]", 55, `exception rule margar: when must be text, not a list; e.g. when: request.gpus > class.max_gpus`},
		{"organization: Rannsóknastofa Nýfundnalands", "organization: [Rannsóknastofa]", 4, `organization must be text, not a list; e.g. organization: Acme AI`},
	} {
		pe := stJohnsWith(t, c.old, c.new, `channel: "#zoë"`, `channel: "zoë"`)
		wantOnly(t, pe, c.line, c.msg,
			50, `team zoe-lab: channel "zoë" must start with #; e.g. channel: "#zoe-lab-gpu"`)
	}
}

// TestAMisspelledSectionDoesNotHideTheFilesOtherMistakes: clases: for classes was the one problem
// named. It is named with did you mean classes?, and the rest of the file is checked where it
// does not depend on the classes: a mistyped timezone and a team's channel without # are named,
// but not "no classes", nor each quota, node group and rule that names a class as naming none.
func TestAMisspelledSectionDoesNotHideTheFilesOtherMistakes(t *testing.T) {
	for _, c := range []struct{ old, new, msg string }{
		{"classes:\n", "clases:\n", "the policy has no key clases; did you mean classes?"},
		{"classes:\n", "Classes:\n", "the policy has no key Classes; did you mean classes?"},
	} {
		pe := stJohnsWith(t, c.old, c.new,
			"timezone: America/St_Johns", "timezone: America/St_John",
			`channel: "#zoë"`, `channel: "zoë"`,
			"when: request.gpus > class.max_gpus", "when: request.gpus > team.quota.gpus['l40s']")
		wantOnly(t, pe,
			6, `timezone "America/St_John" is unknown; did you mean America/St_Johns? e.g. timezone: America/St_Johns`,
			7, c.msg,
			50, `team zoe-lab: channel "zoë" must start with #; e.g. channel: "#zoe-lab-gpu"`)
	}

	// classes: written as something other than a list is named as such, with the same others.
	pe := stJohnsWith(t, "classes:\n", "classes: l40s\nold_classes:\n",
		"timezone: America/St_Johns", "timezone: America/St_John")
	for _, p := range pe.Problems {
		if strings.Contains(p.Msg, "catalog") || strings.Contains(p.Msg, "has no class") {
			t.Errorf("a problem that follows from classes: l40s: %s", p)
		}
	}
	wantProblem(t, pe, 6, `timezone "America/St_John" is unknown; did you mean America/St_Johns? e.g. timezone: America/St_Johns`)
	wantProblem(t, pe, 7, `classes must be a list, not "l40s"; e.g. classes: [{name: notebook, max_gpus: 1, max_duration: 8h}]`)

	// A misspelled organisation: is not also "organization is missing".
	pe = stJohnsWith(t, "organization:", "organisation:", `channel: "#zoë"`, `channel: "zoë"`)
	wantOnly(t, pe,
		4, "the policy has no key organisation; did you mean organization?",
		50, `team zoe-lab: channel "zoë" must start with #; e.g. channel: "#zoe-lab-gpu"`)
}

// TestAKeyMisspelledBesideTheKeyItselfHidesNothingOfIt: a class that writes max_gpus: 0 and, below
// it, Max_GPUs: 8 has both named: the key meant is there, so what is wrong with it is no
// follow-on of the misspelling.
func TestAKeyMisspelledBesideTheKeyItselfHidesNothingOfIt(t *testing.T) {
	pe := stJohnsWith(t, "    max_gpus: 4\n", "    max_gpus: 0\n    Max_GPUs: 8\n")
	wantOnly(t, pe,
		25, "class h200-sxm: max_gpus must be at least 1, not 0; e.g. max_gpus: 1",
		26, "class h200-sxm has no key Max_GPUs; did you mean max_gpus?")
}
