package slack

import "testing"

// The request modal refuses GPUs that are negative or written with digits other than 0-9, and a
// negative duration or one in other digits, in the words chat refuses them with, the value meant
// in 0-9, not as no whole number or no duration.
func TestTheRequestFormRefusesNegativesAndOtherDigitsAsChatDoes(t *testing.T) {
	for _, tc := range []struct {
		f          form
		field, msg string
	}{
		{form{Class: "pico", GPUs: "٢", Duration: "2h"}, fieldGPUs, `"٢" is written with digits other than 0-9; write the number with the digits 0-9: 2.`},
		{form{Class: "pico", GPUs: "１２", Duration: "2h"}, fieldGPUs, `"１２" is written with digits other than 0-9; write the number with the digits 0-9: 12.`},
		{form{Class: "pico", GPUs: "-3", Duration: "2h"}, fieldGPUs, "The number of GPUs must be at least 1, not -3."},
		{form{Class: "pico", GPUs: "lots", Duration: "2h"}, fieldGPUs, "Write a whole number of GPUs, 1 or more."},
		{form{Class: "pico", GPUs: "1", Duration: "-2h"}, fieldDuration, `"-2h" is negative, but a duration cannot be negative; write it like 2h.`},
		{form{Class: "pico", GPUs: "1", Duration: "٣h"}, fieldDuration, `"٣h" is written with digits other than 0-9; write the duration with the digits 0-9: 3h.`},
	} {
		if got := tc.f.errors()[tc.field]; got != tc.msg {
			t.Errorf("%+v: %s says %q, want %q", tc.f, tc.field, got, tc.msg)
		}
	}
	if e := (form{Class: "pico", GPUs: "2", Duration: "90m"}).errors(); len(e) != 0 {
		t.Errorf("a good form is refused: %v", e)
	}
}
