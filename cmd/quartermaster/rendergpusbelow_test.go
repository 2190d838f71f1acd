package main

import (
	"strings"
	"testing"
)

// templates render --gpus with a number of no GPUs (0, or below) is refused as --gpus that is no
// number is, not rendered as if --gpus were not given: one sentence, the command as typed with
// --gpus put right to the GPUs render gives that template on that policy, which renders.
func TestRenderGPUsBelowOneIsRefused(t *testing.T) {
	t.Parallel() // TestMain unsets QM_POLICY and the other settings of a shell
	other := "../../commands/testdata/tokyo.yaml"
	for _, c := range []struct{ args []string }{
		{[]string{"jupyterlab", "--gpus", "-3"}},
		{[]string{"jupyterlab", "--gpus", "0", "--backend", "slurm"}},
		{[]string{"pytorch-ddp", "--gpus=-1", "nnodes=2", "script=train.py", "--policy", other}},
		{[]string{"hparam-sweep", "--policy", other, "--gpus", "0"}},
		{[]string{"data-prep", "--gpus", "-2"}},
	} {
		code, _, stderr := runQM(append([]string{"templates", "render"}, c.args...)...)
		msg := strings.TrimSpace(stderr)
		_, eg, ok := strings.Cut(msg, "e.g. quartermaster templates render ")
		if code != 2 || !ok || strings.Contains(msg, "\n") || !strings.Contains(msg, "--gpus") {
			t.Errorf("render %v: exit %d, %q; want one sentence about --gpus with an example", c.args, code, msg)
			continue
		}
		// The example is the one --gpus that is no number gets.
		notANumber := make([]string, len(c.args))
		for i, a := range c.args {
			switch {
			case strings.HasPrefix(a, "--gpus="):
				a = "--gpus=x"
			case i > 0 && c.args[i-1] == "--gpus":
				a = "x"
			}
			notANumber[i] = a
		}
		_, _, want := runQM(append([]string{"templates", "render"}, notANumber...)...)
		_, wantEg, _ := strings.Cut(strings.TrimSpace(want), "e.g. quartermaster templates render ")
		if eg != wantEg {
			t.Errorf("render %v: the example is %q, want %q (as for --gpus that is no number)", c.args, eg, wantEg)
		}
		if code, _, stderr := runQM(append([]string{"templates", "render"}, strings.Fields(eg)...)...); code != 0 {
			t.Errorf("the example render %s: exit %d, %s", eg, code, stderr)
		}
	}
}

// templates render --duration of no length (0, or below) is refused as a --duration that is no
// duration is, not rendered as if --duration were not given.
func TestRenderDurationOfNoLengthIsRefused(t *testing.T) {
	t.Parallel() // QM_POLICY and the shell's other settings are unset (TestMain)
	for _, args := range [][]string{
		{"jupyterlab", "--duration", "-3h"},
		{"pytorch-ddp", "--duration=0", "nnodes=2", "script=train.py"},
		{"hparam-sweep", "--duration", "0s", "--backend", "slurm"},
	} {
		code, _, stderr := runQM(append([]string{"templates", "render"}, args...)...)
		msg := strings.TrimSpace(stderr)
		_, eg, ok := strings.Cut(msg, "e.g. quartermaster templates render ")
		if code != 2 || !ok || strings.Contains(msg, "\n") || !strings.Contains(msg, "--duration") {
			t.Errorf("render %v: exit %d, %q; want one sentence about --duration with an example", args, code, msg)
			continue
		}
		notADuration := make([]string, len(args))
		for i, a := range args {
			switch {
			case strings.HasPrefix(a, "--duration="):
				a = "--duration=x"
			case i > 0 && args[i-1] == "--duration":
				a = "x"
			}
			notADuration[i] = a
		}
		_, _, want := runQM(append([]string{"templates", "render"}, notADuration...)...)
		_, wantEg, _ := strings.Cut(strings.TrimSpace(want), "e.g. quartermaster templates render ")
		if eg != wantEg {
			t.Errorf("render %v: the example is %q, want %q (as for --duration that is no duration)", args, eg, wantEg)
		}
		if code, _, stderr := runQM(append([]string{"templates", "render"}, strings.Fields(eg)...)...); code != 0 {
			t.Errorf("the example render %s: exit %d, %s", eg, code, stderr)
		}
	}
}

// --gpus and --duration both below one are both put right in the one example, which renders.
func TestRenderGPUsAndDurationBelowOneArePutRightTogether(t *testing.T) {
	t.Parallel() // QM_POLICY and the shell's other settings are unset (TestMain)
	code, _, stderr := runQM("templates", "render", "jupyterlab", "--gpus", "-3", "--duration", "-1h")
	msg := strings.TrimSpace(stderr)
	_, eg, ok := strings.Cut(msg, "e.g. quartermaster templates render ")
	if code != 2 || !ok || strings.Contains(msg, "\n") || !strings.Contains(msg, "--gpus") || !strings.Contains(msg, "--duration") {
		t.Fatalf("exit %d, %q; want one sentence about --gpus and --duration with an example", code, msg)
	}
	if code, _, stderr := runQM(append([]string{"templates", "render"}, strings.Fields(eg)...)...); code != 0 {
		t.Errorf("the example render %s: exit %d, %s", eg, code, stderr)
	}
}

// A refusal that comes before --gpus and --duration are read (no template, one that is not
// there, --backend) gives no --gpus or --duration below one in its example: it would be refused next.
func TestRenderRefusalsBeforeGPUsLeaveNoneBelowOne(t *testing.T) {
	t.Parallel() // QM_POLICY and the shell's other settings are unset (TestMain)
	for _, args := range [][]string{
		{"--gpus", "-3"},
		{"nosuch-template", "--gpus", "0"},
		{"jupyterlab", "--backend", "slrum", "--duration", "-1h"},
	} {
		code, _, stderr := runQM(append([]string{"templates", "render"}, args...)...)
		msg := strings.TrimSpace(stderr)
		_, eg, ok := strings.Cut(msg, "e.g. quartermaster templates render ")
		if code != 2 || !ok || strings.Contains(msg, "\n") {
			t.Errorf("render %v: exit %d, %q; want one sentence with an example", args, code, msg)
			continue
		}
		if code, _, stderr := runQM(append([]string{"templates", "render"}, strings.Fields(eg)...)...); code != 0 {
			t.Errorf("render %v: the example render %s: exit %d, %s", args, eg, code, stderr)
		}
	}
}
