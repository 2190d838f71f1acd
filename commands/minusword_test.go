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

// A template job asked for with a negative length keeps for= in its example, made positive, and
// the parameters typed (times=2), not the template's example's in their place.
func TestASubmitWithANegativeLengthKeepsItInTheExample(t *testing.T) {
	h := heronOn(t)
	const una = "una@heron.example"
	for ask, want := range map[string]string{
		"/gpu submit note-job for=-1h":          "/gpu submit note-job for=1h",
		"/gpu submit note-job times=2 for=-90m": "/gpu submit note-job for=1h30m times=2",
		"/gpu submit note-job for=٢h":           "/gpu submit note-job for=2h",
		"/gpu submit note-job for=- 3h":         "/gpu submit note-job for=3h",
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

// A lease id written with digits other than 0-9 is refused for its digits, with the id in 0-9
// in the example where that id is one of the asker's leases; otherwise the usual example.
func TestALeaseIDInOtherDigitsIsRefusedForItsDigits(t *testing.T) {
	h := heronOn(t)
	const rolf = "rolf@heron.example"
	lease := leaseIn(t, h.say(rolf, "/gpu request 1 pico for 2h").Text).String()
	num := strings.TrimPrefix(lease, "L-")
	arabic, wide := "", ""
	for _, r := range num {
		arabic += string('٠' + (r - '0'))
		wide += string('０' + (r - '0'))
	}
	for _, typed := range []string{"L-" + arabic, "L-" + wide} {
		r := h.say(rolf, "/gpu extend "+typed+" 1h")
		if want := "digits other than 0-9"; !r.Error || !strings.Contains(r.Text, want) || !strings.Contains(r.Text, lease) {
			t.Errorf("extend %s: %q; want it refused for its digits, naming %s", typed, r.Text, lease)
			continue
		}
		if got := exampleIn(t, r); got != "/gpu extend "+lease+" 1h" {
			t.Errorf("extend %s: example %q", typed, got)
		}
	}
	if r := h.say(rolf, "/gpu status L-"+wide); !r.Error || !strings.Contains(r.Text, "digits other than 0-9") || exampleIn(t, r) != "/gpu status "+lease {
		t.Errorf("status L-%s: %q; want it refused for its digits with /gpu status %s", wide, r.Text, lease)
	}
	// Someone else's lease, written so: not named back to a stranger.
	r := h.say("olga@heron.example", "/gpu extend L-"+arabic+" 1h")
	if !r.Error || !strings.Contains(r.Text, "digits other than 0-9") || strings.Contains(r.Text, lease) {
		t.Errorf("olga, extend L-%s: %q; want it refused without naming rolf's lease", arabic, r.Text)
	}
}

// A decision on a request whose id is written with other digits keeps the reason typed in its
// example, with the id in 0-9.
func TestADenialOfALeaseIDInOtherDigitsKeepsTheReason(t *testing.T) {
	h := heronOn(t)
	const una, olga = "una@heron.example", "olga@heron.example"
	h.say(una, "/gpu request 2 pico for 2h")
	id := leaseIn(t, h.say(una, "/gpu request 1 pico for 2h").Text).String()
	typed := "L-"
	for _, r := range strings.TrimPrefix(id, "L-") {
		typed += string('٠' + (r - '0'))
	}
	r := h.say(olga, "/gpu deny "+typed+" too big for now")
	if !r.Error || !strings.Contains(r.Text, "digits other than 0-9") {
		t.Fatalf("deny %s: %q", typed, r.Text)
	}
	if got, want := exampleIn(t, r), "/gpu deny "+id+" too big for now"; got != want {
		t.Errorf("deny %s: example %q, want %q", typed, got, want)
	}
	if again := h.say(olga, exampleIn(t, r)); again.Error {
		t.Errorf("the example is refused: %s", again.Text)
	}
}
