package main

import (
	"strings"
	"testing"
)

// orbit has 2-GPU (duo), 4-GPU (quad) and one 6-GPU (hex) simulated nodes.
const orbitPolicyFile = "../../commands/testdata/orbit.yaml"

// Given a policy (--policy or QM_POLICY), quartermaster templates list and show say what a node
// of its simulated cluster gives a template, as /gpu templates does on it: a multi-node
// template's 4 GPUs per node on the whole quad nodes it would run on, not its own 8 per node.
func TestTemplatesListAndShowReadThePolicy(t *testing.T) {
	const want = "4 GPUs per node (a whole quad node), several nodes"
	lineOf := func(out, name string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, name+" ") {
				return l
			}
		}
		return ""
	}
	for _, args := range [][]string{
		{"templates", "list", "--policy", orbitPolicyFile},
		{"templates", "list", "pytorch", "--policy", orbitPolicyFile},
		{"templates", "list", "--policy", orbitPolicyFile, "pytorch"},
	} {
		code, out, stderr := runQM(args...)
		if code != 0 {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
			continue
		}
		if l := lineOf(out, "pytorch-ddp"); !strings.Contains(l, want) || strings.Contains(l, "8/node") {
			t.Errorf("%v says of pytorch-ddp %q, want %q", args, l, want)
		}
	}
	code, out, _ := runQM("templates", "list", "--policy", orbitPolicyFile)
	if l := lineOf(out, "data-prep"); code != 0 || !strings.Contains(l, "CPU only") {
		t.Errorf("list says of data-prep %q", l)
	}
	if l := lineOf(out, "cuda-smoke"); !strings.Contains(l, "1 GPU") {
		t.Errorf("list says of cuda-smoke %q", l)
	}
	code, out, stderr := runQM("templates", "show", "pytorch-ddp", "--policy", orbitPolicyFile)
	if code != 0 || !strings.Contains(out, "GPUs:    "+want) || strings.Contains(out, "8/node") {
		t.Errorf("show pytorch-ddp --policy: exit %d, %s%s", code, out, stderr)
	}
	t.Setenv("QM_POLICY", orbitPolicyFile)
	code, out, stderr = runQM("templates", "show", "jax")
	if code != 0 || !strings.Contains(out, "GPUs:    "+want) {
		t.Errorf("show jax with QM_POLICY: exit %d, %s%s", code, out, stderr)
	}
}

// templates render of a multi-node template given nnodes on a named class renders the lease
// /gpu submit would make there: nnodes whole nodes with all their GPUs, not 1 GPU on each of two
// nodes where the lease would hold both GPUs of one node.
func TestTemplatesRenderNnodesOnANamedClassTakesWholeNodes(t *testing.T) {
	t.Parallel()
	code, out, stderr := runQM("templates", "render", "jax", "--policy", orbitPolicyFile, "--backend", "slurm", "--class", "duo", "--gpus", "2", "nnodes=2")
	if code != 0 || !strings.Contains(out, "#SBATCH --nodes=2\n") || !strings.Contains(out, "#SBATCH --gres=gpu:a10:2\n") {
		t.Errorf("render jax --class duo --gpus 2 nnodes=2: exit %d, %s%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "4 GPUs") {
		t.Errorf("render does not say the lease holds 4 GPUs: %q\n%s", stderr, out)
	}
}
