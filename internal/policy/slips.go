package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The words every adapter refuses a negative duration, or a number or duration written with
// digits other than 0-9, with: typed is what was typed (quoted here), meant the value meant,
// written as it works typed back.

// NegativeDurationWords refuses typed, a duration with a minus before it.
func NegativeDurationWords(typed, meant string) string {
	return fmt.Sprintf("%s is negative, but a duration cannot be negative; write it like %s.", Quoted(typed, 40), meant)
}

// OtherDigitsDurationWords refuses typed, a duration written with digits other than 0-9.
func OtherDigitsDurationWords(typed, meant string) string {
	return fmt.Sprintf("%s is written with digits other than 0-9; write the duration with the digits 0-9: %s.", Quoted(typed, 40), meant)
}

// OtherDigitsNumberWords refuses typed, a number written with digits other than 0-9.
func OtherDigitsNumberWords(typed, meant string) string {
	return fmt.Sprintf("%s is written with digits other than 0-9; write the number with the digits 0-9: %s.", Quoted(typed, 40), meant)
}

// DurationSlip is the refusal of v, a duration that works but for a minus before it (-2h, - 2h)
// or its digits other than 0-9 (٢h, ２ｈ), in the words above, and the duration meant; "" and 0
// where v is no such slip.
func DurationSlip(v string) (string, time.Duration) {
	body := strings.TrimSpace(v)
	other := OtherDigits(body)
	meant, clear := body, true
	if other {
		meant, clear = ASCIIDigits(body)
	}
	r, size := utf8.DecodeRuneInString(meant)
	negative := MinusSign(r)
	if negative {
		meant = strings.TrimSpace(meant[size:])
	}
	d, err := ParseDuration(meant)
	if err != nil || !clear || d <= 0 {
		return "", 0
	}
	switch {
	case negative:
		return NegativeDurationWords(v, FormatDuration(d)), d
	case other:
		return OtherDigitsDurationWords(v, FormatDuration(d)), d
	}
	return "", 0
}

// NumberSlip is the refusal of v, a whole number written with digits other than 0-9 of one
// script (١٢, ２), naming it in 0-9, and that number; "" and 0 where v is no such number.
func NumberSlip(v string) (string, int) {
	if !OtherDigits(v) {
		return "", 0
	}
	meant, clear := ASCIIDigits(strings.TrimSpace(v))
	n, err := strconv.Atoi(meant)
	if !clear || err != nil {
		return "", 0
	}
	return OtherDigitsNumberWords(v, meant), n
}

// MinusSign reports whether r reads as a minus before a number: the hyphen-minus, the minus sign,
// the full-width and small hyphen-minus, and the hyphens and dashes (‐ ‑ ‒ – —) that autocorrect
// or a copied text put in for it.
func MinusSign(r rune) bool {
	return strings.ContainsRune("-\u2212\uff0d\ufe63\u2010\u2011\u2012\u2013\u2014", r)
}
