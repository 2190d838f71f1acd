package main

import (
	"bytes"
	"context"
	"io"
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

type checkingKey struct{}

// checking says whether ctx runs a command line only to check it, as settled does: the agent
// refuses what it would refuse, reading its GPUs (or the fake), and reports and serves nothing.
func checking(ctx context.Context) bool { return ctx.Value(checkingKey{}) != nil }

// settled is the refusal msg with its example (the agent's command line it ends with, after
// "e.g.") put right until typed back it is accepted (shellword.Settle).
func settled(ctx context.Context, msg string) string {
	if checking(ctx) {
		return msg
	}
	check := context.WithValue(ctx, checkingKey{}, true)
	return shellword.Settle(msg, "quartermaster-agent", func(args []string) (string, bool) {
		var errb bytes.Buffer
		refused := run(check, args, io.Discard, &errb) != 0
		return errb.String(), refused
	})
}
