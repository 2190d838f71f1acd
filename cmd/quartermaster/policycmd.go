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
	"github.com/acme/quartermaster/internal/nfc"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/shellword"
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
		run:    runPolicy,
		checks: true, // it only reads the file
	})
}

const policyUsage = "usage: quartermaster policy check FILE; e.g. quartermaster policy check " + policy.ExamplePolicyPath

// policyCheckFile is the file policy check checks, read from args (the words after check) as every
// command reads its command line: the file alone, or --policy FILE (given twice, the last), else
// QM_POLICY. A mistake is refused in the words every command's is (flagMistakeIn, refusal), with
// args put right as the example, which names the example policy where it must name a file.
func policyCheckFile(args []string) (string, error) {
	fs := subcommands["policy"].flags()
	fs.SetOutput(io.Discard)
	file := fs.Lookup("policy")
	line := []string{"quartermaster", "policy", "check"}
	// The file an example names where the command line gives none and QM_POLICY is not set.
	examples := map[string]string{"policy": policy.ExamplePolicyPath}
	if len(flagPlaces(fs, args, "policy")) == 0 && os.Getenv("QM_POLICY") == "" {
		examples[""] = policy.ExamplePolicyPath
	}
	words, err := parseInterleaved(fs, args)
	if err != nil {
		if strings.HasPrefix(err.Error(), "flag needs an argument: -policy") {
			// --policy given last without its value: the value typed for it before, else the
			// file typed alone, is the one meant.
			if typed := fileWords(fs, args); len(typed) > 0 && !policyValued(fs, args) {
				examples["policy"] = typed[0]
				args = withoutWords(fs, args, typed[:1])
			}
		}
		return "", flagMistakeIn(fs, "quartermaster policy check", line, args, examples, err)
	}
	if slices.Contains(words, "") {
		// policy check "" (a variable that was not set): left out, the file it needs put in.
		fixed := withoutWords(fs, args, []string{""})
		if len(fileWords(fs, fixed)) == 0 && file.Value.String() == "" && os.Getenv("QM_POLICY") == "" {
			fixed = append(fixed, policy.ExamplePolicyPath)
		}
		return "", refusal("the policy file's name is empty", "policy", append([]string{"check"}, fixed...))
	}
	switch {
	case len(words) > 1:
		return "", refusal(fmt.Sprintf("policy check takes one policy file, but got %q too", words[1]), "policy",
			append([]string{"check"}, withoutWords(fs, args, words[1:])...))
	case len(words) == 1 && file.Value.String() != "":
		return "", refusal(fmt.Sprintf("policy check takes one policy file, but got %q too", words[0]), "policy",
			append([]string{"check"}, withoutWords(fs, args, words)...))
	case len(words) == 1:
		return words[0], nil
	case file.Value.String() != "":
		return file.Value.String(), nil
	case os.Getenv("QM_POLICY") != "":
		return os.Getenv("QM_POLICY"), nil
	}
	return "", refusal("policy check needs a policy file, or QM_POLICY set", "policy", append(append([]string{"check"}, args...), policy.ExamplePolicyPath))
}

// fileWords are the words of args (policy check's, read by fs) that are neither a flag nor a
// flag's value: the files typed alone.
func fileWords(fs *flag.FlagSet, args []string) []string {
	var words []string
	for i, a := range args {
		if a == "--" {
			return append(words, args[i+1:]...)
		}
		if (!strings.HasPrefix(a, "-") || a == "-") && !isFlagValue(fs, args, i) {
			words = append(words, a)
		}
	}
	return words
}

// policyValued says whether args give --policy a value somewhere.
func policyValued(fs *flag.FlagSet, args []string) bool {
	for _, p := range flagPlaces(fs, args, "policy") {
		if p.n == 2 || strings.Contains(args[p.i], "=") {
			return true
		}
	}
	return false
}

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
			return errUsage{fmt.Sprintf("%q is not a policy command; the nearest is check, e.g. %s", args[0], shellword.Join(append([]string{"quartermaster", "policy", "check"}, rest...)))}
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
	file, err := policyCheckFile(args[1:])
	if err != nil {
		return err
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
		p, err := policy.LoadFile(file, nfc.Name)
		if err == nil {
			withCatalogWarnings(p)
		}
		done <- loaded{p, err}
	}()
	var p *policy.Policy
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
