package bot

import (
	"regexp"
	"strings"
)

// link is a URL as Slack and Discord link it in a message: from http:// or https:// up to a
// space, not ending in punctuation that closes the sentence around it.
var link = regexp.MustCompile(`https?://[^\s<]*[^\s<.,:;"')\]]`)

// MapProse applies f to the parts of s that are prose, leaving alone the code the commands put in
// a reply, code blocks (```…```) and code spans (`…` on one line), and links (a sign-in link's
// token may hold an _ or a - anywhere: the chat links the URL as written, so a changed mark in it
// would lead nowhere). Adapters use it to show what a user typed as typed, with no chat
// formatting, while the commands' code keeps its look and links still work. f is told whether
// its part begins a line.
func MapProse(s string, f func(prose string, lineStart bool) string) string {
	var b strings.Builder
	at := 0
	for _, p := range ProseParts(s) {
		b.WriteString(s[at:p.Start])
		b.WriteString(f(s[p.Start:p.End], p.LineStart))
		at = p.End
	}
	b.WriteString(s[at:])
	return b.String()
}

// Prose is a part of a text that is prose, as MapProse reads it: s[Start:End], and whether it
// may begin a line.
type Prose struct {
	Start, End int
	LineStart  bool
}

// ProseParts are the parts of s that are prose (see MapProse), in order: what MapProse gives f.
func ProseParts(s string) []Prose {
	var out []Prose
	lineStart := true
	emit := func(at, end int) {
		for at < end {
			loc := link.FindStringIndex(s[at:end])
			if loc == nil {
				out = append(out, Prose{at, end, lineStart})
				return
			}
			if loc[0] > 0 {
				out = append(out, Prose{at, at + loc[0], lineStart})
			}
			lineStart = false
			at += loc[1]
		}
	}
	at := 0
	for at < len(s) {
		open := strings.IndexByte(s[at:], '`')
		if open < 0 {
			emit(at, len(s))
			break
		}
		emit(at, at+open)
		rest := s[at+open:]
		end := -1
		if strings.HasPrefix(rest, "```") {
			if i := strings.Index(rest[3:], "```"); i >= 0 {
				end = 3 + i + 3
			}
		} else if i := strings.IndexAny(rest[1:], "`\n"); i >= 0 && rest[1+i] == '`' {
			end = 1 + i + 1
		}
		if end < 0 {
			// A backtick that opens no code: prose like the rest.
			emit(at+open, at+open+1)
			lineStart = false
			at += open + 1
			continue
		}
		lineStart = false
		at += open + end
	}
	return out
}
