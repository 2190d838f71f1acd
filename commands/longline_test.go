package commands

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// A command line of 100 KB is refused in one sentence that says how long a command may be, with
// an example that works, whatever it holds: padding after a command that would run, a reason, a
// template's parameter, a team name. Nothing is made.
func TestAHundredKilobyteCommandIsRefusedInOneSentence(t *testing.T) {
	h := templatesOn(t, otherPolicy)
	rita := "rita@borealis.example"
	pad := strings.Repeat(" ", 100<<10)
	for _, line := range []string{
		"/gpu request 1 dev for 1h" + pad,
		pad + "/gpu list",
		"/gpu quota request +1 dev for 1d because " + strings.Repeat("need it ", 100<<10/8),
		"/gpu submit cuda-smoke note=" + strings.Repeat("x", 100<<10),
		"/gpu request 1 dev for 1h team " + strings.Repeat(`"r `, 100<<10/3),
		"/gpu deny L-1 " + strings.Repeat(`'a `, 100<<10/3),
	} {
		refusedWithAWorkingExample(t, h, rita, line, "characters long")
	}
	// The longest line that is read is read as any other.
	line := "/gpu list" + strings.Repeat(" ", MaxCommand-utf8.RuneCountInString("/gpu list"))
	if r := h.say(rita, line); r.Error {
		t.Errorf("a command of %d characters: %s", MaxCommand, r.Text)
	}
}

// A line of many quotes that are never closed splits into its words, each quote kept as written
// (the splitting looks for a closing quote once, not from every word: docs/benchmarks.md).
func TestWordsOfQuotesThatAreNeverClosed(t *testing.T) {
	for _, q := range []string{`"`, `'`, "\u201c", "k=\""} {
		line := strings.Repeat(q+"a ", 200000)
		if n := len(words(line)); n != 200000 {
			t.Fatalf("%q: %d words", q, n)
		}
	}
	for line, want := range map[string][]string{
		`deny L-1 "a b" c`:        {"deny", "L-1", `"a b"`, "c"},
		`"a "b c" d`:              {`"a "b c"`, "d"},
		`k="x y" 'p q' "`:         {"k=x y", "'p q'", `"`},
		`"a' b' c"`:               {`"a' b' c"`},
		`'x 'y' z`:                {"'x 'y'", "z"},
		"\u201ca b\u201d \u2018c": {`"a b"`, "'c"},
		`a="b" "`:                 {"a=b", `"`},
		`"" x`:                    {`""`, "x"},
	} {
		if got := words(line); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("words(%q) = %q, want %q", line, got, want)
		}
	}
}

// BenchmarkWordsOfQuotesThatAreNeverClosed splits lines of 10,000 and 100,000 unclosed quotes:
// ten times the line, about ten times the time (docs/benchmarks.md).
func BenchmarkWordsOfQuotesThatAreNeverClosed(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		line := strings.Repeat(`"a `, n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				words(line)
			}
		})
	}
}
