package workload_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/acme/quartermaster/internal/workload"
)

func TestOutputTail(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"last lines", "a\nb\nc\nd\n", "c\nd"},
		{"blank lines skipped", "a\n\n\nb\n   \n", "a\nb"},
		{"progress bar keeps its last state", "x\nloading 10%\rloading 50%\rloading 100%\r\n", "x\nloading 100%"},
		{"colours and control characters go", "\x1b[1;31merror:\x1b[0m\tno\x07 such file\x00\n", "error: no such file"},
		{"invalid UTF-8 replaced", "caf\xe9\n", "caf\uFFFD"},
		{"long line clipped", strings.Repeat("x", 250) + "\n", strings.Repeat("x", 200) + "…"},
		{"nothing", "", ""},
	} {
		if got := workload.OutputTail(c.in, 2); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// FuzzOutputTail: whatever a job prints, the tail has at most n lines of valid UTF-8 without
// control characters, and a bounded length.
func FuzzOutputTail(f *testing.F) {
	f.Add("hello\nworld\n", 3)
	f.Add("\x1b[31mred\x1b[0m\r\n\t\xff\xfe", 1)
	f.Fuzz(func(t *testing.T, in string, n int) {
		n = n % 20
		out := workload.OutputTail(in, n)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8: %q", out)
		}
		if lines := strings.Count(out, "\n") + 1; out != "" && lines > n {
			t.Fatalf("%d lines, want at most %d", lines, n)
		}
		if utf8.RuneCountInString(out) > 1501 {
			t.Fatalf("%d runes", utf8.RuneCountInString(out))
		}
		for _, r := range out {
			if r != '\n' && unicode.IsControl(r) {
				t.Fatalf("control character %U in %q", r, out)
			}
		}
	})
}
