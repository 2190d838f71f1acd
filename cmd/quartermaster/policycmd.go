package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/acme/quartermaster/internal/config"
	"github.com/acme/quartermaster/internal/policy"
)

func init() {
	registerCommand("policy", subcommand{
		summary: "policy check [FILE]: validate a policy file and explain every error with its line",
		usage: "quartermaster policy check [FILE | --policy FILE]    (FILE defaults to QM_POLICY)\n" +
			"example: quartermaster policy check docs/quartermaster.example.yaml",
		flags: func() *flag.FlagSet {
			fs := flag.NewFlagSet("policy check", flag.ContinueOnError)
			fs.String("policy", "", "the policy file to check, also given alone after check; QM_POLICY when neither is (policy check has no default: it and serve need one)")
			return fs
		},
		run: runPolicy,
	})
}

const policyUsage = "usage: quartermaster policy check FILE; e.g. quartermaster policy check docs/quartermaster.example.yaml"

func runPolicy(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || (strings.HasPrefix(args[0], "-") && args[0] != "-") {
		var needs []string
		if len(args) == 0 && os.Getenv("QM_POLICY") == "" {
			needs = []string{"docs/quartermaster.example.yaml"}
		}
		err := needsVerb("policy", true, []string{"check"}, "check", args, needs)
		if u, ok := err.(errUsage); ok && len(args) > 0 && os.Getenv("QM_POLICY") == "" && !namesAFile(u.msg) {
			u.msg += " " + policy.ExamplePolicyPath // the file check needs, where the example gives none
			return u
		}
		return err
	}
	if args[0] != "check" {
		if !strings.HasPrefix(args[0], "-") && policy.EditDistance(strings.ToLower(args[0]), "check") <= 2 {
			rest := args[1:]
			if len(rest) == 0 && os.Getenv("QM_POLICY") == "" {
				rest = []string{"docs/quartermaster.example.yaml"}
			}
			return errUsage{fmt.Sprintf("%q is not a policy command; the nearest is check, e.g. %s", args[0], shellLine(append([]string{"quartermaster", "policy", "check"}, rest...)))}
		}
		example := []string{"check"}
		if os.Getenv("QM_POLICY") == "" {
			example = append(example, "docs/quartermaster.example.yaml")
		}
		if err := notAVerb("policy", args[0], []string{"check"}, args, example); err != nil {
			return err
		}
		return errUsage{policyUsage}
	}
	file := os.Getenv("QM_POLICY")
	// --policy given twice names the file given last, as every command reads a flag given twice.
	switch rest := onceEach(subcommands["policy"].flags(), args[1:]); {
	case len(rest) == 0:
	case len(rest) == 1 && strings.HasPrefix(rest[0], "--policy="):
		file = strings.TrimPrefix(rest[0], "--policy=")
	case len(rest) == 2 && (rest[0] == "--policy" || rest[0] == "-policy"):
		file = rest[1] // as every other command takes it
	case len(rest) == 1 && !strings.HasPrefix(rest[0], "-"):
		file = rest[0]
	default:
		return policyCheckMistake(rest)
	}
	if file == "" {
		return errUsage{"policy check needs a policy file, or QM_POLICY set, e.g. quartermaster policy check docs/quartermaster.example.yaml"}
	}
	// Checking a large policy takes a while (every rule is compiled, every name compared): it
	// runs aside, so that Ctrl-C or SIGTERM stops the check at once, with nothing printed but
	// that the file was not checked.
	type loaded struct {
		p   *policy.Policy
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		p, err := policy.LoadFile(file)
		if err == nil {
			withCatalogWarnings(p)
		}
		done <- loaded{p, err}
	}()
	var p *policy.Policy
	var err error
	select {
	case <-ctx.Done():
		return fmt.Errorf("%v: %s was not checked", context.Cause(ctx), file)
	case l := <-done:
		p, err = l.p, l.err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%v: %s was not checked", context.Cause(ctx), file)
	}
	if err != nil {
		var pe *policy.Error
		if errors.As(err, &pe) {
			fmt.Fprintln(stderr, pe.Error())
			return fmt.Errorf("%s is not valid", file)
		}
		return err
	}
	fmt.Fprintf(stdout, "%s is valid: %s, %s, %s, backend %s.\n", file, policy.Count(len(p.Classes), "class", "classes"),
		policy.Count(len(p.Teams), "team", "teams"), policy.Count(len(p.Exceptions), "exception rule", "exception rules"), p.Backend)
	warnings := p.Warnings
	if discordAlone() {
		warnings = append(slices.Clone(warnings), p.DiscordOnly...)
		slices.SortStableFunc(warnings, func(a, b policy.Problem) int { return a.Line - b.Line })
	}
	for _, w := range warnings {
		fmt.Fprintf(stdout, "warning: %s:%d: %s\n", file, w.Line, w.Msg)
	}
	if len(p.Exceptions) > 0 {
		costliest := p.Exceptions[0]
		for _, r := range p.Exceptions {
			if r.Cost > costliest.Cost {
				costliest = r
			}
		}
		fmt.Fprintf(stdout, "The costliest exception rule, %s, is estimated at %d of the %d a rule may cost.\n", costliest.Name, costliest.Cost, uint64(policy.RuleCostLimit))
	}
	return nil
}

// discordAlone reports whether the environment sets Discord up without Slack: then Discord's
// is the only way to a channel, and a team channel it cannot post to is worth a warning.
func discordAlone() bool {
	set := func(name string) bool { return os.Getenv(name) != "" || os.Getenv(name+config.FileSuffix) != "" }
	return set("DISCORD_BOT_TOKEN") && !set("SLACK_BOT_TOKEN")
}

// policyCheckMistake says what is wrong with policy check's words past check: a flag it does not
// take (it takes the file alone, or --policy FILE), named with the one meant where it is near, and
// the command put right as the example; else the usage.
func policyCheckMistake(rest []string) error {
	for i, a := range rest {
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "policy" {
			if !hasValue && i+1 == len(rest) {
				return errUsage{"--policy needs a value, e.g. " + shellLine(append([]string{"quartermaster", "policy", "check"}, append(rest, "docs/quartermaster.example.yaml")...))}
			}
			continue
		}
		// The word after the flag is its value, left out with it: where it is another command's
		// flag that takes one (--db x), or the file is given besides; else it is the file.
		n := 1
		if !hasValue && i+1 < len(rest) && !strings.HasPrefix(rest[i+1], "-") {
			f := flagElsewhere(name)
			besides := slices.Concat(rest[:i], rest[i+2:])
			if rest[i+1] == "" || (f != nil && !boolFlag(f)) || (f == nil && (policyIn(besides) != "" || wordsOf(subcommands["policy"].flags(), nil, besides) > 0)) {
				n = 2
			}
		}
		others := slices.Concat(rest[:i], rest[i+n:])
		if near := nearFlag(name, []string{"policy"}); near != "" {
			others = slices.Concat(rest[:i], rest[i+1:])
			if hasValue {
				others = append([]string{value}, others...)
			}
			return errUsage{fmt.Sprintf("--%s is not a flag of quartermaster policy check; the nearest is --policy, e.g. %s", name,
				shellLine(append([]string{"quartermaster", "policy", "check", "--policy"}, others...)))}
		}
		if len(others) == 0 {
			others = []string{"docs/quartermaster.example.yaml"}
		}
		return errUsage{fmt.Sprintf("--%s is not a flag of quartermaster policy check, which takes the file alone (or --policy FILE), e.g. %s", name,
			shellLine(append([]string{"quartermaster", "policy", "check"}, others...)))}
	}
	// One file too many: the first is checked, as typed.
	var files []string
	for i := 0; i < len(rest); i++ {
		switch a := rest[i]; {
		case a == "--policy" || a == "-policy":
			i++
		case !strings.HasPrefix(a, "-") || a == "-":
			files = append(files, a)
		}
	}
	if len(files) > 1 || (len(files) == 1 && policyIn(rest) != "") {
		extra := files[len(files)-1]
		fixed := slices.Clone(rest)
		if i := slices.Index(fixed, extra); i >= 0 && (i == 0 || (fixed[i-1] != "--policy" && fixed[i-1] != "-policy")) {
			fixed = slices.Delete(fixed, i, i+1)
		} else if i := slices.Index(fixed, files[0]); i >= 0 {
			fixed = slices.Delete(fixed, i, i+1)
		}
		return errUsage{fmt.Sprintf("policy check takes one policy file, but got %q too; e.g. %s", extra, shellLine(append([]string{"quartermaster", "policy", "check"}, fixed...)))}
	}
	return errUsage{policyUsage}
}

// shellLine is words as one shell command line, each quoted as shellWord does.
func shellLine(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = shellWord(w)
	}
	return strings.Join(out, " ")
}

// namesAFile says whether the example a refusal of policy check ends with (after e.g.) gives
// the file to check: a word after check, or --policy.
func namesAFile(msg string) bool {
	_, eg, ok := strings.Cut(msg, "e.g. quartermaster policy check")
	if !ok {
		return true
	}
	for _, w := range strings.Fields(eg) {
		if !strings.HasPrefix(w, "-") || strings.HasPrefix(strings.TrimLeft(w, "-"), "policy") {
			return true
		}
	}
	return false
}
