package policy

import "testing"

// Digits of another script, or full-width ones, are told apart from 0-9 and written with 0-9
// where they are of one script.
func TestASCIIDigits(t *testing.T) {
	for in, want := range map[string]string{"١٢": "12", "２": "2", "２ｈ": "2h", "۱۵m": "15m", "४२": "42", "+٣": "+3", "𝟙𝟘": "10"} {
		if !OtherDigits(in) {
			t.Errorf("OtherDigits(%q) = false", in)
		}
		if got, clear := ASCIIDigits(in); got != want || !clear {
			t.Errorf("ASCIIDigits(%q) = %q, %v; want %q", in, got, clear, want)
		}
	}
	if OtherDigits("12h") {
		t.Error("OtherDigits(12h) = true")
	}
	if _, clear := ASCIIDigits("1٢"); clear {
		t.Error("1٢ mixes scripts, but reads as clear")
	}
}
