package commands

import (
	"strings"
	"testing"
)

// A refusal that lists what is known agrees with how many there are: a template with one
// parameter says "size is known", not "size are known"; one with several, "… are known".
func TestAnUnknownParameterListAgreesWithItsCount(t *testing.T) {
	h := tokyoHarness(t)
	for ask, want := range map[string]string{
		"/gpu submit cuda-smoke sise=4": "; size is known.",
		"/gpu submit jax foo=1":         "; nnodes, script and mem_percent are known.",
	} {
		if r := h.say(haru, ask); !r.Error || !strings.Contains(r.Text, want) {
			t.Errorf("%s: %q; want it to say %q", ask, r.Text, want)
		}
	}
}
