package commands

import (
	"strings"
	"testing"
)

// A command that takes one lease id, given that id and more ("release L-1 now", "status L-1
// please") or the id over two words ("release L 1", "release lease 1"), is refused with the example
// naming that lease; before, the example named the asker's latest lease, so typing it back
// released another one. Two ids are refused as one lease at a time, the first typed first.
func TestALeaseCommandWithMoreWordsKeepsItsLease(t *testing.T) {
	h := kelpOn(t)
	const who = "mara@kelp.example"
	first := leaseIn(t, h.say(who, "/gpu request 1 tidal for 1h").Text)
	second := leaseIn(t, h.say(who, "/gpu request 1 tidal for 2h").Text)
	leaseIn(t, h.say(who, "/gpu request 1 tidal for 3h").Text)
	id := first.String()
	n := strings.TrimPrefix(id, "L-")
	for _, tc := range []struct{ ask, example string }{
		{"release " + id + " now", "release " + id},
		{"status " + id + " please", "status " + id},
		{"release L " + n, "release " + id},
		{"release lease " + n, "release " + id},
		{"release L- " + n, "release " + id},
	} {
		got := h.say(who, "/gpu "+tc.ask)
		if !got.Error {
			t.Errorf("/gpu %s answered %q; want it refused", tc.ask, got.Text)
			continue
		}
		if ex := exampleOf(t, got.Text); ex != tc.example {
			t.Errorf("/gpu %s answered %q; want the example /gpu %s", tc.ask, got.Text, tc.example)
		}
	}
	// Two ids: one at a time, the first typed in the example and the second named after it,
	// never the asker's latest lease, which neither named (typed back, it ended a third lease).
	for _, tc := range []struct{ ask, example, then string }{
		{"release " + id + " " + second.String(), "release " + id, "/gpu release " + second.String()},
		{"status " + id + " " + second.String(), "status " + id, "/gpu status " + second.String()},
		{"extend " + id + " " + second.String() + " 90m", "extend " + id + " 1h30m", "/gpu extend " + second.String() + " 1h30m"},
		{"extend " + id + " " + second.String(), "extend " + id + " 2h", "/gpu extend " + second.String() + " 2h"},
	} {
		got := h.say(who, "/gpu "+tc.ask)
		if !got.Error || exampleOf(t, got.Text) != tc.example || !strings.Contains(got.Text, "one lease at a time") || !strings.Contains(got.Text, tc.then) {
			t.Errorf("/gpu %s answered %q; want one lease at a time, the example /gpu %s and then %s", tc.ask, got.Text, tc.example, tc.then)
		}
	}
	if st := h.say(who, "/gpu status "+id); !strings.Contains(st.PlainText(), "active") {
		t.Errorf("a refused command changed %s: %s", id, st.PlainText())
	}
}

// The same for extend and deny: the id over two words is refused with that lease, and the
// length or the reason typed, in the example.
func TestAnExtensionOrDenialWithTheIdOverTwoWordsKeepsItsLease(t *testing.T) {
	h := kelpOn(t)
	const who = "mara@kelp.example"
	first := leaseIn(t, h.say(who, "/gpu request 1 tidal for 1h").Text)
	leaseIn(t, h.say(who, "/gpu request 1 tidal for 2h").Text)
	id := first.String()
	n := strings.TrimPrefix(id, "L-")
	refusedAs(t, h, who, "extend L "+n+" 90m", "write it as one word: "+id+".", "extend "+id+" 1h30m")
	refusedAs(t, h, who, "extend lease "+n+" 3h", "write it as one word: "+id+".", "extend "+id+" 3h")
	waiting := leaseIn(t, h.say(who, "/gpu request 4 tidal for 1h").Text).String() // past the quota: olin decides
	refusedAs(t, h, "olin@kelp.example", "deny L "+strings.TrimPrefix(waiting, "L-")+" not this week", "write it as one word: "+waiting+".", "deny "+waiting+" not this week")
}
