package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// templates render refuses a class its policy does not have, a backend it does not render or a
// lease id that is none in one sentence ending, as every command-line refusal does, with "e.g."
// and the command as typed, put right: on a policy with classes and teams of its own, the class
// is one of that policy's, the one render would take for the template.
func TestTemplatesRenderRefusalsKeepWhatWasTyped(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "quartermaster.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	y := regexp.MustCompile(`\btrain\b`).ReplaceAllString(string(b), "bigrun")
	y = regexp.MustCompile(`\binteractive\b`).ReplaceAllString(y, "notebook")
	y = regexp.MustCompile(`\bvision\b`).ReplaceAllString(y, "robotics")
	own := filepath.Join(t.TempDir(), "own.yaml")
	if err := os.WriteFile(own, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCLI("policy", "check", own); code != 0 {
		t.Fatalf("the test's policy does not load: %s", stderr)
	}
	for _, c := range []struct {
		args []string
		says string
		want string
	}{
		{[]string{"pytorch-ddp", "--policy", own, "--class", "gpu-big", "--team", "robotics"},
			`--class "gpu-big" is not a class of`,
			"e.g. quartermaster templates render pytorch-ddp --policy " + own + " --class bigrun --team robotics"},
		{[]string{"pytorch-ddp", "--policy", own, "--class", "bigrn", "nnodes=2"},
			`--class "bigrn" is not a class of`,
			"e.g. quartermaster templates render pytorch-ddp --policy " + own + " --class bigrun nnodes=2"},
		{[]string{"pytorch-ddp", "--policy", own, "--backend", "slrum", "--team", "robotics"},
			`--backend is slurm or kubernetes, not "slrum"`,
			"e.g. quartermaster templates render pytorch-ddp --policy " + own + " --backend slurm --team robotics"},
		// A team the policy does not have: the one meant where it is a misspelling, else its first.
		{[]string{"pytorch-ddp", "--policy", own, "--team", "robotcs", "--backend", "slurm"},
			`--team "robotcs" is not a team of`,
			"e.g. quartermaster templates render pytorch-ddp --policy " + own + " --team robotics --backend slurm"},
		{[]string{"pytorch-ddp", "--policy", own, "--backend", "slurm", "--team", "ghost"},
			`--team "ghost" is not a team of`,
			"e.g. quartermaster templates render pytorch-ddp --policy " + own + " --backend slurm --team robotics"},
		{[]string{"pytorch-ddp", "--policy", own, "--lease", "42x", "--backend", "kubernetes"},
			`--lease "42x" is not a lease id`,
			"e.g. quartermaster templates render pytorch-ddp --policy " + own + " --lease L-42 --backend kubernetes"},
	} {
		_, stderr, code := runCLI(append([]string{"templates", "render"}, c.args...)...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, c.says) || !strings.HasSuffix(msg, c.want) || strings.Contains(strings.ToLower(msg), "example:") {
			t.Errorf("%q: exit %d, %q; want exit 2 and one line saying %q, ending %q", c.args, code, msg, c.says, c.want)
		}
	}
}

// console's --clock, refused, is answered with the console command as typed, the clock put right.
func TestConsoleClockRefusalsKeepWhatWasTyped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "quartermaster.db")
	runConsoleAt(t, dir, "2026-11-24T15:00:00Z", "alice@acme.example: /gpu request 1 interactive 2h\n:advance 1h\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"console", "--json", "--clock", "yesterday", "--db", db},
			"e.g. quartermaster console --json --clock 2026-11-30T09:00:00Z --db " + db},
		// The database's history ends after the clock asked for: the clock offered is its end,
		// where the last console's clock stood (an hour after the request).
		{[]string{"console", "--db", db, "--clock", "2026-11-20T09:00:00Z", "--json"},
			"e.g. quartermaster console --db " + db + " --clock 2026-11-24T16:00:00Z --json"},
	} {
		_, stderr, code := runCLI(c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Count(msg, "\n") != 0 || !strings.HasSuffix(msg, c.want) || strings.Contains(msg, "example:") {
			t.Errorf("%q: exit %d, %q; want exit 2 and one line ending %q", c.args, code, msg, c.want)
		}
	}
}

// A setting of the environment that cannot be read is refused in one sentence whose example is
// that setting with a value that works ("e.g. QM_X=value"), as every other setting's refusal
// says it. t.Setenv: not parallel.
func TestASettingsRefusalSaysEg(t *testing.T) {
	for _, c := range []struct {
		env, value string
		args       []string
	}{
		{"QM_SUBMIT_GRACE", "soon", []string{"console"}},
		{"QM_SUBMIT_GRACE", "1ns", []string{"console"}},
		{"QM_RECONCILE_INTERVAL", "often", []string{"console"}},
		{"QM_SLURM_CONTAINER", "docker", []string{"templates", "render", "pytorch-ddp"}},
		{"QM_SLURM_ACCOUNTING", "maybe", []string{"templates", "render", "pytorch-ddp"}},
		{"QM_DEFAULT_TEMPLATE", "no-such-template", []string{"templates", "render", "pytorch-ddp"}},
	} {
		t.Run(c.env+"="+c.value, func(t *testing.T) {
			clearEnv(t)
			t.Setenv("QM_DATA_DIR", t.TempDir())
			t.Setenv(c.env, c.value)
			code, _, stderr := runQM(c.args...)
			msg := strings.TrimSpace(stderr)
			if code != 2 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "e.g. "+c.env+"=") || strings.Contains(strings.ToLower(msg), "example:") {
				t.Errorf("%s=%s %v: exit %d, %q; want exit 2 and one sentence with e.g. %s=", c.env, c.value, c.args, code, msg, c.env)
			}
		})
	}
}

// templates show "" (a variable that was not set, typed as the name) is refused as a name
// missing, with a template put in, not as a template named nothing with a search for nothing.
func TestTemplatesShowOfAnEmptyNameAsksForOne(t *testing.T) {
	t.Parallel()
	pol := "../../commands/testdata/harbor.yaml"
	code, _, stderr := runQM("templates", "show", "", "--policy", pol)
	msg := strings.TrimSpace(stderr)
	want := "quartermaster templates: templates show needs a template name; e.g. quartermaster templates show pytorch-ddp --policy " + pol
	if code != 2 || msg != want {
		t.Fatalf("exit %d, %q; want exit 2 and %q", code, msg, want)
	}
	_, eg, _ := strings.Cut(want, "e.g. ")
	if code, _, stderr := runQM(strings.Fields(eg)[1:]...); code != 0 {
		t.Errorf("the example: exit %d, %s", code, stderr)
	}
}
