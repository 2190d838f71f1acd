package main

import (
	"strings"
	"testing"
)

// serve refused for a word or a flag it does not take gets an example that serve would not refuse
// in turn: without a policy (--policy or QM_POLICY) nor --demo, it names the policy where
// docs/operations.md installs it, as serve's refusal of no policy does; with --demo and a policy,
// it drops the policy typed.
func TestServesExampleGivesAPolicyOrTheDemo(t *testing.T) {
	clearEnv(t)
	t.Setenv("QM_POLICY", "")
	installed := installedPolicyPath(t)
	for _, c := range []struct {
		env  string
		args []string
		eg   string
	}{
		{"", []string{"extra"}, "e.g. quartermaster serve --policy " + installed},
		{"", []string{"--http", ":9090", "extra"}, "e.g. quartermaster serve --http :9090 --policy " + installed},
		{"", []string{"--htp", ":9090"}, "e.g. quartermaster serve --http :9090 --policy " + installed},
		{"", []string{"--demo", "extra"}, "e.g. quartermaster serve --demo"},
		{"", []string{"--policy", "/srv/site.yaml", "extra"}, "e.g. quartermaster serve --policy /srv/site.yaml"},
		{"", []string{"--demo", "--policy", "/srv/site.yaml", "extra"}, "e.g. quartermaster serve --demo"},
		{"/srv/site.yaml", []string{"extra"}, "e.g. quartermaster serve"},
	} {
		t.Setenv("QM_POLICY", c.env)
		code, _, stderr := runQM(append([]string{"serve"}, c.args...)...)
		if msg := strings.TrimSpace(stderr); code != 2 || strings.Contains(msg, "\n") || !strings.HasSuffix(msg, c.eg) {
			t.Errorf("serve %v (QM_POLICY=%q): exit %d, %q; want one sentence ending %q", c.args, c.env, code, msg, c.eg)
		}
	}
}
