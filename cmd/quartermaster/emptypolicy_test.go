package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestConsoleAndServeRefuseAPolicyWithEmptyEntries: console and serve started on a policy with an
// empty class and an empty sim node group say what is wrong and exit; neither panics.
func TestConsoleAndServeRefuseAPolicyWithEmptyEntries(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"issue.yaml": "organization: X\nclasses:\n  -\nsim:\n nodes:\n - {}\n",
		"node.yaml":  "organization: X\nclasses: [{name: gpu, max_gpus: 1, max_duration: 1h}]\nsim:\n  nodes:\n  -\n  - {name: n, count: 1, class: gpu, gpus: 1}\n",
	} {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []string{"console", "serve"} {
			t.Run(name+"/"+cmd, func(t *testing.T) {
				t.Setenv("QM_DATA_DIR", t.TempDir())
				t.Setenv("QM_DATABASE_URL", "")
				var out, errb bytes.Buffer
				args := []string{cmd, "--policy", file}
				if cmd == "serve" {
					args = append(args, "--http", "127.0.0.1:0")
				}
				var code int
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("%s panicked: %v", cmd, r)
						}
					}()
					code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
				}()
				if code == 0 || !strings.Contains(errb.String(), "is empty; fill it in or remove its line") {
					t.Fatalf("%s exited %d; stderr:\n%s", cmd, code, errb.String())
				}
			})
		}
	}
}

// TestPolicyCheckNamesACostlyRuleAndWarnsOfLookAlikeGroups: policy check refuses the rule
// of seven nested exists over [1..30], naming it and its estimated cost; a valid policy's check
// names its costliest rule, and warns of a directory entry whose group only looks like a team.
func TestPolicyCheckNamesACostlyRuleAndWarnsOfLookAlikeGroups(t *testing.T) {
	src, err := os.ReadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var nums []string
	for i := 1; i <= 30; i++ {
		nums = append(nums, strconv.Itoa(i))
	}
	when := "v1 < 0"
	for d := 7; d >= 1; d-- {
		when = fmt.Sprintf("[%s].exists(v%d, %s)", strings.Join(nums, ","), d, when)
	}
	dir := t.TempDir()
	costly := filepath.Join(dir, "costly.yaml")
	if err := os.WriteFile(costly, []byte(strings.Replace(string(src), "exceptions:\n", "exceptions:\n  - name: seven-deep\n    when: \""+when+"\"\n", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI("policy", "check", costly)
	if code != 1 || !regexp.MustCompile(`exception rule "seven-deep" could cost up to \d{9,} to evaluate, over the limit of 100000`).MatchString(stderr) {
		t.Fatalf("policy check of a costly rule: exit %d, %s", code, stderr)
	}
	lookAlike := filepath.Join(dir, "lookalike.yaml")
	if err := os.WriteFile(lookAlike, []byte(strings.Replace(string(src), "directory:\n", "directory:\n  - {user: mallory@acme.example, groups: [Vision]}\n", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI("policy", "check", lookAlike)
	if code != 0 || !strings.Contains(stdout, `warning: `+lookAlike+`:`) || !strings.Contains(stdout, `directory entry mallory@acme.example: group "Vision" looks like the name of team vision`) ||
		!strings.Contains(stdout, "The costliest exception rule, contractor, is estimated at") {
		t.Fatalf("policy check of a look-alike group: exit %d\n%s%s", code, stdout, stderr)
	}
	// The console says the same at start, on standard error, before the chat.
	t.Setenv("QM_DATA_DIR", dir)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"console", "--policy", lookAlike}, strings.NewReader(""), &out, &errb); code != 0 ||
		!strings.Contains(errb.String(), `warning: `+lookAlike+`:`) || !strings.Contains(errb.String(), `group "Vision" looks like the name of team vision`) {
		t.Errorf("the console on a policy with warnings: exit %d, stderr %q", code, errb.String())
	}
}
