package main

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/acme/quartermaster/internal/shellword"
)

// commandFirst is args (flags first) with the command typed after them put first: the first
// command word that is not the value of the flag before it (--node metrics). Where every word
// before it is a flag of that command, with its value, the line is the command's, as if it came
// first, as quartermaster takes it; any other word is the command's to refuse, with the command
// kept in its example. Not ok where no command word follows the flags.
func commandFirst(args []string) (moved []string, ok bool) {
	for i, a := range args {
		if a == "--" {
			return nil, false
		}
		if !slices.Contains(commands, a) {
			continue
		}
		if fs, _ := flagSet(a); i > 0 && strings.HasPrefix(args[i-1], "-") && !strings.Contains(args[i-1], "=") {
			if f := fs.Lookup(strings.TrimLeft(args[i-1], "-")); f != nil && !isBool(f) {
				continue // the flag's value, not the command
			}
		}
		return slices.Concat([]string{a}, args[:i], args[i+1:]), true
	}
	return nil, false
}

// typographicFlag is a flag written with a typographic dash (—fake, –-node=x), as a document
// pasted from may show it: the dashes, and the flag after them.
var typographicFlag = regexp.MustCompile(`^[-‐‑‒–—―−﹘﹣－]*[‐‑‒–—―−﹘﹣－][-‐‑‒–—―−﹘﹣－]*([A-Za-z][A-Za-z0-9-]*(?:=.*)?)$`)

// plainDashes is args with every flag written with a typographic dash written --NAME; ok where
// one was (before any --).
func plainDashes(args []string) (fixed []string, ok bool) {
	fixed = slices.Clone(args)
	for i, a := range fixed {
		if a == "--" {
			break
		}
		if m := typographicFlag.FindStringSubmatch(a); m != nil {
			fixed[i], ok = "--"+m[1], true
		}
	}
	return fixed, ok
}

type checkingKey struct{}

// checking says whether ctx runs a command line only to check it, as settled does: the agent
// refuses what it would refuse, reading its GPUs (or the fake), and reports and serves nothing.
func checking(ctx context.Context) bool { return ctx.Value(checkingKey{}) != nil }

// settled is the refusal msg with its example (the agent's command line it ends with, after
// "e.g.") put right until typed back it is accepted: where the example is refused in turn (a
// misspelled flag renamed but its bad value kept), the example of that refusal takes its place,
// so that one example puts every mistake on the line right.
func settled(ctx context.Context, msg string) string {
	if checking(ctx) {
		return msg
	}
	check := context.WithValue(ctx, checkingKey{}, true)
	seen := map[string]bool{}
	for range 6 {
		i := strings.LastIndex(msg, "e.g. quartermaster-agent ")
		if i < 0 {
			return msg
		}
		line := msg[i+len("e.g. "):]
		if seen[line] {
			return msg
		}
		seen[line] = true
		words := shellword.Split(line)
		if len(words) < 2 || words[0] != "quartermaster-agent" {
			return msg
		}
		var errb bytes.Buffer
		if run(check, words[1:], io.Discard, &errb) == 0 {
			return msg
		}
		refused := strings.TrimSpace(errb.String())
		j := strings.LastIndex(refused, "e.g. quartermaster-agent ")
		if j < 0 || strings.Contains(refused, "\n") {
			return msg
		}
		msg = msg[:i] + refused[j:]
	}
	return msg
}
