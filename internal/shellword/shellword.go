// Package shellword writes and reads command lines as a POSIX shell does, for the examples the
// command-line tools end a refusal with: each word as it is where a shell takes every character
// literally, else in single quotes.
package shellword

import "strings"

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
