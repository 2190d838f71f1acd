package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each command's refusals of what was typed (a word too many or too few, a flag that is none, a
// setting's flag with a value it cannot take) end with the command as typed, put right: what the
// user typed besides is kept, and each flag is given once.
func TestRefusalsOfEachCommandKeepWhatWasTyped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol := filepath.Join(repoRoot, "docs", "quartermaster.example.yaml")
	for _, c := range []struct {
		args []string
		want string
	}{
		// --db is the one flag, and it was given: the unknown flag is left out, --db kept.
		{[]string{"agent-token", "list", "--db", "sqlite:" + dir + "/qm.db", "--x"},
			"e.g. quartermaster agent-token list --db sqlite:" + dir + "/qm.db"},
		{[]string{"predict", "eval", "extra", "--trace", "mine.swf"},
			"e.g. quartermaster predict eval --trace mine.swf"},
		{[]string{"templates", "show", "pytorch-ddp", "jax", "--policy", pol},
			"e.g. quartermaster templates show pytorch-ddp --policy " + pol + ""},
		{[]string{"templates", "show", "--policy", pol},
			"e.g. quartermaster templates show pytorch-ddp --policy " + pol + ""},
		{[]string{"templates", "render", "--policy", pol, "--backend", "kubernetes"},
			"e.g. quartermaster templates render pytorch-ddp --policy " + pol + " --backend kubernetes"},
		{[]string{"console", "--json", "--backend", "sim2", "--db", "sqlite:" + dir + "/qm.db"},
			"e.g. quartermaster console --json --backend sim --db sqlite:" + dir + "/qm.db"},
		{[]string{"serve", "--demo", "--http", "8080", "--db", "sqlite:" + dir + "/qm.db"},
			"e.g. quartermaster serve --demo --http :8080 --db sqlite:" + dir + "/qm.db"},
	} {
		_, stderr, code := runCLI(c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Count(msg, "\n") != 0 || !strings.HasSuffix(msg, c.want) {
			t.Errorf("%q: exit %d, %q; want exit 2 and one line ending %q", c.args, code, msg, c.want)
		}
	}
}

// policy check given --policy twice checks the file named last, as every other command reads a
// flag given twice.
func TestPolicyCheckReadsTheLastPolicyGiven(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "quartermaster.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(t.TempDir(), "good.yaml")
	if err := os.WriteFile(good, b, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	if out, stderr, code := runCLI("policy", "check", "--policy", missing, "--policy", good); code != 0 {
		t.Errorf("policy check --policy missing --policy good: exit %d, %q %q; want the good one checked", code, out, stderr)
	}
	if _, stderr, code := runCLI("policy", "check", "--policy", good, "--policy="+missing); code == 0 || !strings.Contains(stderr, missing) {
		t.Errorf("policy check --policy good --policy=missing: exit %d, %q; want the missing one refused", code, stderr)
	}
}

// A flag that is none of a command's, typed twice or with a value, is left out of the example
// with its values; a verb put in front of flags typed twice gives each once.
func TestAnUnknownFlagIsLeftOutWithItsValues(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"version", "--db", "sqlite:a.db", "--db", "sqlite:b.db"}, "e.g. quartermaster version"},
		{[]string{"version", "--short", "--format", "json"}, "e.g. quartermaster version --short"},
		{[]string{"migrate", "--db", "sqlite:a.db", "--db", "sqlite:b.db"}, "e.g. quartermaster migrate up --db sqlite:b.db"},
	} {
		_, stderr, code := runCLI(c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Count(msg, "\n") != 0 || !strings.HasSuffix(msg, c.want) {
			t.Errorf("%q: exit %d, %q; want exit 2 and one line ending %q", c.args, code, msg, c.want)
		}
	}
}

// A command that takes its verb before its flags, given a flag first that is none of the verb's,
// is answered with that flag: the example puts the verb in front and the flag right, not the
// mistaken flag again after the verb.
func TestAFlagMistakeBeforeTheVerbIsPutRightToo(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		says string
		want string
	}{
		{[]string{"discord", "--prnt", "--policy", "selkie.yaml"}, "--prnt is not a flag of quartermaster discord register",
			"e.g. quartermaster discord register --print --policy selkie.yaml"},
		{[]string{"predict", "--tarce", "mine.swf", "--json"}, "--tarce is not a flag of quartermaster predict eval",
			"e.g. quartermaster predict eval --trace mine.swf --json"},
		{[]string{"templates", "--polcy", "selkie.yaml"}, "--polcy is not a flag of quartermaster templates list",
			"e.g. quartermaster templates list --policy selkie.yaml"},
		// Flags that are the verb's only need the verb in front.
		{[]string{"discord", "--print", "--policy", "selkie.yaml"}, "discord takes register before its flags",
			"e.g. quartermaster discord register --print --policy selkie.yaml"},
	} {
		_, stderr, code := runCLI(c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, c.says) || !strings.HasSuffix(msg, c.want) {
			t.Errorf("%q: exit %d, %q; want exit 2 and one line saying %q, ending %q", c.args, code, msg, c.says, c.want)
		}
	}
}

// A flag given an empty value before the verb of a command that needs one is answered with the
// verb put in too, so that the example runs as it stands.
func TestAnEmptyFlagBeforeTheVerbGetsTheVerbToo(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"migrate", "--db", ""}, "e.g. quartermaster migrate up --db sqlite:data/quartermaster.db"},
		{[]string{"agent-token", "--db="}, "e.g. quartermaster agent-token list --db sqlite:data/quartermaster.db"},
		{[]string{"migrate", "status", "--db="}, "e.g. quartermaster migrate status --db sqlite:data/quartermaster.db"},
	} {
		_, stderr, code := runCLI(c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Count(msg, "\n") != 0 || !strings.HasSuffix(msg, c.want) {
			t.Errorf("%q: exit %d, %q; want exit 2 and one line ending %q", c.args, code, msg, c.want)
		}
	}
}

// report --team naming no team of the policy offers the team meant where it is a misspelling of
// one (on a policy with teams of its own), not the first team there is.
func TestReportOffersTheTeamMeant(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "quartermaster.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	y := strings.ReplaceAll(string(b), "vision", "robotics")
	y = strings.ReplaceAll(y, "language", "acoustics")
	dir := t.TempDir()
	own := filepath.Join(dir, "own.yaml")
	if err := os.WriteFile(own, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	runConsoleAt(t, dir, "2026-11-24T15:00:00Z", "alice@acme.example: /gpu request 1 interactive 2h\n:advance 3h\n", "--policy", own)
	db := "sqlite:" + filepath.Join(dir, "quartermaster.db")
	for _, c := range []struct{ team, meant string }{{"robotcs", "robotics"}, {"acoustic", "acoustics"}} {
		args := []string{"report", "--policy", own, "--db", db, "--now", "2026-12-01T15:00:00Z", "--week", "2026-W48", "--team", c.team, "--format", "csv"}
		_, stderr, code := runCLI(args...)
		want := "e.g. quartermaster report --policy " + own + " --db " + db + " --now 2026-12-01T15:00:00Z --week 2026-W48 --team " + c.meant + " --format csv"
		if msg := strings.TrimSpace(stderr); code != 2 || !strings.HasSuffix(msg, want) {
			t.Errorf("--team %s: exit %d, %q; want exit 2 and one line ending %q", c.team, code, msg, want)
		}
	}
}

// console given a word keeps the flags typed in its example, the policy's own class in the line.
func TestConsoleGivenAWordKeepsItsFlags(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "quartermaster.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(t.TempDir(), "own.yaml")
	if err := os.WriteFile(own, []byte(strings.ReplaceAll(string(b), "interactive", "notebook")), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI("console", "--policy", own, "--json", "extra", "--clock", "2026-11-30T09:00:00Z")
	want := "e.g. echo 'alice@acme.example: /gpu request 1 notebook for 2h' | quartermaster console --policy " + own + " --json --clock 2026-11-30T09:00:00Z"
	if msg := strings.TrimSpace(stderr); code != 2 || !strings.HasSuffix(msg, want) {
		t.Errorf("console with a word: exit %d, %q; want exit 2 and one line ending %q", code, msg, want)
	}
}

// serve's, discord register's and predict eval's refusals of what was typed end with the
// command as typed, put right. t.Setenv: not parallel.
func TestMoreRefusalsEndWithTheCommandPutRight(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	t.Setenv("QM_DATA_DIR", dir)
	trace := filepath.Join(dir, "jobs.trace")
	if err := os.WriteFile(trace, []byte("what is this\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--demo", "--policy", "own.yaml", "--http", ":9090"}, "e.g. quartermaster serve --demo --http :9090"},
		{[]string{"serve", "--http", ":9090"}, "e.g. quartermaster serve --http :9090 --policy /etc/quartermaster/quartermaster.yaml"},
		{[]string{"discord", "register", "--guild", "my-server", "--policy", "own.yaml"}, "e.g. quartermaster discord register --guild 1180000000000000001 --policy own.yaml"},
		{[]string{"discord", "register", "--policy", "own.yaml"}, "e.g. DISCORD_APP_ID=1180000000000000000 DISCORD_BOT_TOKEN=… quartermaster discord register --policy own.yaml"},
		{[]string{"predict", "eval", "--trace", trace, "--json"}, "e.g. quartermaster predict eval --trace " + trace + " --json --format swf"},
	} {
		code, _, stderr := runQM(c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Count(msg, "\n") != 0 || !strings.HasSuffix(msg, c.want) {
			t.Errorf("%q: exit %d, %q; want exit 2 and one line ending %q", c.args, code, msg, c.want)
		}
	}
}

// A flag written with three dashes, or a dash with no name, is answered in one sentence with the
// command as typed, the flag written right (or left out), not Go's "bad flag syntax".
func TestAFlagOfBadSyntaxIsPutRight(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--now", "2026-10-07T00:00:00Z", "---format", "csv"}, "e.g. quartermaster report --now 2026-10-07T00:00:00Z --format csv"},
		{[]string{"migrate", "status", "---db=sqlite:a.db"}, "e.g. quartermaster migrate status --db=sqlite:a.db"},
		{[]string{"version", "-=x", "--short"}, "e.g. quartermaster version --short"},
	} {
		_, stderr, code := runCLI(c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Count(msg, "\n") != 0 || !strings.HasSuffix(msg, c.want) || strings.Contains(msg, "bad flag syntax") {
			t.Errorf("%q: exit %d, %q; want exit 2 and one line ending %q", c.args, code, msg, c.want)
		}
	}
}

// templates list given several words, around its flags, lists the templates holding every one,
// as /gpu templates does.
func TestTemplatesListGivenSeveralWordsFindsTheTemplatesHoldingThemAll(t *testing.T) {
	t.Parallel()
	pol := filepath.Join(repoRoot, "commands", "testdata", "orbit.yaml")
	stdout, stderr, code := runCLI("templates", "list", "vs", "--policy", pol, "Code")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[1], "vscode-server ") {
		t.Errorf("exit %d, %q, %q; want vscode-server alone", code, stdout, stderr)
	}
}

// A flag given an empty value is answered with a value that works for that command's flag:
// predict eval's --trace (which it needs), render's --duration (4h, not its zero default), and
// render's --gpus left out (the template's own).
func TestAnEmptyFlagGetsAValueThatWorks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "eval", "--json", "--trace="}, "e.g. quartermaster predict eval --json --trace testdata/traces/KTH-SP2-1996-2.1-cln.swf.gz"},
		{[]string{"templates", "render", "pytorch-ddp", "--duration", ""}, "e.g. quartermaster templates render pytorch-ddp --duration 4h"},
		{[]string{"templates", "render", "pytorch-ddp", "--gpus=", "--backend", "slurm"}, "leave it out for its default, e.g. quartermaster templates render pytorch-ddp --backend slurm"},
	} {
		_, stderr, code := runCLI(c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Count(msg, "\n") != 0 || !strings.HasSuffix(msg, c.want) {
			t.Errorf("%q: exit %d, %q; want exit 2 and one line ending %q", c.args, code, msg, c.want)
		}
	}
}
