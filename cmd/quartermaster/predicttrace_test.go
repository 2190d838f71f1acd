package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// predict eval given a --trace that is not there (or a directory) refuses it in one sentence with
// the command as typed and a trace that exists put in, rather than Go's "open …: no such file or
// directory" with no example; that example, typed back from the repository, replays. The commands
// run as the built binary in the repository's root (runBinary): the replays it runs would take
// minutes under the race detector.
func TestPredictEvalRefusesATraceThatIsNotThere(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		says string
		eg   string
	}{
		{[]string{"predict", "eval", "--trace", "traces/kth.swf", "--json"}, "--trace traces/kth.swf does not exist",
			"quartermaster predict eval --trace " + predictTrace + " --json"},
		{[]string{"predict", "eval", "--format", "swf", "--trace=testdata/traces"}, "--trace testdata/traces is a directory",
			"quartermaster predict eval --format swf --trace=" + predictTrace},
	} {
		code, stdout, stderr := runBinary(t, root, nil, c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || stdout != "" || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "quartermaster predict: "+c.says) || !strings.HasSuffix(msg, "e.g. "+c.eg) {
			t.Errorf("%v: exit %d, %q; want exit 2 and one sentence saying %q, ending e.g. %s", c.args, code, msg, c.says, c.eg)
			continue
		}
		if code, _, stderr := runBinary(t, root, nil, strings.Fields(c.eg)[1:]...); code != 0 {
			t.Errorf("%v: the example %s: exit %d, %s", c.args, c.eg, code, stderr)
		}
	}
}
