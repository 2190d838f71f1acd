package commands

import (
	"strings"
	"testing"
)

// A flag of the command table given twice (request … exclusive exclusive, estimate … exclusive
// exclusive) was taken silently: it is refused once, naming the word given twice, with the command
// without the repeat as the example, which works; nothing is made. Every flag of the table is
// checked: a command with a flag and no words here fails the test.
func TestAFlagGivenTwiceIsRefusedOnce(t *testing.T) {
	h := newHarnessOn(t, petrelPolicy)
	heads := map[string]string{"request": "request 1 mi300x for 1h", "estimate": "estimate 1 mi300x 1h"}
	for _, s := range Table() {
		for _, p := range s.Params {
			if p.Type != TFlag {
				continue
			}
			head, ok := heads[s.Name]
			if !ok {
				t.Errorf("/gpu %s: no command to give its flag %s twice in", s.Name, p.Keyword)
				continue
			}
			for _, again := range []string{p.Keyword, strings.ToUpper(p.Keyword[:1]) + p.Keyword[1:]} {
				ask := head + " " + p.Keyword + " " + again
				before := h.leaseCount()
				got := h.say("sven@petrel.example.se", ask)
				want := `"` + again + `" is given twice; give it once.`
				if !got.Error || !strings.HasPrefix(got.Text, want) || exampleOf(t, got.Text) != strings.TrimPrefix(head, "/gpu ")+" "+p.Keyword {
					t.Errorf("/gpu %s answered %q; want %q with the example /gpu %s %s", ask, got.Text, want, head, p.Keyword)
					continue
				}
				if n := h.leaseCount(); n != before {
					t.Errorf("/gpu %s made a lease", ask)
				}
				if r := h.say("sven@petrel.example.se", exampleOf(t, got.Text)); r.Error {
					t.Errorf("/gpu %s: the example answered %q", ask, r.Text)
				}
			}
		}
	}
	// "reservation" says what "exclusive" says: the two are refused as saying the same.
	if got := h.say("sven@petrel.example.se", "request 1 mi300x for 1h exclusive reservation"); !strings.HasPrefix(got.Text, `"exclusive" and "reservation" say the same; give one of them.`) {
		t.Errorf("exclusive reservation answered %q", got.Text)
	}
}

// A quota request's keyword given twice (for 1w for 1w, team ljud team ljud) is refused once,
// naming the word given again, with the request with it once as the example, which works.
func TestAQuotaRequestsKeywordGivenTwiceIsRefusedOnce(t *testing.T) {
	h := newHarnessOn(t, petrelPolicy)
	for _, tc := range []struct{ ask, says, example string }{
		{"quota request +1 a100-80g for 1w for 1w because a film", `"for" is given twice; give it once.`, "quota request +1 a100-80g for 7d because a film"},
		{"quota request +1 a100-80g team ljud Team ljud because a film", `"Team" is given twice; give it once.`, "quota request +1 a100-80g team ljud because a film"},
	} {
		got := h.say("sven@petrel.example.se", tc.ask)
		if !got.Error || !strings.HasPrefix(got.Text, tc.says) || exampleOf(t, got.Text) != tc.example {
			t.Errorf("/gpu %s answered %q; want %q with the example /gpu %s", tc.ask, got.Text, tc.says, tc.example)
			continue
		}
		if r := h.say("sven@petrel.example.se", tc.example); r.Error {
			t.Errorf("/gpu %s: the example answered %q", tc.ask, r.Text)
		}
	}
}
