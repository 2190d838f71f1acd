package main

import (
	"strings"
	"testing"
)

// predict eval --train-fraction out of its range (or NaN, which is no number) is refused with an
// example that runs: the fraction put right, and --trace added where none was given, not a
// missing --trace answered with the fraction left as typed.
func TestPredictTrainFractionOutOfRangeIsPutRight(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--train-fraction", "-1"},
		{"--json", "--train-fraction=1.5"},
		{"--format", "swf", "--train-fraction", "-0.2"},
		{"--train-fraction", "NaN"},
		{"--train-fraction=nan", "--json"},
	} {
		code, _, stderr := runQM(append([]string{"predict", "eval"}, args...)...)
		msg := strings.TrimSpace(stderr)
		_, eg, ok := strings.Cut(msg, "e.g. quartermaster predict eval ")
		if code != 2 || !ok || strings.Contains(msg, "\n") || !strings.Contains(msg, "--train-fraction") {
			t.Errorf("predict eval %v: exit %d, %q; want one sentence about --train-fraction with an example", args, code, msg)
			continue
		}
		words := strings.Fields(eg)
		for i, w := range words {
			if i > 0 && words[i-1] == "--train-fraction" {
				w = "--train-fraction=" + w
			}
			if v, ok := strings.CutPrefix(w, "--train-fraction="); ok && (strings.HasPrefix(v, "-") || v == "1.5" || strings.EqualFold(v, "nan")) {
				t.Errorf("predict eval %v: the example %q keeps --train-fraction %s", args, eg, v)
			}
		}
		if !strings.Contains(eg, "--trace ") {
			t.Errorf("predict eval %v: the example %q gives no --trace", args, eg)
		}
	}
}
