package commands

import (
	"strings"
	"testing"
)

// A refused estimate's example is the estimate typed with only what was wrong put right: a quote
// not closed left out, a class the policy lacks replaced, a duration that is none given one. The
// GPUs and the length typed stay where an estimate of the class takes them, though a request of
// them would need a decision (more than the class's max_gpus, longer than its max_duration): an
// estimate only prices them. Typed back, the example is answered with the GPUs and length typed.
func TestARefusedEstimatesExampleKeepsTheGPUsAndLengthTyped(t *testing.T) {
	for _, tc := range []struct {
		policy, user, ask, want string
	}{
		// a100-80gb: 1 GPU and 30m at most without a decision; the cluster has 4
		{noRulesPolicy, "amy@tiny.example", `/gpu estimate 2 "a100-80gb 1h`, "/gpu estimate 2 a100-80gb 1h"},
		{noRulesPolicy, "amy@tiny.example", `/gpu estimate 3 'a100-80gb for 90m`, "/gpu estimate 3 a100-80gb 1h30m"},
		{noRulesPolicy, "amy@tiny.example", `/gpu estimate 2 a100-80gb "1h`, "/gpu estimate 2 a100-80gb 1h"},
		{noRulesPolicy, "amy@tiny.example", `/gpu estimate 2 a100-80gb soon`, "/gpu estimate 2 a100-80gb 30m"},
		{noRulesPolicy, "amy@tiny.example", `/gpu estimate 3 nosuch 2h`, "/gpu estimate 3 a100-80gb 2h"},
		// interactive: 1 GPU and 8h at most without a decision; the cluster has 16
		{"../docs/quartermaster.example.yaml", "alice@acme.example", `/gpu estimate 2 "interactive 10h`, "/gpu estimate 2 interactive 10h"},
		{"../docs/quartermaster.example.yaml", "alice@acme.example", `/gpu estimate 2 interactive soon`, "/gpu estimate 2 interactive 4h"},
		{"../docs/quartermaster.example.yaml", "alice@acme.example", `/gpu estimate 3 a100-80gb 10h`, "/gpu estimate 3 interactive 10h"},
		// dev: 2 GPUs and 6h at most without a decision; the cluster has 8
		{otherPolicy, "rita@borealis.example", `/gpu estimate 3 "dev 9h`, "/gpu estimate 3 dev 9h"},
		{otherPolicy, "rita@borealis.example", `/gpu estimate 3 dev' 9h`, "/gpu estimate 3 dev 9h"},
		{otherPolicy, "rita@borealis.example", `/gpu estimate 3 dev for a while`, "/gpu estimate 3 dev 4h"},
		{otherPolicy, "rita@borealis.example", `/gpu estimate 3 interactive 9h`, "/gpu estimate 3 dev 9h"},
	} {
		t.Run(tc.policy+" "+tc.ask, func(t *testing.T) {
			h := templatesOn(t, tc.policy)
			r := h.say(tc.user, tc.ask)
			if got := exampleIn(t, r); got != tc.want {
				t.Fatalf("%s:\n got example %q (%s)\nwant %q", tc.ask, got, r.Text, tc.want)
			}
			again := h.say(tc.user, tc.want)
			if again.Error {
				t.Fatalf("the example %s is refused: %s", tc.want, again.Text)
			}
			f := strings.Fields(tc.want) // /gpu estimate N CLASS D
			if asked := f[2] + " × " + f[3] + " for " + f[4] + ":"; !strings.HasPrefix(again.Text, asked) {
				t.Errorf("the example %s is answered %q; want it to price %s", tc.want, again.Text, asked)
			}
		})
	}
}
