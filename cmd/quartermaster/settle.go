package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/acme/quartermaster/internal/shellword"
)

// commandFirst is args with the command typed after flags put first (and its verb after it): the
// first command word that is not the value of the flag before it (--policy check). Where every
// word before it is a flag of that command, with its value, the line is the command's, as if it
// came first; any other word is the command's to refuse, with the command kept in its example.
// Nil where args start with the command, or no command word follows the flags.
func commandFirst(args []string) []string {
	if len(args) == 0 || !strings.HasPrefix(args[0], "-") {
		return nil
	}
	for i, a := range args {
		if a == "--" {
			return nil
		}
		sc, ok := subcommands[a]
		if !ok || sc.flags == nil {
			continue
		}
		front := []string{a}
		fs := sc.flags()
		if _, ok := commandVerbs[a]; ok && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			front = append(front, args[i+1]) // its verb, or the word typed where the verb goes
			if f, ok := verbFlags[a][args[i+1]]; ok {
				fs = f()
			}
		}
		if isFlagValue(fs, args, i) {
			continue // --db report: the flag's value, not the command
		}
		return slices.Concat(front, args[:i], args[i+len(front):])
	}
	return nil
}

type checkingKey struct{}

// checking says whether ctx runs a command line only to check it, as settled does: the command
// refuses what it would refuse, and does nothing else.
func checking(ctx context.Context) bool { return ctx.Value(checkingKey{}) != nil }

// checkLine checks the command line args (the command first) without running it: a command whose
// run stops before it acts when checking (sc.checks) is run so; another's flags are parsed. It
// writes a refusal as run does, and exits as run would refuse it: 2, else 0.
func checkLine(ctx context.Context, args []string, sc subcommand, stdout, stderr io.Writer) int {
	var err error
	switch _, verbs := commandVerbs[args[0]]; {
	case sc.checks:
		err = commandLineError(ctx, args, sc, sc.run(ctx, args[1:], strings.NewReader(""), stdout, stderr))
	case sc.flags != nil:
		// The flags alone, as the command (or its verb, typed first) parses them.
		fs, command := sc.flags(), "quartermaster "+args[0]
		if verbs && len(args) > 1 {
			if f, ok := verbFlags[args[0]][args[1]]; ok {
				fs = f()
			}
			if slices.Contains(commandVerbs[args[0]].verbs, args[1]) {
				command += " " + args[1]
			}
		}
		fs.SetOutput(io.Discard)
		if _, perr := parseInterleaved(fs, args[1:]); perr != nil {
			err = flagMistake(fs, command, []string{"quartermaster", args[0]}, args[1:], perr)
		}
	}
	if _, ok := err.(errUsage); ok {
		fmt.Fprintf(stderr, "quartermaster %s: %s\n", args[0], clause(err.Error()))
		return 2
	}
	if err != nil {
		return 1
	}
	return 0
}

// settled is the refusal msg with its example (the quartermaster command line it ends with, after
// "e.g.") put right until typed back it is accepted (shellword.Settle): a misspelled flag renamed
// but its bad value kept, a misspelled command whose flag is empty.
func settled(ctx context.Context, msg string) string {
	if checking(ctx) {
		return msg
	}
	check := context.WithValue(ctx, checkingKey{}, true)
	return shellword.Settle(msg, "quartermaster", func(args []string) (string, bool) {
		var out, errb bytes.Buffer
		refused := run(check, args, strings.NewReader(""), &out, &errb) == 2
		return errb.String(), refused
	})
}
