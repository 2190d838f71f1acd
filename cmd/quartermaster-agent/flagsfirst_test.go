package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Flags typed before the command, where every word before it is a flag of that command with its
// value, are the command's, as quartermaster takes them: the line runs as if it came first.
func TestFlagsBeforeAnUnambiguousCommandAreAccepted(t *testing.T) {
	needFake(t)
	for _, c := range []struct{ before, after []string }{
		{[]string{"--fake", "dgxa100", "metrics"}, []string{"metrics", "--fake", "dgxa100"}},
		{[]string{"--fake=dgxh100", "--labels", "snake", "metrics", "--node", "reef-01"}, []string{"metrics", "--fake=dgxh100", "--labels", "snake", "--node", "reef-01"}},
		{[]string{"--fake", "dgxa100", "--with-nodename", "gres-conf", "--node", "reef-02"}, []string{"gres-conf", "--fake", "dgxa100", "--with-nodename", "--node", "reef-02"}},
		{[]string{"--fake", "dgxh100", "topology"}, []string{"topology", "--fake", "dgxh100"}},
		{[]string{"--short", "version"}, []string{"version", "--short"}},
	} {
		code, got, stderr := runCmd(c.before...)
		_, want, _ := runCmd(c.after...)
		if got, want = series(got), series(want); code != 0 || got != want || want == "" {
			t.Errorf("%q: exit %d, stderr %q, stdout the same as %q: %v", c.before, code, stderr, c.after, got == want)
		}
	}
}

// series is out less the values of its lines that are a duration (a scrape's own timing).
func series(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if name, _, ok := strings.Cut(l, " "); ok && strings.HasSuffix(name, "_seconds") {
			lines[i] = name
		}
	}
	return strings.Join(lines, "\n")
}

// Every refusal's example, typed back, is accepted: where the line has two mistakes, or a flag
// pasted from a document with a typographic dash, the example puts them all right.
func TestTheExampleOfARefusalIsAcceptedTypedBack(t *testing.T) {
	needFake(t)
	missing := filepath.Join(t.TempDir(), "util.txt")
	for _, args := range [][]string{
		{"metrics", "--fake", "dgxa100", "--fake-script", missing},
		{"--fake", "dgxa100", "--fake-script", missing, "gres-conf"},
		{"metrcs", "--fake", "dgxa100", "--labels", "camel"},
		{"metrics", "--fake", "dgxa100", "--lables", "camel"},
		{"metrics", "--fake", "dgxa100", "--labels", "camel", "--node", ""},
		{"metrics", "--fake", "dgxa100", "--nod", "gpu 01"},
		{"metrics", "—fake", "dgxa100"},
		{"metrics", "–-fake=dgxh100", "--labels", "snake"},
		{"—fake", "dgxa100", "metrics"},
		{"—version", "—short"},
		{"metrics", "--fake", "dgxa100", "--fake-util", "0 150", "--labels", "camel"},
		{"--fake", "dgxa100", "--frobnicate", "metrics"},
		{"gres-conf", "--fake", "dgxa100", "--with-nodename=maybe", "--labels", "camel"},
		{"version", "--short", "--fake", "dgxa100"},
		{"--version", "--shrt"},
		{"metrics", "--fake", "--labels", "snake"},
		{"metrics", "--fake", "dgxa100", "--node", "--labels", "camel"},
	} {
		code, stderr := runWithin(args, 2*time.Second)
		msg := strings.TrimSuffix(stderr, "\n")
		if code == 0 || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "quartermaster-agent: ") || strings.Contains(msg, "takes flags only") {
			t.Errorf("%q: exit %d, %q; want a refusal in one line, naming a flag given no value as one", args, code, msg)
			continue
		}
		i := strings.LastIndex(msg, "e.g. quartermaster-agent ")
		if i < 0 {
			t.Errorf("%q: %q ends with no command line", args, msg)
			continue
		}
		eg := splitShell(msg[i+len("e.g. "):])[1:]
		if code, stderr := runWithin(eg, time.Second); code != 0 {
			t.Errorf("%q: %s\n  its example %q is refused: %s", args, msg, eg, stderr)
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("a refusal made %s", missing)
	}
}
