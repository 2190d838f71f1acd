package workload

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of OutputTail.
const (
	// OutputLines is how many of a failed workload's last output lines its owner is shown.
	OutputLines = 10
	// outputLineRunes clips each line; outputRunes clips the whole.
	outputLineRunes = 200
	outputRunes     = 1500
)

// OutputTail is the last n non-empty lines of a workload's output, made fit for a chat message:
// carriage-return progress bars keep their last state, terminal escapes and other control
// characters go, invalid UTF-8 is replaced, long lines are clipped. It shows only what the job
// itself printed.
func OutputTail(out string, n int) string {
	if n <= 0 {
		return ""
	}
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if i := strings.LastIndexByte(strings.TrimRight(l, "\r"), '\r'); i >= 0 {
			l = l[i+1:] // a progress bar redrawn with \r: its last state
		}
		l = strings.TrimRightFunc(cleanLine(l), unicode.IsSpace)
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	s := strings.Join(lines, "\n")
	if utf8.RuneCountInString(s) > outputRunes {
		r := []rune(s)
		s = "…" + string(r[len(r)-outputRunes:])
	}
	return s
}

// cleanLine drops terminal escape sequences and control characters (tabs become spaces) and
// clips the line.
func cleanLine(l string) string {
	var b strings.Builder
	runes := 0
	for i := 0; i < len(l); {
		r, size := utf8.DecodeRuneInString(l[i:])
		if r == 0x1b { // ESC [ … final byte: a terminal escape (colours, cursor moves)
			j := i + 1
			if j < len(l) && l[j] == '[' {
				j++
				for j < len(l) && (l[j] < 0x40 || l[j] > 0x7e) {
					j++
				}
				j++
			}
			i = min(j, len(l))
			continue
		}
		i += size
		switch {
		case r == '\t':
			r = ' '
		case r == utf8.RuneError && size <= 1:
			r = '\uFFFD'
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			continue
		}
		if runes == outputLineRunes {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		runes++
	}
	return b.String()
}
