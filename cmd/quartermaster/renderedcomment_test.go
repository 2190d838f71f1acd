package main

import (
	"strings"
	"testing"
)

// The Slurm script templates render shows carries the job comment the service submits the job
// with (INSTANCE:LEASE, qm:L-42 by default; QM_SLURM_INSTANCE's prefix where it is set), not
// the lease id alone: the script shown is the script Slurm runs.
func TestRenderedSlurmScriptCarriesTheSubmittedComment(t *testing.T) {
	clearEnv(t)
	pol := "../../commands/testdata/kolkata.yaml"
	for _, c := range []struct{ instance, lease, want string }{
		{"", "L-7", "#SBATCH --comment=qm:L-7\n"},
		{"kestrel-staging", "L-31", "#SBATCH --comment=kestrel-staging:L-31\n"},
	} {
		t.Setenv("QM_SLURM_INSTANCE", c.instance)
		code, out, stderr := runQM("templates", "render", "jupyterlab", "--policy", pol, "--class", "h200-x6", "--lease", c.lease, "--backend", "slurm")
		if code != 0 || !strings.Contains(out, c.want) {
			t.Errorf("QM_SLURM_INSTANCE=%q: exit %d, %s\n%s\nwant %q", c.instance, code, stderr, out, c.want)
		}
	}
}
