// Package shellword writes and reads command lines as a POSIX shell does, for the examples the
// command-line tools end a refusal with: each word as it is where a shell takes every character
// literally, else in single quotes.
package shellword

import (
	"regexp"
	"slices"
	"strings"
)

// Quote is s as one word of a shell command line: as it is where every character is one a shell
// takes literally, else in single quotes (a PostgreSQL URL's ? and &, a space in a path, and an
// empty word, which would otherwise drop out of the line).
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%_+=:,./-", r)) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}

// Join is words as one shell command line, each quoted as Quote does.
func Join(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = Quote(w)
	}
	return strings.Join(out, " ")
}

// Split splits a command line as a shell does for the quoting Quote writes: bare words, and
// single-quoted words (in which a quote is written as a closing quote, a backslash and the quote,
// and an opening quote; an empty word as two quotes).
func Split(line string) []string {
	var out []string
	var cur strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			cur.WriteByte(c)
		case c == '\'':
			quoted, inWord = true, true
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord = true
		case c == ' ':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

// typographicFlag is a flag written with a typographic dash (—db, –-week=x), as a document pasted
// from may show it: the dashes, and the flag after them.
var typographicFlag = regexp.MustCompile(`^[-‐‑‒–—―−﹘﹣－]*[‐‑‒–—―−﹘﹣－][-‐‑‒–—―−﹘﹣－]*([A-Za-z][A-Za-z0-9-]*(?:=.*)?)$`)

// PlainDashes is args with every flag written with a typographic dash written --NAME; ok where
// one was (before any --).
func PlainDashes(args []string) (fixed []string, ok bool) {
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

// Settle is the refusal msg with its example (the command line of prog it ends with, after
// "e.g.") put right until typed back it is accepted: check runs a line's words after prog without
// acting and says what it refuses; where the example is refused in turn (a misspelled flag renamed
// but its bad value kept), the example of that refusal takes its place, so that one example puts
// every mistake on the line right. msg is as it is where its example is accepted, or is none; it
// is put right six times at most, and never back to an example already tried.
func Settle(msg, prog string, check func(args []string) (refusal string, refused bool)) string {
	mark := "e.g. " + prog + " "
	seen := map[string]bool{}
	for range 6 {
		i := strings.LastIndex(msg, mark)
		if i < 0 {
			return msg
		}
		line := msg[i+len("e.g. "):]
		if seen[line] {
			return msg
		}
		seen[line] = true
		words := Split(line)
		if len(words) < 2 || words[0] != prog {
			return msg
		}
		refusal, refused := check(words[1:])
		if !refused {
			return msg
		}
		refusal = strings.TrimSpace(refusal)
		j := strings.LastIndex(refusal, mark)
		if j < 0 || strings.Contains(refusal, "\n") {
			return msg
		}
		msg = msg[:i] + refusal[j:]
	}
	return msg
}
