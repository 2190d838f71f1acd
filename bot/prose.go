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
	lineStart := true
	emit := func(prose string) {
		for prose != "" {
			at := link.FindStringIndex(prose)
			if at == nil {
				b.WriteString(f(prose, lineStart))
				return
			}
			if at[0] > 0 {
				b.WriteString(f(prose[:at[0]], lineStart))
			}
			b.WriteString(prose[at[0]:at[1]])
			lineStart = false
			prose = prose[at[1]:]
		}
	}
	if !strings.Contains(s, "`") {
		emit(s)
		return b.String()
	}
	for s != "" {
		open := strings.IndexByte(s, '`')
		if open < 0 {
			emit(s)
			break
		}
		emit(s[:open])
		rest := s[open:]
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
			emit(rest[:1])
			lineStart = false
			s = rest[1:]
			continue
		}
		b.WriteString(rest[:end])
		lineStart = false
		s = rest[end:]
	}
	return b.String()
}
