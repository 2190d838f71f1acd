package policy

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// A policy file with a byte that is no UTF-8 (saved as Latin-1 or Windows-1252 by an editor) is
// refused in one sentence naming the line, column and byte offset of the first such byte and
// saying to save the file as UTF-8, rather than with the YAML parser's "invalid leading UTF-8
// octet" and no line. The same file saved as UTF-8 loads.
func TestInvalidUTF8IsNamedWithItsLine(t *testing.T) {
	good, err := os.ReadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(good), "\n")
	for _, c := range []struct {
		line   int    // 1-based line the bad byte goes on
		prefix string // written before it on that line
		bad    string
	}{
		{3, "# Zoë's note: caf", "\xe9"},         // é in Latin-1, after a multibyte character
		{len(lines) - 1, "# r\u00e9sum", "\xff"}, // a byte that starts nothing
		{1, "# ", "\x80"},                        // a continuation byte alone
	} {
		before := strings.Join(lines[:c.line-1], "")
		after := "\n" + strings.Join(lines[c.line-1:], "")
		_, err := Load([]byte(before+c.prefix+c.bad+after), "p.yaml")
		if err == nil {
			t.Fatalf("a file with byte %q on line %d loaded", c.bad, c.line)
		}
		pe, ok := err.(*Error)
		if !ok || len(pe.Problems) != 1 {
			t.Fatalf("byte %q on line %d: %v", c.bad, c.line, err)
		}
		pr := pe.Problems[0]
		col := len([]rune(c.prefix)) + 1
		offset := len(before) + len(c.prefix)
		if pr.Line != c.line || strings.Contains(pr.Msg, "octet") || !strings.Contains(pr.Msg, "save the file as UTF-8") ||
			!strings.Contains(pr.Msg, "column "+strconv.Itoa(col)) || !strings.Contains(pr.Msg, "byte offset "+strconv.Itoa(offset)) || strings.Contains(pr.Msg, ". ") {
			t.Errorf("byte %q on line %d column %d (offset %d): line %d, %q", c.bad, c.line, col, offset, pr.Line, pr.Msg)
		}
		if _, err := Load([]byte(before+c.prefix+"\u00e9"+after), "p.yaml"); err != nil {
			t.Errorf("saved as UTF-8 it does not load: %v", err)
		}
	}
}
