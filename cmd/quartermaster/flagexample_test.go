package main

import (
	"strings"
	"testing"
)

// A misspelled flag, a flag without its value or a true/false flag given one is answered with
// the command as it was typed, that flag put right: every other flag and word the user typed is
// kept, so that the example is the command they meant and runs as it stands.
func TestAFlagMistakeKeepsWhatWasTyped(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--policy", "/srv/qm/selkie.yaml", "--htp", ":9090"},
			"e.g. quartermaster serve --policy /srv/qm/selkie.yaml --http :9090"},
		{[]string{"serve", "--policy", "/srv/qm/selkie.yaml", "--http"},
			"e.g. quartermaster serve --policy /srv/qm/selkie.yaml --http :8080"},
		{[]string{"serve", "--policy", "/srv/qm/selkie.yaml", "--demo=maybe"},
			"e.g. quartermaster serve --policy /srv/qm/selkie.yaml --demo"},
		{[]string{"migrate", "status", "--dbb", "sqlite:/srv/qm/qm.db"},
			"e.g. quartermaster migrate status --db sqlite:/srv/qm/qm.db"},
		{[]string{"agent-token", "create", "node-17", "--dbb", "sqlite:/srv/qm/qm.db"},
			"e.g. quartermaster agent-token create node-17 --db sqlite:/srv/qm/qm.db"},
		{[]string{"console", "--policy", "selkie.yaml", "--json", "--clok", "2026-12-01T08:00:00Z"},
			"e.g. quartermaster console --policy selkie.yaml --json --clock 2026-12-01T08:00:00Z"},
		{[]string{"templates", "list", "jax", "--polcy", "selkie.yaml"},
			"e.g. quartermaster templates list jax --policy selkie.yaml"},
		{[]string{"templates", "render", "jax-tpu-free", "--policy", "selkie.yaml", "--clas", "h200", "nnodes=2"},
			"e.g. quartermaster templates render jax-tpu-free --policy selkie.yaml --class h200 nnodes=2"},
		{[]string{"discord", "register", "--policy", "selkie.yaml", "--print", "--gild", "42"},
			"e.g. quartermaster discord register --policy selkie.yaml --print --guild 42"},
		{[]string{"predict", "eval", "--trace", "mine.swf", "--fromat", "swf"},
			"e.g. quartermaster predict eval --trace mine.swf --format swf"},
		{[]string{"report", "--now", "2026-10-07T00:00:00Z", "--team", "selkies", "--fromat", "csv"},
			"e.g. quartermaster report --now 2026-10-07T00:00:00Z --team selkies --format csv"},
		{[]string{"report", "--now", "2026-10-07T00:00:00Z", "--format", "csv", "--week"},
			"e.g. quartermaster report --now 2026-10-07T00:00:00Z --format csv --week 2026-W40"},
		{[]string{"version", "--short", "--verbose"},
			"e.g. quartermaster version --short"},
	} {
		_, stderr, code := runCLI(c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Count(msg, "\n") != 0 || !strings.HasSuffix(msg, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line ending %q", c.args, code, msg, c.want)
		}
	}
}

// A flag typed twice is read where it was typed last, as the flag package reads it; a refusal's
// example gives it once, there, put right where that is the mistake, never both values.
func TestAFlagTypedTwiceIsGivenOnceInTheExample(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--now", "2026-10-07T00:00:00Z", "--format", "csv", "--format", "md"},
			"e.g. quartermaster report --now 2026-10-07T00:00:00Z --format csv"},
		{[]string{"report", "--format", "json", "--now", "2026-10-07T00:00:00Z", "--format", "md", "--week", "2026-W39"},
			"e.g. quartermaster report --now 2026-10-07T00:00:00Z --format csv --week 2026-W39"},
		// --demo: serve's example otherwise adds the policy it needs (TestServesExampleGivesAPolicyOrTheDemo).
		{[]string{"serve", "--demo", "--db", "sqlite:a.db", "--db", "sqlite:b.db", "--htp", ":9090"},
			"e.g. quartermaster serve --demo --db sqlite:b.db --http :9090"},
		{[]string{"console", "--db", "", "--db", "sqlite:" + dir + "/b.db", "--json"},
			"e.g. quartermaster console --db sqlite:" + dir + "/b.db --json"},
		// Given empty and given a value: the value typed is the one meant.
		{[]string{"migrate", "status", "--db", "sqlite:a.db", "--db="},
			"e.g. quartermaster migrate status --db sqlite:a.db"},
		{[]string{"migrate", "status", "--db", "sqlite:a.db", "--db", "sqlite:b.db", "sideways"},
			"e.g. quartermaster migrate status --db sqlite:b.db"},
		{[]string{"predict", "eval", "--trace", "a.swf", "--trace", "b.swf", "--format", "xml"},
			"e.g. quartermaster predict eval --trace b.swf --format swf"},
	} {
		_, stderr, code := runCLI(c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Count(msg, "\n") != 0 || !strings.HasSuffix(msg, c.want) {
			t.Errorf("%q: exit %d, %q; want exit 2 and one line ending %q", c.args, code, msg, c.want)
		}
	}
}
