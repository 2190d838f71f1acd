package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryCommandNamesEachMistakeOfAPolicyAtOnce: a policy with a max_gpus of two, or with
// clases: for classes, was refused naming only that mistake, by policy check and by the console
// and serve at start, so a mistyped timezone and a team's channel without # came to light one
// run later. Each command names every mistake, in the same sentences, and console and serve
// still refuse to start.
func TestEveryCommandNamesEachMistakeOfAPolicyAtOnce(t *testing.T) {
	b, err := os.ReadFile("../../commands/testdata/stjohns.yaml")
	if err != nil {
		t.Fatal(err)
	}
	others := strings.NewReplacer("timezone: America/St_Johns", "timezone: America/St_John", `channel: "#zoë"`, `channel: "zoë"`)
	both := []string{
		`:6: timezone "America/St_John" is unknown; did you mean America/St_Johns? e.g. timezone: America/St_Johns`,
		`:50: team zoe-lab: channel "zoë" must start with #; e.g. channel: "#zoe-lab-gpu"`,
	}
	dir := t.TempDir()
	for name, c := range map[string]struct {
		old, new string
		want     []string
		not      string
	}{
		"wrongkind.yaml": {"max_gpus: 4", "max_gpus: two", []string{`:25: class h200-sxm: max_gpus must be a whole number, not "two"; e.g. max_gpus: 2`}, "at least 1"},
		"clases.yaml":    {"classes:\n", "clases:\n", []string{`:7: the policy has no key clases; did you mean classes?`}, "catalog"},
	} {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(others.Replace(strings.Replace(string(b), c.old, c.new, 1))), 0o600); err != nil {
			t.Fatal(err)
		}
		want := append(append([]string{}, c.want...), both...)
		for _, cmd := range []string{"policy", "console", "serve"} {
			t.Run(name+"/"+cmd, func(t *testing.T) {
				t.Setenv("QM_DATA_DIR", t.TempDir())
				t.Setenv("QM_DATABASE_URL", "")
				args := []string{cmd, "--policy", file}
				switch cmd {
				case "policy":
					args = []string{"policy", "check", file}
				case "serve":
					args = append(args, "--http", "127.0.0.1:0")
				}
				var out, errb bytes.Buffer
				code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
				said := out.String() + errb.String()
				if code == 0 {
					t.Fatalf("%s exited 0 on %s:\n%s", cmd, name, said)
				}
				for _, w := range want {
					if !strings.Contains(said, file+w) {
						t.Errorf("%s does not say %q:\n%s", cmd, file+w, said)
					}
				}
				if strings.Contains(said, c.not) {
					t.Errorf("%s names a problem that follows from %s alone:\n%s", cmd, c.new, said)
				}
			})
		}
	}
}
