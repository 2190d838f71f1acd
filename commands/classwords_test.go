package commands

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// renamedClasses is a policy file with classes renamed everywhere the file names them.
func renamedClasses(t *testing.T, policyFile string, oldNew ...string) string {
	t.Helper()
	b, err := os.ReadFile(policyFile)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i+1 < len(oldNew); i += 2 {
		s = strings.ReplaceAll(s, oldNew[i], oldNew[i+1])
	}
	out := filepath.Join(t.TempDir(), filepath.Base(policyFile))
	if err := os.WriteFile(out, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// A class named like a word the request grammar reads otherwise (gpus of "2 gpus", x of
// "2 x train", hours of "2 hours") is asked for by its name; where no class is named so, the
// words mean what they did; and where two such classes could both be meant, the refusal says so
// with an example that works.
func TestAClassNamedLikeAGrammarWordCanBeAskedFor(t *testing.T) {
	h := newHarnessOn(t, renamedClasses(t, noRulesPolicy, "a100-80gb", "x", "l4", "gpus"))
	for ask, want := range map[string]string{
		"/gpu request 2 gpus for 2h":          "2 × gpus",
		"/gpu request 1 x for 30m":            "1 × x",
		"/gpu request 1 GPUS 2h":              "1 × gpus",
		"/gpu request 8 gpus h100_sxm for 1h": "8 × h100_sxm",
		"/gpu request 8 x h100_sxm for 1h":    "8 × h100_sxm",
	} {
		r := mustOK(t, h.say("amy@tiny.example", ask))
		if !strings.Contains(r.Text, want) {
			t.Errorf("%s: %q, want a lease of %s", ask, r.Text, want)
		}
		h.say("amy@tiny.example", "/gpu release "+leaseIn(t, r.Text).String())
	}
	r := h.say("amy@tiny.example", "/gpu request 1 x gpus for 30m")
	if !r.Error || !strings.Contains(r.Text, `"x" and "gpus" both name a class`) {
		t.Errorf("1 x gpus with classes x and gpus: %q, want it refused as unclear", r.Text)
	}
	if ex := exampleIn(t, r); mustOK(t, h.say("amy@tiny.example", ex)).Text == "" {
		t.Errorf("the example %q", ex)
	}

	// Without such classes, "2 gpus" is two GPUs and "2 hours" two hours.
	h = newHarnessOn(t, noRulesPolicy)
	for _, tc := range []struct {
		ask   string
		gpus  int
		class string
		d     time.Duration
	}{
		{"/gpu request 2 gpus l4 for 2h", 2, "l4", 2 * time.Hour},
		{"/gpu request 1 x l4 2 hours", 1, "l4", 2 * time.Hour},
		{"/gpu request 1 l4 3 h", 1, "l4", 3 * time.Hour},
	} {
		r := mustOK(t, h.say("amy@tiny.example", tc.ask))
		l, err := h.svc.Get(context.Background(), leaseIn(t, r.Text))
		if err != nil {
			t.Fatal(err)
		}
		if l.GPUs != tc.gpus || l.Class != tc.class || l.Duration != tc.d {
			t.Errorf("%s: a lease of %d × %s for %s, want %d × %s for %s", tc.ask, l.GPUs, l.Class, l.Duration, tc.gpus, tc.class, tc.d)
		}
		h.say("amy@tiny.example", "/gpu release "+l.ID.String())
	}

	// A class named hours is that class after a number; other units are still durations.
	h = newHarnessOn(t, renamedClasses(t, noRulesPolicy, "l4", "hours"))
	r = mustOK(t, h.say("amy@tiny.example", "/gpu request 2 hours for 3h"))
	if !strings.Contains(r.Text, "2 × hours") {
		t.Errorf("2 hours with a class hours: %q", r.Text)
	}
}
