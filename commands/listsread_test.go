package commands

import (
	"strings"
	"testing"
)

// A list of names in a reply reads as a person writes one, whether every name fits or it ends
// with how many more there are: "nb-t4, a6000-2x, h200-x6 and mig-1g", "no quota of a6000-2x or
// h200-x6", not the names joined by commas alone.
func TestListsOfNamesReadAsSentences(t *testing.T) {
	h := newHarnessOn(t, "testdata/kolkata.yaml")
	if got := h.say("omar@kestrel.example", "/gpu estimate 1 zzz 1h").Text; !strings.Contains(got, "the catalog has nb-t4, a6000-2x, h200-x6 and mig-1g.") {
		t.Errorf("/gpu estimate 1 zzz 1h answered %q; want the four classes in a sentence", got)
	}
	r := h.say("omar@kestrel.example", "/gpu quota")
	var fields []string
	for _, s := range r.Sections {
		for _, f := range s.Fields {
			fields = append(fields, f.Label+": "+f.Value)
		}
	}
	if got := strings.Join(fields, "\n"); !strings.Contains(got, "none in use and no quota of a6000-2x or h200-x6") {
		t.Errorf("/gpu quota answered %q\n%s\nwant the classes without quota in a sentence", r.Text, got)
	}
}
