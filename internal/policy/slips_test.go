package policy

import "testing"

func TestDurationAndNumberSlipsAreNamedInZeroToNine(t *testing.T) {
	for v, want := range map[string]string{
		"-90m":  `"-90m" is negative, but a duration cannot be negative; write it like 1h30m.`,
		"- 2h":  `"- 2h" is negative, but a duration cannot be negative; write it like 2h.`,
		"٣h":    `"٣h" is written with digits other than 0-9; write the duration with the digits 0-9: 3h.`,
		"２ｈ":    `"２ｈ" is written with digits other than 0-9; write the duration with the digits 0-9: 2h.`,
		"2h":    "",
		"-nope": "",
	} {
		if got, _ := DurationSlip(v); got != want {
			t.Errorf("DurationSlip(%q) = %q, want %q", v, got, want)
		}
	}
	if got, n := NumberSlip("١٢"); n != 12 || got != `"١٢" is written with digits other than 0-9; write the number with the digits 0-9: 12.` {
		t.Errorf("NumberSlip(١٢) = %q, %d", got, n)
	}
	if got, _ := NumberSlip("12"); got != "" {
		t.Errorf("NumberSlip(12) = %q", got)
	}
}
