package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/templates"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// slurmRefusing is the bot on a stubbed Slurm whose sbatch refuses every job: the partition is
// unknown to it.
func slurmRefusing(t *testing.T) *harness {
	t.Helper()
	text, err := os.ReadFile("testdata/orbit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "orbit.yaml")
	text = []byte(strings.ReplaceAll(string(text), "/data/robotics", filepath.Join(dir, "robotics")))
	if err := os.MkdirAll(filepath.Join(dir, "robotics"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, text, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := policy.LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	// Slurm's commands, as scripts on PATH: sbatch exits 1 with Slurm's words on its standard
	// error, as it does when it refuses a job.
	bin := t.TempDir()
	for name, script := range map[string]string{
		"sinfo":    "echo 'sinfo: no JSON plugin' >&2; exit 1",
		"scontrol": "if [ \"$1 $2\" = 'show node' ]; then echo 'NodeName=gpu07 Gres=gpu:a10:2 GresUsed=gpu:a10:0(IDX:N/A) State=IDLE Partitions=duo'; exit 0; fi\necho 'Invalid job id specified' >&2; exit 1",
		"squeue":   "if [ \"$1\" = --json ]; then echo '{\"jobs\": [], \"errors\": []}'; fi",
		"sbatch":   "cat >/dev/null\necho 'sbatch: error: invalid partition specified: duo' >&2\necho 'sbatch: error: Batch job submission failed: Invalid partition name specified' >&2\nexit 1",
	} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return slurmHarness(t, p, cat, nil)
}

// When sbatch refuses the job of a user's own request or submission, the reply says so, with
// Slurm's reason: the user is not told the same failure a second time by a notice. Where someone
// else's command started it (an approval), the owner, who saw no reply, is told by a notice.
func TestARefusedJobIsToldOnce(t *testing.T) {
	h := slurmRefusing(t)
	const kim, ria = "kim@orbit.example", "ria@orbit.example"
	for _, cmd := range []string{"/gpu request 1 duo 2h", "/gpu submit cuda-smoke"} {
		h.notices(kim)
		r := h.say(kim, cmd)
		if !r.Error || !strings.Contains(r.Text, "could not be started") || !strings.Contains(r.Text, "invalid partition specified") {
			t.Fatalf("%s: reply %q; want it to say the cluster refused the job, and why", cmd, r.Text)
		}
		for _, n := range h.notices(kim) {
			if strings.Contains(n.Text, "failed") || strings.Contains(n.Text, "refused") {
				t.Errorf("%s: after the reply %q kim was told again: %q", cmd, r.Text, n.Text)
			}
		}
	}

	ask := mustOK(t, h.say(kim, "/gpu request 1 duo for 20h")) // past duo's 12h
	if !strings.Contains(ask.Text, "waits for approval") {
		t.Fatalf("a request past the class's limit: %q", ask.Text)
	}
	id := leaseIn(t, ask.Text)
	h.notices(kim)
	h.say(ria, "/gpu approve "+id.String())
	var got []string
	for _, n := range h.notices(kim) {
		got = append(got, n.Text)
		if strings.Contains(n.Text, id.String()) && strings.Contains(n.Text, "invalid partition specified") {
			return
		}
	}
	t.Errorf("after %s was approved and its job refused, kim was told %q; want a notice saying why", id, got)
}
