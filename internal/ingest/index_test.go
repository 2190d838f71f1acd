package ingest

import (
	"slices"
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
	} {
		if got := expandHostlist(in); !slices.Equal(got, want) {
			t.Errorf("expandHostlist(%q) = %v, want %v", in, got, want)
		}
	}
}
