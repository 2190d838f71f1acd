package main

import (
	"strings"
	"testing"
	"time"
)

// A service URL or a fake machine set in the environment (the systemd unit's agent.env, the
// DaemonSet's env) and refused is named as the variable it came from, with an example of that
// variable, since the command line the operator looks at has no --service or --fake; the example
// is the command as typed with that variable set in front, and works.
func TestARefusedValueFromTheEnvironmentNamesTheVariable(t *testing.T) {
	needFake(t)
	for _, c := range []struct {
		env, value, want, example string
		args                      []string
	}{
		{"QM_SERVICE_URL", "qm.example.com", `QM_SERVICE_URL "qm.example.com" is not an http:// or https:// URL`, "QM_SERVICE_URL=https://qm.example.com",
			[]string{"run", "--fake", "dgxa100", "--listen", "127.0.0.1:0"}},
		{"QM_AGENT_FAKE", "dgx1", `QM_AGENT_FAKE names no fake machine: there is no fake "dgx1"`, "QM_AGENT_FAKE=dgxa100",
			[]string{"metrics"}},
	} {
		t.Run(c.env, func(t *testing.T) {
			t.Setenv("QM_AGENT_TOKEN", "qma_x")
			t.Setenv(c.env, c.value)
			code, stderr := runWithin(c.args, 2*time.Second)
			first, _, _ := strings.Cut(stderr, "\n")
			if code != 2 || !strings.HasPrefix(first, "quartermaster-agent: "+c.want) || !strings.HasSuffix(first, "e.g. "+c.example+" "+commandLine(c.args[0], c.args[1:])) {
				t.Fatalf("%s=%s: exit %d, first line %q; want %q ending in e.g. %s and the command as typed", c.env, c.value, code, first, c.want, c.example)
			}
			name, value, _ := strings.Cut(c.example, "=")
			t.Setenv(name, value)
			if code, stderr := runWithin(c.args, time.Second); code != 0 {
				t.Errorf("with %s: exit %d, %q", c.example, code, stderr)
			}
		})
	}
}
