package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// A flag given an empty value (--db= or --db "") is refused for every flag of every command, in
// one sentence naming the flag, with the command as typed and the flag given a value (or left out)
// as its example, and leaves no file behind; never taken as if the flag had not been given. Each
// line runs as the built binary in a directory of its own (runBinary), so that the test runs in
// parallel with others and its commands without the race detector.
func TestAFlagWithAnEmptyValueIsRefusedForEveryCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	verbs := map[string][]string{"agent-token": {"list"}, "migrate": {"up"}, "discord": {"register"},
		"policy": {"check"}, "predict": {"eval"}, "templates": {"list"}}
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	tried := 0
	for _, name := range names {
		sc := subcommands[name]
		if sc.flags == nil {
			continue
		}
		sc.flags().VisitAll(func(f *flag.Flag) {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				return
			}
			for _, given := range [][]string{{"--" + f.Name + "="}, {"--" + f.Name, ""}} {
				tried++
				args := append(append([]string{name}, verbs[name]...), given...)
				line := strings.Join(args, " ")
				code, stdout, stderr := runBinary(t, dir, []string{"QM_POLICY="}, args...)
				msg := strings.TrimSpace(stderr)
				if code != 2 || stdout != "" || strings.Contains(msg, "\n") {
					t.Errorf("quartermaster %s: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and one sentence", line, code, stdout, stderr)
					continue
				}
				want := "--" + f.Name + " is empty"
				eg := "e.g. quartermaster " + strings.Join(append([]string{name}, verbs[name]...), " ")
				if !strings.Contains(msg, want) || !strings.Contains(msg, eg) {
					t.Errorf("quartermaster %s: %s\nwant %q and an example starting %q", line, msg, want, eg)
				}
				if entries, _ := os.ReadDir(dir); len(entries) > 0 {
					t.Errorf("quartermaster %s left %s behind", line, entries[0].Name())
					for _, e := range entries {
						os.RemoveAll(filepath.Join(dir, e.Name()))
					}
				}
			}
		})
	}
	if tried < 20 {
		t.Fatalf("only %d flags tried; the commands' flags are not all walked", tried)
	}
}

// A number or duration flag given a word is refused in one sentence that says what the flag takes
// and gives an example, for every such flag of every command; never the flag package's words
// ("invalid value", "parse error") or strconv's.
func TestANumberFlagGivenAWordIsOneSentenceForEveryCommand(t *testing.T) {
	t.Setenv("QM_POLICY", "")
	t.Chdir(t.TempDir())
	verbs := map[string][]string{"agent-token": {"list"}, "migrate": {"up"}, "discord": {"register"},
		"policy": {"check"}, "predict": {"eval"}, "templates": {"render", "pytorch-ddp"}}
	tried := 0
	for name, sc := range subcommands {
		if sc.flags == nil {
			continue
		}
		sc.flags().VisitAll(func(f *flag.Flag) {
			typ := fmt.Sprintf("%T", f.Value)
			if !strings.Contains(typ, "int") && !strings.Contains(typ, "float") && !strings.Contains(typ, "duration") {
				return
			}
			tried++
			args := append(append([]string{name}, verbs[name]...), "--"+f.Name, "x")
			code, _, stderr := runQM(args...)
			msg := strings.TrimSpace(stderr)
			if code != 2 || strings.Contains(msg, "\n") || strings.Contains(msg, "parse error") || strings.Contains(msg, "invalid value") ||
				strings.Contains(msg, "strconv") || !strings.Contains(msg, "e.g. quartermaster "+name) {
				t.Errorf("quartermaster %s: exit %d:\n%s\nwant exit 2 and one sentence with an example", strings.Join(args, " "), code, stderr)
			}
		})
	}
	if tried == 0 {
		t.Fatal("no number or duration flag was tried")
	}
}
