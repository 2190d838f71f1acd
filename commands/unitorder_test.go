package commands

import (
	"strings"
	"testing"
)

// A duration that names a unit twice (1h1h) or a smaller unit before a larger one (30m1h) is
// refused, wherever a duration is typed, with the duration it adds up to written the way that
// works, and nothing is changed: it is not silently read as the sum.
func TestADurationRepeatingAUnitOrOutOfOrderIsRefused(t *testing.T) {
	h := newHarnessOn(t, "testdata/tokyo.yaml")
	r := h.say("haru@sakura.example", "/gpu request 1 jupyter for 1h")
	id := leaseIn(t, r.Text)
	before := h.say("haru@sakura.example", "/gpu status "+id.String()).PlainText()
	for _, c := range []struct{ cmd, quoted, eg string }{
		{"/gpu extend " + id.String() + " 1h1h", `"1h1h"`, "2h"},
		{"/gpu extend " + id.String() + " 30m1h", `"30m1h"`, "1h30m"},
		{"/gpu request 1 jupyter for 2h2h", `"2h2h"`, "4h"},
		{"/gpu request 1 jupyter 45m2h", `"45m2h"`, "2h45m"},
		{"/gpu estimate 1 jupyter 1d1d", `"1d1d"`, "2d"},
		{"/gpu quota request +1 jupyter for 1w1w because a deadline", `"1w1w"`, "14d"},
	} {
		r := h.say("haru@sakura.example", c.cmd)
		if !r.Error || !strings.Contains(r.Text, c.quoted) || !strings.Contains(r.Text, "like "+c.eg+".") {
			t.Errorf("%s answered %q; want it refused, quoting %s and showing %s", c.cmd, r.Text, c.quoted, c.eg)
		}
	}
	if after := h.say("haru@sakura.example", "/gpu status "+id.String()).PlainText(); after != before {
		t.Errorf("a refused extension changed the lease: %s, was %s", after, before)
	}
	if r := h.say("haru@sakura.example", "/gpu list"); strings.Count(r.PlainText(), "L-") != 1 {
		t.Errorf("a refused request made a lease: %s", r.PlainText())
	}
}
