package shellword

import (
	"slices"
	"testing"
)

// Every word comes back from the line Join writes as it was, quotes, spaces, a PostgreSQL URL and
// an empty word included, and a word a shell takes literally is written bare.
func TestJoinThenSplitGivesTheWordsBack(t *testing.T) {
	words := []string{"quartermaster", "report", "--db", "postgres://u@h/db?sslmode=disable&x=1", "--team", "", "it's", "a b", "--week=2026-W49"}
	line := Join(words)
	if got := Split(line); !slices.Equal(got, words) {
		t.Fatalf("Split(%q) = %q, want %q", line, got, words)
	}
	if got := Quote("--db=sqlite:data/qm.db"); got != "--db=sqlite:data/qm.db" {
		t.Errorf("Quote of a literal word = %q, want it bare", got)
	}
	if got := Quote(""); got != "''" {
		t.Errorf("Quote(\"\") = %q, want ''", got)
	}
}

func FuzzSplitJoin(f *testing.F) {
	f.Add("a", "b c")
	f.Add("", "it's")
	f.Fuzz(func(t *testing.T, a, b string) {
		words := []string{a, b}
		if got := Split(Join(words)); !slices.Equal(got, words) {
			t.Fatalf("Split(Join(%q)) = %q", words, got)
		}
	})
}

// A refusal's example refused in turn gives way to that refusal's example, until one is accepted;
// examples that refuse each other in a ring stop where they began.
func TestSettlePutsEveryMistakeRight(t *testing.T) {
	check := func(args []string) (string, bool) {
		switch Join(args) {
		case "report --week bogus":
			return "tool report: bogus is no week; e.g. tool report --week 2026-W49\n", true
		case "a":
			return "tool: no; e.g. tool b", true
		case "b":
			return "tool: no; e.g. tool a", true
		}
		return "", false
	}
	if got := Settle("tool report: --wek is no flag; e.g. tool report --week bogus", "tool", check); got != "tool report: --wek is no flag; e.g. tool report --week 2026-W49" {
		t.Errorf("Settle = %q", got)
	}
	if got := Settle("tool: no; e.g. tool a", "tool", check); got != "tool: no; e.g. tool a" {
		t.Errorf("a ring of refusals: Settle = %q", got)
	}
}

// A flag pasted with a typographic dash is the flag with two hyphens; a value after -- is left.
func TestPlainDashes(t *testing.T) {
	got, ok := PlainDashes([]string{"report", "—db", "x", "–-week=2026-W49", "--", "—y"})
	if want := []string{"report", "--db", "x", "--week=2026-W49", "--", "—y"}; !ok || !slices.Equal(got, want) {
		t.Errorf("PlainDashes = %q, %v; want %q", got, ok, want)
	}
}
