package commands

import (
	"strings"
	"testing"
)

// A negative duration, and a number or a duration written with digits other than 0-9
// (Arabic-Indic, full-width), is refused for that, in one sentence that says so and gives the
// value meant in 0-9, not as something that is no duration or no whole number; the example
// carries the value meant and works typed back.
func TestNegativeDurationsAndOtherDigitsAreRefusedForWhatTheyAre(t *testing.T) {
	h := heronOn(t)
	const rolf = "rolf@heron.example"
	lease := leaseIn(t, h.say(rolf, "/gpu request 1 pico for 2h").Text).String()
	for _, tc := range []struct{ ask, says, example string }{
		{"/gpu request 1 pico for -3h", `"-3h" is negative, but a duration cannot be negative; write it like 3h.`, "/gpu request 1 pico for 3h"},
		{"/gpu request 1 pico -3h", `"-3h" is negative, but a duration cannot be negative; write it like 3h.`, "/gpu request 1 pico for 3h"},
		{"/gpu extend " + lease + " -1h", `"-1h" is negative, but a duration cannot be negative; write it like 1h.`, "/gpu extend " + lease + " 1h"},
		{"/gpu extend " + lease + " ٣h", `"٣h" is written with digits other than 0-9; write the duration with the digits 0-9: 3h.`, "/gpu extend " + lease + " 3h"},
		{"/gpu estimate 1 pico -5h", `"-5h" is negative, but a duration cannot be negative; write it like 5h.`, "/gpu estimate 1 pico 5h"},
		{"/gpu request ١ pico for 3h", `"١" is written with digits other than 0-9; write the number with the digits 0-9: 1.`, "/gpu request 1 pico for 3h"},
		{"/gpu request ２ pico for 1h", `"２" is written with digits other than 0-9; write the number with the digits 0-9: 2.`, "/gpu request 2 pico for 1h"},
		{"/gpu request 1 pico for ２ｈ", `"２ｈ" is written with digits other than 0-9; write the duration with the digits 0-9: 2h.`, "/gpu request 1 pico for 2h"},
		{"/gpu request 1 pico for ٢ hours ١٥ minutes", `"٢ hours ١٥ minutes" is written with digits other than 0-9; write the duration with the digits 0-9: 2h15m.`, "/gpu request 1 pico for 2h15m"},
		{"/gpu estimate ٣ pico 2h", `"٣" is written with digits other than 0-9; write the number with the digits 0-9: 3.`, "/gpu estimate 3 pico 2h"},
		{"/gpu quota request +٢ pico for 1d because more runs", `"+٢" is written with digits other than 0-9; write the number with the digits 0-9: +2.`, "/gpu quota request +2 pico for 1d because more runs"},
		{"/gpu quota request +1 pico for -2d because more runs", `"-2d" is negative, but a duration cannot be negative; write it like 2d.`, "/gpu quota request +1 pico for 2d because more runs"},
	} {
		r := h.say(rolf, tc.ask)
		if !r.Error || !strings.HasPrefix(r.Text, strings.ToUpper(tc.says[:1])+tc.says[1:]) && !strings.HasPrefix(r.Text, tc.says) {
			t.Errorf("%s: %q; want %s", tc.ask, r.Text, tc.says)
			continue
		}
		if strings.Contains(r.Text, "not a duration") || strings.Contains(r.Text, "not a whole number") {
			t.Errorf("%s: %q; want it refused for its sign or its digits only", tc.ask, r.Text)
		}
		if got := exampleIn(t, r); got != tc.example {
			t.Errorf("%s: example %q, want %q", tc.ask, got, tc.example)
		}
		again := h.say(rolf, tc.example)
		if again.Error {
			t.Errorf("%s: the example %s is refused: %s", tc.ask, tc.example, again.Text)
		}
		if strings.HasPrefix(tc.example, "/gpu request") {
			h.say(rolf, "/gpu release "+leaseIn(t, again.Text).String())
		}
	}
}

// A template's whole number or duration written with other digits is refused for that, with the
// value in 0-9 as the example.
func TestATemplateNumberInOtherDigitsIsRefusedForItsDigits(t *testing.T) {
	h := heronOn(t)
	const una = "una@heron.example"
	r := h.say(una, "/gpu submit note-job times=٣")
	if want := `times=٣ is written with digits other than 0-9; write the number with the digits 0-9: times=3.`; !r.Error || !strings.HasPrefix(r.Text, want) {
		t.Errorf("times=٣: %q; want %s", r.Text, want)
	}
	if got := exampleIn(t, r); got != "/gpu submit note-job times=3" {
		t.Errorf("times=٣: example %q", got)
	}
}
