package commands

import (
	"strings"
	"testing"
)

// A job whose for= is no length (for=0h, for=0, for=xyz) is refused with an example that keeps
// every key typed, before and after it, for= too with a length that works, and the example is
// accepted typed back.
func TestAJobWithNoLengthInForKeepsEveryKeyInItsExample(t *testing.T) {
	for _, tc := range []struct{ policy, user, team, class string }{
		{"testdata/fjord.yaml", "kari@fjord.example", "ml-infra2", "bigiron"},
		{"testdata/orbit.yaml", "kim@orbit.example", "robotics", "quad"},
		{"testdata/tokyo.yaml", "haru@sakura.example", "proteomics", "jupyter"},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			h := templatesOn(t, tc.policy)
			for line, keys := range map[string][]string{
				"/gpu submit cuda-smoke for=0h":           {"for="},
				"/gpu submit cuda-smoke for=0h size=1024": {"for=", "size=1024"},
				"/gpu submit cuda-smoke for=0 class=" + tc.class + " gpus=1 team=" + tc.team + " size=1024": {"for=", "class=" + tc.class, "gpus=1", "team=" + tc.team, "size=1024"},
				"/gpu submit cuda-smoke class=" + tc.class + " size=512 for=0m data open":                   {"for=", "class=" + tc.class, "size=512", "data open"},
				"/gpu submit cuda-smoke team=" + tc.team + " for=xyz size=256":                              {"for=", "team=" + tc.team, "size=256"},
			} {
				r := h.say(tc.user, line)
				ex := exampleIn(t, r)
				for _, k := range keys {
					if !strings.Contains(ex, " "+k) {
						t.Errorf("%s: example %q; want it to keep %q", line, ex, k)
					}
				}
				if strings.Contains(ex, "for=0") || strings.Contains(ex, "for=xyz") {
					t.Errorf("%s: example %q keeps the length that is none", line, ex)
				}
				refusedWithAWorkingExample(t, h, tc.user, line, "for=")
			}
		})
	}
}
