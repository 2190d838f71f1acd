package main

import (
	"flag"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// splitShell splits a command line as a shell would for the simple quoting the agent's examples
// use: words, and 'single-quoted' words.
func splitShell(s string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`'([^']*)'|(\S+)`).FindAllStringSubmatch(s, -1) {
		out = append(out, m[1]+m[2])
	}
	return out
}

// A mistake the flag package would answer in its own words (a number that is not one, a flag
// without its value, a flag no command or another command has, a stray word, a command after the
// flags) gets one sentence that says what was given and what to give, and its example, typed
// back, works.
func TestFlagMistakesGetASentenceAndAnExampleThatWorks(t *testing.T) {
	needFake(t)
	for _, c := range []struct {
		args []string
		want string // the start of the sentence
	}{
		{[]string{"metrics", "--fake", "dgxa100", "--labels", "camel"}, `--labels is dcgm or snake, not "camel"`},
		{[]string{"run", "--fake", "dgxa100", "--listen", "127.0.0.1:0", "--window", "ten"}, `--window "ten" is not a whole number`},
		{[]string{"metrics", "--fake", "dgxh100", "--node"}, `--node needs a value`},
		{[]string{"gres-conf", "--fake", "dgxa100", "--with-nodename=maybe"}, `--with-nodename is true or false, not "maybe"`},
		{[]string{"metrics", "--fake", "dgxa100", "--service", "https://qm.example.com"}, `--service is a flag of run, not of metrics`},
		{[]string{"topology", "--fake", "dgxa100", "--frobnicate"}, `there is no flag --frobnicate`},
		// A misspelled command or flag is named with the one meant, the rest kept, in the example.
		{[]string{"metrcs", "--fake", "dgxa100"}, `there is no command "metrcs"; the nearest is metrics, e.g. quartermaster-agent metrics --fake dgxa100`},
		// One asked help for is named as help's: the example asks help for the one meant.
		{[]string{"help", "gres-con"}, `there is no command "gres-con"; the nearest is gres-conf, e.g. quartermaster-agent help gres-conf`},
		{[]string{"help", "nonesuch"}, `there is no command "nonesuch"; use run, metrics, gres-conf, topology or version, e.g. quartermaster-agent help run`},
		{[]string{"metrics", "--fake", "dgxa100", "--nod", "reef-01"}, "there is no flag --nod; the nearest is --node, e.g. quartermaster-agent metrics --fake dgxa100 --node reef-01"},
		{[]string{"metrics", "--fake", "dgxh100", "--lables=snake"}, "there is no flag --lables; the nearest is --labels, e.g. quartermaster-agent metrics --fake dgxh100 --labels=snake"},
		// A flag misspelled before the command: the command's, put right with the command first.
		{[]string{"--fake", "dgxa100", "--lables", "snake", "metrics"}, "there is no flag --lables; the nearest is --labels, e.g. quartermaster-agent metrics --fake dgxa100 --labels snake"},
		{[]string{"metrics", "--fake", "dgxh100", "now", "--fake-util", "0 85; * 0"}, `metrics takes flags only, not "now"`},
		// A negative number after a flag is its value, left out with it, not a word left behind.
		{[]string{"metrics", "--fake", "dgxa100", "--window", "-3"}, `--window is a flag of run, not of metrics; leave it out, e.g. quartermaster-agent metrics --fake dgxa100`},
		{[]string{"metrics", "--fake", "dgxa100", "--gpus", "-3"}, `there is no flag --gpus; ` + "`quartermaster-agent metrics --help`" + ` lists the flags of metrics, e.g. quartermaster-agent metrics --fake dgxa100`},
	} {
		code, stderr := runWithin(c.args, 2*time.Second)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != 2 || !strings.HasPrefix(first, "quartermaster-agent: "+c.want) || strings.Contains(strings.ReplaceAll(first, "e.g. ", ""), ". ") {
			t.Errorf("%q: exit %d, first line %q; want exit 2 and %q", c.args, code, first, c.want)
			continue
		}
		_, example, ok := strings.Cut(first, "e.g. ")
		if !ok {
			t.Errorf("%q: no example in %q", c.args, first)
			continue
		}
		args := splitShell(example)
		if args[0] == "quartermaster-agent" {
			args = args[1:] // a whole command line
		} else {
			// A flag and its value, put in place of the one given.
			args = fixFlag(c.args, args)
		}
		if code, stderr := runWithin(args, time.Second); code != 0 {
			t.Errorf("%q: the example %q does not work: exit %d, stderr %q", c.args, args, code, stderr)
		}
	}
}

// fixFlag puts the example flag (and value) in place of the same flag in args.
func fixFlag(args, example []string) []string {
	name, _, _ := strings.Cut(example[0], "=")
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if n, _, _ := strings.Cut(a, "="); n == name {
			if !strings.Contains(a, "=") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
			}
			continue
		}
		out = append(out, a)
	}
	return append(out, example...)
}

// Every flag of every command that takes a value has an example value for "--FLAG needs a value",
// so no such sentence ends in an empty example.
func TestEveryFlagHasAnExampleValue(t *testing.T) {
	for _, cmd := range commands {
		fs, _ := flagSet(cmd)
		fs.VisitAll(func(f *flag.Flag) {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				return
			}
			code, stderr := runWithin([]string{cmd, "--" + f.Name}, time.Second)
			first, _, _ := strings.Cut(stderr, "\n")
			if code != 2 || strings.HasSuffix(strings.TrimSpace(first), "--"+f.Name) || strings.HasSuffix(first, " ") {
				t.Errorf("%s --%s without a value: exit %d, %q", cmd, f.Name, code, first)
			}
		})
	}
}

// A /metrics address whose port is no port (negative, past 65535, not a number) is a usage error
// found before the GPUs are opened, as an address without a port is: not a failure to listen
// answered with "give a free port".
func TestListenPortOutOfRangeIsAUsageError(t *testing.T) {
	needFake(t)
	for _, addr := range []string{":-1", ":99999", "127.0.0.1:65536", ":x9"} {
		code, stderr := runWithin([]string{"run", "--fake", "dgxa100", "--listen", addr}, 2*time.Second)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != 2 || !strings.HasPrefix(first, fmt.Sprintf("quartermaster-agent: --listen %q", addr)) || !strings.HasSuffix(first, "e.g. "+commandLine("run", []string{"--fake", "dgxa100", "--listen", ":9400"})) || strings.Contains(stderr, "running on a fake machine") {
			t.Errorf("--listen %s: exit %d, %q; want exit 2 and a sentence about --listen before the GPUs are opened", addr, code, stderr)
		}
	}
}
