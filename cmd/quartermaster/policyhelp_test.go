package main

import (
	"strings"
	"testing"
)

// The --policy flag's help says true: serve, discord register and policy check need a policy, and every other
// command that takes it falls back to the embedded example policy without one, and its help says
// so (report's did not).
func TestPolicyFlagHelpNamesEveryCommandUsingTheExample(t *testing.T) {
	t.Parallel()
	for name, sc := range subcommands {
		if sc.flags == nil {
			continue
		}
		f := sc.flags().Lookup("policy")
		if f == nil {
			continue
		}
		if name == "serve" || name == "discord" || name == "policy" {
			if !strings.Contains(f.Usage, "need one") || !strings.Contains(f.Usage, name) {
				t.Errorf("%s needs a policy, but its --policy help does not say so: %q", name, f.Usage)
			}
			continue
		}
		// Its own help ("default: the embedded example"), or the shared one naming it.
		own := strings.Contains(f.Usage, "default: the embedded example")
		if !own && (!strings.Contains(f.Usage, name) || !strings.Contains(f.Usage, "embedded example")) {
			t.Errorf("%s falls back to the embedded example policy, but its --policy help does not say so: %q", name, f.Usage)
		}
	}
	stdout, _, _ := runCLI("report", "--help")
	if !strings.Contains(stdout, "report refuses a database written under another policy") {
		t.Errorf("report --help does not say that report, on the example, refuses another policy's database:\n%s", stdout)
	}
}
