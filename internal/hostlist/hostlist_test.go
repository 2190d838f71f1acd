package hostlist

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	for in, want := range map[string][]string{
		"":                    nil,
		" , ,":                nil,
		"vm":                  {"vm"},
		"gpu01,gpu02":         {"gpu01", "gpu02"},
		"gpu01 gpu02\tgpu03":  {"gpu01", "gpu02", "gpu03"},
		"gpu[01-03,07],dgx-a": {"gpu01", "gpu02", "gpu03", "gpu07", "dgx-a"},
		"n[08-11]":            {"n08", "n09", "n10", "n11"},
		"node[8-10]":          {"node8", "node9", "node10"},
		"n[001-2]":            {"n001", "n002"},
		"n[1,1]":              {"n1", "n1"},
		"gpu[1-2]-ib":         {"gpu1-ib", "gpu2-ib"},
		"rack1-n[1-2]-ib":     {"rack1-n1-ib", "rack1-n2-ib"},
		// Several groups: every combination, the first group varying slowest.
		"rack[1-2]-n[01-02]":       {"rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"},
		"r[1,3]c[0-1]-gpu[7],cpu1": {"r1c0-gpu7", "r1c1-gpu7", "r3c0-gpu7", "r3c1-gpu7", "cpu1"},
		"[1-2]x[3]":                {"1x3", "2x3"},
		// A sign is not a number in a host list, and a range runs forwards.
		"n[+1]":    {"n[+1]"},
		"n[-1]":    {"n[-1]"},
		"n[1-+2]":  {"n[1-+2]"},
		"n[1--2]":  {"n[1--2]"},
		"n[ 1]":    {"n[ 1]"},
		"bad[3-1]": {"bad[3-1]"},
		// Unreadable expressions are kept as written, each one name; the rest of the list is read.
		"a[],b1":                  {"a[]", "b1"},
		"a[1,x],b1":               {"a[1,x]", "b1"},
		"a[1-2":                   {"a[1-2"},
		"a[1,b2":                  {"a[1,b2"},
		"a]1,b2":                  {"a]1", "b2"},
		"a[[1]]":                  {"a[[1]]"},
		"a[1][,b2":                {"a[1][,b2"},
		"n[٣]":                    {"n[٣]"},
		"n[99999999999999999999]": {"n[99999999999999999999]"},
		// Past the bound: kept as written.
		"huge[0-99999999]":          {"huge[0-99999999]"},
		"a[0-65535]b[0-1]":          {"a[0-65535]b[0-1]"},
		"n[0-18446744073709551615]": {"n[0-18446744073709551615]"},
		// The largest number there is, alone or ending a range: one name each, and an end.
		"gpu[9223372036854775807]":                     {"gpu9223372036854775807"},
		"gpu[9223372036854775806-9223372036854775807]": {"gpu9223372036854775806", "gpu9223372036854775807"},
		"gpu[18446744073709551615]":                    {"gpu18446744073709551615"},
	} {
		if got := Expand(in); !slices.Equal(got, want) {
			t.Errorf("Expand(%q) = %q, want %q", in, got, want)
		}
	}
}

// The bound holds for a list as a whole: names up to MaxNames are made, an expression that would
// go past it is kept as written, and names written out are kept.
func TestExpandBound(t *testing.T) {
	full := fmt.Sprintf("a[1-%d]", MaxNames)
	if got := Expand(full); len(got) != MaxNames || got[MaxNames-1] != fmt.Sprintf("a%d", MaxNames) {
		t.Fatalf("%s: %d names, want %d", full, len(got), MaxNames)
	}
	got := Expand(full + ",b[1-2],c1")
	if len(got) != MaxNames+2 || got[MaxNames] != "b[1-2]" || got[MaxNames+1] != "c1" {
		t.Errorf("past the bound: %d names ending %q", len(got), got[MaxNames:])
	}
	// Several lists share the bound.
	if got := Expand(full, "b[1-2]"); len(got) != MaxNames+1 || got[MaxNames] != "b[1-2]" {
		t.Errorf("two lists past the bound: %d names ending %q", len(got), got[len(got)-1])
	}
	// A name from brackets no longer than MaxNameLen.
	long := strings.Repeat("x", MaxNameLen-1)
	if got := Expand(long + "[1-2]"); !slices.Equal(got, []string{long + "1", long + "2"}) {
		t.Errorf("names of %d bytes: %q", MaxNameLen, got)
	}
	if got := Expand(long + "[10]"); !slices.Equal(got, []string{long + "[10]"}) {
		t.Errorf("a name of %d bytes: %q", MaxNameLen+1, got)
	}
}

// Lists read one after the other are one list.
func TestExpandLists(t *testing.T) {
	if got, want := Expand("gpu[1-2]", "", "cpu1,cpu2"), []string{"gpu1", "gpu2", "cpu1", "cpu2"}; !slices.Equal(got, want) {
		t.Errorf("Expand of three lists = %q, want %q", got, want)
	}
}

// FuzzExpand: whatever node list a scheduler reports (Slurm's host lists or anything else),
// expanding it ends, never panics, keeps to the bound, gives names that are not empty and hold
// no separator outside brackets, and expanding those names again, joined with commas, gives
// the same names.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"gpu[01-03,07],dgx-a", "rack1-n[1-2]-ib", "rack[1-2]-n[01-02]", "bad[3-1]", "huge[0-99999999]",
		"vm", "", ",", "a[]", "a[1-2][3-4]", "[", "]", "n[-1]", "n[+1]", "gpu[9223372036854775807]",
		"n[9223372036854775806-9223372036854775807]", "a[1-2 b3", "a[0-65535]b[0-1]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Expand(s)
		written := len(split(s))
		if len(got) > MaxNames+written {
			t.Fatalf("%q expands to %d names", s, len(got))
		}
		for _, n := range got {
			if n == "" {
				t.Fatalf("%q expands to %q, with an empty name", s, got)
			}
			if len(n) > MaxNameLen && !strings.Contains(s, n) {
				t.Fatalf("%q expands to a name of %d bytes", s, len(n))
			}
		}
		if again := Expand(strings.Join(got, ",")); !slices.Equal(again, got) {
			t.Fatalf("%q expands to %q, and those names to %q", s, got, again)
		}
	})
}
