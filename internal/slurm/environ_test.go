package slurm

import (
	"slices"
	"strings"
	"testing"
)

// TestEnviron: Slurm commands, and the jobs they submit, get a few basics of the service's
// environment and the configured extras, never its secrets.
func TestEnviron(t *testing.T) {
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-secret")
	t.Setenv("QM_DATABASE_URL", "postgres://u:secret@db/qm")
	t.Setenv("PATH", "/usr/bin:/bin")
	b := &Backend{cfg: Config{Env: []string{"SLURM_CONF=/etc/slurm/test.conf"}}}
	env := b.environ()
	if !slices.Contains(env, "PATH=/usr/bin:/bin") || !slices.Contains(env, "SLURM_CONF=/etc/slurm/test.conf") {
		t.Errorf("environment %v lacks PATH or SLURM_CONF", env)
	}
	for _, kv := range env {
		if strings.Contains(kv, "secret") {
			t.Errorf("environment passes %s", kv)
		}
	}
}

func TestParseKeyValues(t *testing.T) {
	kv := parseKeyValues("JobId=275 JobName=qm-l-999-x JobState=CANCELLED Reason=None AllocNode:Sid=localhost:18022 CPUs/Task=1 NodeList=vm Comment=qm:L-999 two words TRES=cpu=1,node=1\n")
	want := map[string]string{"JobId": "275", "JobState": "CANCELLED", "Reason": "None", "NodeList": "vm",
		"Comment": "qm:L-999 two words", "TRES": "cpu=1,node=1", "AllocNode:Sid": "localhost:18022", "CPUs/Task": "1"}
	for k, v := range want {
		if kv[k] != v {
			t.Errorf("%s = %q, want %q", k, kv[k], v)
		}
	}
}

func TestFirstHost(t *testing.T) {
	for in, want := range map[string]string{"vm": "vm", "gpu01,gpu02": "gpu01", "gpu[01-02]": "gpu01", "gpu[03,05-07]": "gpu03", "": ""} {
		if got := firstHost(in); got != want {
			t.Errorf("firstHost(%q) = %q, want %q", in, got, want)
		}
	}
}
