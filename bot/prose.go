package bot

import "strings"

// MapProse applies f to the parts of s that are prose, leaving alone the code the commands put in
// a reply: code blocks (```…```) and code spans (`…` on one line). Adapters use it to show what a
// user typed as typed, with no chat formatting, while the commands' code keeps its look. f is told
// whether its part begins a line.
func MapProse(s string, f func(prose string, lineStart bool) string) string {
	if !strings.Contains(s, "`") {
		return f(s, true)
	}
	var b strings.Builder
	lineStart := true
	emit := func(prose string) {
		if prose != "" {
			b.WriteString(f(prose, lineStart))
		}
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
