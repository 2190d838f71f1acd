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
