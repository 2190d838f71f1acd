package commands

import (
	"strings"
	"testing"
)

// A minus sign typed as a word of its own before a duration ("for - 2h") is the same slip as
// -2h: refused as negative, with the length made positive in the example, not as "-" being no
// duration.
func TestAMinusWrittenApartIsRefusedAsANegativeDuration(t *testing.T) {
	h := heronOn(t)
	const rolf = "rolf@heron.example"
	lease := leaseIn(t, h.say(rolf, "/gpu request 1 pico for 2h").Text).String()
	for _, tc := range []struct{ ask, example string }{
		{"/gpu request 1 pico for - 2h", "/gpu request 1 pico for 2h"},
		{"/gpu request 1 pico for − 3h", "/gpu request 1 pico for 3h"},
		{"/gpu extend " + lease + " - 1h", "/gpu extend " + lease + " 1h"},
		{"/gpu estimate 1 pico - 5h", "/gpu estimate 1 pico 5h"},
		{"/gpu request 1 pico - 2h", "/gpu request 1 pico for 2h"},
		{"/gpu quota request +1 pico for - 2d because more runs", "/gpu quota request +1 pico for 2d because more runs"},
	} {
		r := h.say(rolf, tc.ask)
		if !r.Error || !strings.Contains(r.Text, "a duration cannot be negative") || strings.Contains(r.Text, "not a duration") {
			t.Errorf("%s: %q; want it refused as a negative duration", tc.ask, r.Text)
			continue
		}
		if got := exampleIn(t, r); got != tc.example {
			t.Errorf("%s: example %q, want %q", tc.ask, got, tc.example)
		}
		if again := h.say(rolf, tc.example); again.Error {
			t.Errorf("%s: the example is refused: %s", tc.ask, again.Text)
		} else if strings.HasPrefix(tc.example, "/gpu request") {
			h.say(rolf, "/gpu release "+leaseIn(t, again.Text).String())
		}
	}
}

// A template job asked for with a negative length keeps for= in its example, made positive.
func TestASubmitWithANegativeLengthKeepsItInTheExample(t *testing.T) {
	h := heronOn(t)
	const una = "una@heron.example"
	for ask, want := range map[string]string{
		"/gpu submit note-job for=-1h":          "/gpu submit note-job for=1h msg=hi",
		"/gpu submit note-job times=2 for=-90m": "/gpu submit note-job for=1h30m msg=hi",
		"/gpu submit note-job for=٢h":           "/gpu submit note-job for=2h msg=hi",
		"/gpu submit note-job for=- 3h":         "/gpu submit note-job for=3h msg=hi",
	} {
		r := h.say(una, ask)
		if !r.Error {
			t.Errorf("%s was not refused: %s", ask, r.Text)
			continue
		}
		got := exampleIn(t, r)
		if !strings.Contains(got, " for=") || got != want {
			t.Errorf("%s: example %q (%s), want %q", ask, got, r.Text, want)
		}
	}
}
