package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A command that takes a verb (agent-token, migrate, discord, policy, predict, templates), called
// without one, with its flags before it, with a verb short of its word (agent-token create without
// the node), or with a word too many, is refused in one sentence that names what is wrong, with
// the command as typed put right as its example; never the command's usage. Where the example
// runs without a network or a file outside the test, it is run and works.
func TestVerbCommandsMissingOrExtraWordsAreOneSentenceWithAWorkingExample(t *testing.T) {
	t.Parallel() // TestMain unsets QM_POLICY and the other settings of a shell
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "qm.db")
	pol := filepath.Join("..", "..", "docs", "quartermaster.example.yaml")
	if code, _, stderr := runQM("migrate", "up", "--db", db); code != 0 {
		t.Fatalf("migrate up: %d %s", code, stderr)
	}
	for _, c := range []struct {
		args []string
		says string // what the sentence names
		eg   string // the example it gives
		run  bool   // whether the example runs here
	}{
		{[]string{"agent-token", "create", "--db", db}, "agent-token create needs the node's name", "quartermaster agent-token create gpu-01 --db " + db, true},
		{[]string{"agent-token", "--db", db, "revoke"}, "agent-token revoke needs the node's name", "quartermaster agent-token --db " + db + " revoke gpu-01", false},
		{[]string{"agent-token", "create", "gpu-03", "gpu-04", "--db", db}, `agent-token create takes one node name, but got "gpu-04" too`, "quartermaster agent-token create gpu-03 --db " + db, true},
		{[]string{"agent-token", "list", "all", "--db", db}, `agent-token list takes no more words, but got "all"`, "quartermaster agent-token list --db " + db, true},
		{[]string{"agent-token", "--db", db}, "agent-token needs a command: create, list or revoke", "quartermaster agent-token list --db " + db, true},
		{[]string{"agent-token"}, "agent-token needs a command: create, list or revoke", "quartermaster agent-token list", false},
		{[]string{"migrate", "up", "now", "--db", db}, `migrate up takes no more words, but got "now"`, "quartermaster migrate up --db " + db, true},
		{[]string{"migrate", "--db", db, "status", "all"}, `migrate status takes no more words, but got "all"`, "quartermaster migrate --db " + db + " status", true},
		{[]string{"migrate", "--db", db}, "migrate needs a command: up, down or status", "quartermaster migrate up --db " + db, true},
		{[]string{"discord", "--print", "--policy", pol}, "discord takes register before its flags", "quartermaster discord register --print --policy " + pol, true},
		{[]string{"discord", "--print"}, "discord takes register before its flags", "quartermaster discord register --print --policy /etc/quartermaster/quartermaster.yaml", false},
		{[]string{"discord"}, "discord needs a command: register", "quartermaster discord register --print --policy /etc/quartermaster/quartermaster.yaml", false},
		{[]string{"discord", "register", "now", "--print", "--policy", pol}, `discord register takes no more words, but got "now"`, "quartermaster discord register --print --policy " + pol, true},
		{[]string{"policy", "--policy", pol}, "policy takes check before its flags", "quartermaster policy check --policy " + pol, true},
		{[]string{"policy"}, "policy needs a command: check", "quartermaster policy check docs/quartermaster.example.yaml", false},
		{[]string{"policy", "check"}, "policy check needs a policy file, or QM_POLICY set", "quartermaster policy check docs/quartermaster.example.yaml", false},
		{[]string{"policy", "check", "--policy"}, "--policy needs a value", "quartermaster policy check --policy docs/quartermaster.example.yaml", false},
		{[]string{"policy", "check", "--policy="}, "--policy is empty", "quartermaster policy check --policy /etc/quartermaster/quartermaster.yaml", false},
		{[]string{"policy", "check", pol, "now"}, `policy check takes one policy file, but got "now" too`, "quartermaster policy check " + pol, true},
		{[]string{"predict", "eval"}, "predict eval needs --trace", "quartermaster predict eval --trace testdata/traces/KTH-SP2-1996-2.1-cln.swf.gz", false},
		{[]string{"predict", "eval", "--json", "more"}, `predict eval takes no more words, but got "more"`, "quartermaster predict eval --json --trace testdata/traces/KTH-SP2-1996-2.1-cln.swf.gz", false},
		{[]string{"predict", "eval", "--format", "xml", "--trace", "t.swf"}, `--format is swf, csv, sacct or philly, not "xml"`, "quartermaster predict eval --format swf --trace t.swf", false},
		{[]string{"predict"}, "predict needs a command: eval", "quartermaster predict eval --trace testdata/traces/KTH-SP2-1996-2.1-cln.swf.gz", false},
		{[]string{"templates"}, "templates needs a command: list, show or render", "quartermaster templates list", true},
		{[]string{"templates", "--policy", pol}, "templates takes list, show or render before its flags", "quartermaster templates list --policy " + pol, true},
	} {
		line := strings.Join(c.args, " ")
		code, stdout, stderr := runQM(c.args...)
		if code != 2 || stdout != "" {
			t.Errorf("%s: exit %d, stdout %q; want 2 and nothing on stdout", line, code, stdout)
		}
		msg := strings.TrimPrefix(strings.TrimSpace(stderr), "quartermaster "+c.args[0]+": ")
		if strings.Count(strings.TrimSpace(stderr), "\n") > 0 || strings.Contains(stderr, "usage") {
			t.Errorf("%s: more than one sentence:\n%s", line, stderr)
		}
		if !strings.Contains(msg, c.says) || !strings.HasSuffix(msg, "e.g. "+c.eg) {
			t.Errorf("%s:\n got %s\nwant %s…, e.g. %s", line, msg, c.says, c.eg)
			continue
		}
		if c.run {
			words := strings.Fields(c.eg)[1:]
			if code, _, stderr := runQM(words...); code != 0 {
				t.Errorf("%s: the example %q does not work: exit %d, %s", line, c.eg, code, stderr)
			}
		}
	}
}
