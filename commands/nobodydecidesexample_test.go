package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestARequestNobodyCanDecideShowsOneThatNeedsNoDecision: in a team with no budget owner, under
// a policy with no fallback approvers, a request a rule sends to a budget owner is refused, as
// nobody could decide it. Its example was the request as typed (/gpu request 3 forge for 1h),
// which typed back is refused the same. The example is the request the rules let through now:
// fewer GPUs where the rule is on the quota, the team's own data class where it is on the data.
func TestARequestNobodyCanDecideShowsOneThatNeedsNoDecision(t *testing.T) {
	raw, err := os.ReadFile(himalPolicy)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.Contains(line, "fallback_approvers") {
			kept = append(kept, line)
		}
	}
	file := filepath.Join(t.TempDir(), "himal-nofallback.yaml")
	if err := os.WriteFile(file, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarnessOn(t, file)
	const nima = "nima@himal.example" // team yeti: no budget owner; 2 forge GPUs at once
	for typed, want := range map[string]string{
		"/gpu request 3 forge for 1h":               "/gpu request 2 forge for 1h",
		"/gpu request 1 sketch for 1h data patient": "/gpu request 1 sketch for 1h data open",
	} {
		r := h.say(nima, typed)
		if !r.Error || !strings.Contains(r.Text, "nobody can decide the exceptions of team yeti") {
			t.Fatalf("%s: %q; want it refused as nobody can decide it", typed, r.Text)
		}
		if !strings.HasSuffix(r.Text, "Example: "+want) {
			t.Errorf("%s: %q; want the example %q", typed, r.Text, want)
			continue
		}
		if r := h.say(nima, want); r.Error || !strings.Contains(r.Text, "is active") {
			t.Errorf("the example %s: %q; want it granted", want, r.Text)
		}
		for _, id := range []string{"L-1", "L-2"} {
			h.say(nima, "/gpu release "+id)
		}
	}
}
