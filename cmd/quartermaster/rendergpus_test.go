package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// templates render with --gpus that is no whole number (or given none) is refused with the
// command as typed, --gpus put right: the GPUs render gives that template on that policy (not a
// fixed 8), the template, its parameters and the other flags kept; a CPU-only template's example
// leaves --gpus out. The example renders.
func TestRenderGPUsPutRightKeepsWhatWasTyped(t *testing.T) {
	t.Parallel() // QM_POLICY and the shell's other settings are unset (TestMain)
	other := "../../commands/testdata/tokyo.yaml"
	number := regexp.MustCompile(`^(--gpus[ =])([0-9]+)$`)
	for _, args := range [][]string{
		{"jupyterlab", "--gpus", "x"},
		{"--gpus", "two", "hparam-sweep", "--backend", "slurm"},
		{"pytorch-ddp", "--gpus=x", "nnodes=2", "script=train.py"},
		{"jupyterlab", "--policy", other, "--gpus", "x"},
		{"pytorch-ddp", "nnodes=2", "script=train.py", "--policy", other, "--gpus"},
		{"data-prep", "--gpus", "x"},
	} {
		code, _, stderr := runQM(append([]string{"templates", "render"}, args...)...)
		msg := strings.TrimSpace(stderr)
		_, eg, ok := strings.Cut(msg, "e.g. quartermaster templates render ")
		if code != 2 || !ok || strings.Contains(msg, "\n") || !strings.Contains(msg, "--gpus") {
			t.Errorf("render %v: exit %d, %q; want one sentence about --gpus with an example", args, code, msg)
			continue
		}
		// The example is the command as typed, --gpus given a number of GPUs (none for data-prep).
		typed := strings.Join(args, " ")
		typed = regexp.MustCompile(`--gpus([ =])(x|two)\b`).ReplaceAllString(typed, "--gpus${1}N")
		if strings.HasSuffix(typed, "--gpus") {
			typed += " N"
		}
		got := eg
		for _, m := range regexp.MustCompile(`--gpus[ =][0-9]+`).FindAllString(eg, -1) {
			p := number.FindStringSubmatch(m)
			if n, _ := strconv.Atoi(p[2]); n <= 0 {
				t.Errorf("render %v: the example gives --gpus %s", args, p[2])
			}
			got = strings.Replace(got, m, p[1]+"N", 1)
		}
		if args[0] == "data-prep" {
			// Its lease holds no GPU: no --gpus, and the parameters it needs.
			if strings.Contains(eg, "--gpus") || !strings.HasPrefix(eg, "data-prep ") {
				t.Errorf("render %v: the example %q gives a CPU-only template --gpus", args, eg)
			}
		} else if strings.Join(strings.Fields(got), " ") != typed {
			t.Errorf("render %v: the example %q is not the command as typed (%q) with --gpus put right", args, eg, typed)
		}
		if code, _, stderr := runQM(append([]string{"templates", "render"}, strings.Fields(eg)...)...); code != 0 {
			t.Errorf("the example render %s: exit %d, %s", eg, code, stderr)
		}
	}
}
