package policy

import (
	"strings"
	"testing"
)

// A class refused for its name (cuaderno-l4é, told to write cuaderno-l4e) is never the name a
// later mistake is told to write instead: an exception rule naming the class as told is right once
// it is renamed, and one that names it with a typo is pointed at the name to write, not asked
// "did you mean 'cuaderno-l4é'?", the name just refused.
func TestARefusedClassNameIsNeverSuggested(t *testing.T) {
	base := "organization: X\nclasses:\n  - {name: grande, max_gpus: 1, max_duration: 1h}\n  - {name: \"cuaderno-l4é\", max_gpus: 1, max_duration: 1h}\n" +
		"default_quota: {gpus: {grande: 1, cuaderno-l4e: 1}}\nteams:\n  - {name: vision, idp_groups: [g], quota: {gpus: {QUOTA: 2}}}\n" +
		"sim: {nodes: [{name: n, count: 1, class: grande, gpus: 1}]}\nexceptions:\n  - name: r\n    when: \"WHEN\"\n"
	src := func(quota, when string) string {
		return strings.Replace(strings.Replace(base, "QUOTA", quota, 1), "WHEN", when, 1)
	}
	const refused = `class name "cuaderno-l4é" must be lower case letters a to z`
	// As told: the class's own line is the one problem.
	_, err := Load([]byte(src("cuaderno-l4e", "team.quota.gpus['cuaderno-l4e'] > 1 && class.name == 'cuaderno-l4e'")), "p.yaml")
	pe, ok := err.(*Error)
	if !ok || len(pe.Problems) != 1 || !hasProblem(pe, 4, refused) {
		t.Errorf("named as told: %v; want the class's own line alone", err)
	}
	// Mistyped: pointed at the name to write.
	_, err = Load([]byte(src("cuaderno-l4x", "team.quota.gpus['cuaderno-l4x'] > 1")), "p.yaml")
	pe, ok = err.(*Error)
	if !ok || !hasProblem(pe, 4, refused) {
		t.Fatalf("mistyped: %v; want the class refused", err)
	}
	for _, p := range pe.Problems {
		if strings.Contains(p.Msg, "did you mean 'cuaderno-l4é'") || (p.Line != 4 && strings.Contains(p.Msg, "cuaderno-l4é")) {
			t.Errorf("line %d suggests the refused name: %s", p.Line, p.Msg)
		}
	}
	for _, line := range []int{7, 11} {
		if !hasProblem(pe, line, "cuaderno-l4e'?") && !hasProblem(pe, line, `cuaderno-l4e"?`) {
			t.Errorf("mistyped: line %d does not point at cuaderno-l4e: %v", line, err)
		}
	}
}
