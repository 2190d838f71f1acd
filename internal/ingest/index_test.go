package ingest

import (
	"slices"
	"strings"
	"testing"
)

func TestExpandHostlist(t *testing.T) {
	for in, want := range map[string][]string{
		"":                    nil,
		"vm":                  {"vm"},
		"gpu01,gpu02":         {"gpu01", "gpu02"},
		"gpu[01-03,07],dgx-a": {"gpu01", "gpu02", "gpu03", "gpu07", "dgx-a"},
		"node[8-10]":          {"node8", "node9", "node10"},
		"rack1-n[1-2]-ib":     {"rack1-n1-ib", "rack1-n2-ib"},
		"bad[3-1]":            {"bad[3-1]"},
		"huge[0-99999999]":    {"huge[0-99999999]"},
		// The largest number there is, alone or ending a range: one name each, and an end.
		"gpu[9223372036854775807]":                     {"gpu9223372036854775807"},
		"gpu[9223372036854775806-9223372036854775807]": {"gpu9223372036854775806", "gpu9223372036854775807"},
	} {
		if got := expandHostlist(in); !slices.Equal(got, want) {
			t.Errorf("expandHostlist(%q) = %v, want %v", in, got, want)
		}
	}
}

// FuzzExpandHostlist: whatever node list a scheduler reports (Slurm's compressed form or
// anything else), expanding it ends, never panics, and gives names that are not empty, no more
// than a list of maxHostlist nodes per bracket could hold.
func FuzzExpandHostlist(f *testing.F) {
	for _, s := range []string{"gpu[01-03,07],dgx-a", "rack1-n[1-2]-ib", "bad[3-1]", "huge[0-99999999]", "vm", "", ",", "a[]", "a[1-2][3-4]", "[", "]", "n[-1]", "n[+1]", "gpu[9223372036854775807]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := expandHostlist(s)
		if len(got) > (strings.Count(s, ",")+1)*(2*maxHostlist+2) {
			t.Fatalf("%q expands to %d names", s, len(got))
		}
		for _, n := range got {
			if n == "" {
				t.Fatalf("%q expands to %q, with an empty name", s, got)
			}
		}
	})
}
