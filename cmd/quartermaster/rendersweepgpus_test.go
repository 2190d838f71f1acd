package main

import (
	"regexp"
	"strings"
	"testing"
)

// templates render of a sweep of fewer trials than its default GPUs run at once sizes its lease
// as /gpu submit does, on the class named too: only the GPUs its trials take at once (and no more
// per node than a node of the class holds), which is what --gpus put right says.
func TestRenderSizesAFewTrialSweepAsSubmitDoes(t *testing.T) {
	t.Parallel() // TestMain unsets QM_POLICY and the other settings of a shell
	orbit := "../../commands/testdata/orbit.yaml"
	example := "../../docs/quartermaster.example.yaml"
	gpus := regexp.MustCompile(`--gpus ([0-9]+)`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"hparam-sweep", "trials=3", "gpus_per_trial=1", "--class", "quad", "--policy", orbit}, "3"},
		{[]string{"hparam-sweep", "trials=1", "gpus_per_trial=2", "--class", "quad", "--policy", orbit}, "2"},
		{[]string{"hparam-sweep", "trials=16", "gpus_per_trial=1", "--class", "quad", "--policy", orbit}, "4"},
		{[]string{"hparam-sweep", "trials=1", "--class", "duo", "--policy", orbit}, "1"},
		{[]string{"hparam-sweep", "trials=3", "--class", "train", "--policy", example}, "3"},
		{[]string{"hparam-sweep", "trials=3", "--policy", example}, "3"},
	} {
		args := append([]string{"templates", "render"}, c.args...)
		code, _, stderr := runQM(append(args, "--gpus", "x")...)
		m := gpus.FindStringSubmatch(stderr)
		if code != 2 || m == nil || m[1] != c.want {
			t.Errorf("render %s --gpus x: exit %d, %q; want the example to give --gpus %s", strings.Join(c.args, " "), code, strings.TrimSpace(stderr), c.want)
		}
	}
}
