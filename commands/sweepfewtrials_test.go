package commands

import (
	"strings"
	"testing"
)

// A sweep of fewer trials than its default GPUs run at once, asked without gpus=, holds only the
// GPUs its trials take (trials=3 gpus_per_trial=1: 3 GPUs), not the template's default 4, one of
// which its job would never use and its team would be billed for; with trials enough to fill them
// it holds the default.
func TestASweepOfFewTrialsHoldsOnlyTheGPUsItsTrialsTake(t *testing.T) {
	for _, tc := range []struct {
		ask  string
		gpus int
	}{
		{"/gpu submit hparam-sweep trials=3 gpus_per_trial=1 class=quad", 3},
		{"/gpu submit hparam-sweep trials=1 gpus_per_trial=2 class=quad", 2},
		{"/gpu submit hparam-sweep trials=16 gpus_per_trial=1 class=quad", 4},
	} {
		h := templatesOn(t, orbitPolicy)
		r := mustOK(t, h.say("kim@orbit.example", tc.ask))
		id := leaseIn(t, r.Text[strings.Index(r.Text, "lease "):])
		if l := h.lease(id); l.GPUs != tc.gpus {
			t.Errorf("%s: the lease holds %d GPUs, want %d", tc.ask, l.GPUs, tc.gpus)
		}
	}
}
