package policy

import (
	"unicode"
	"unicode/utf8"
)

// OtherDigits reports whether s has a decimal digit other than 0-9: one of another script
// (Arabic-Indic ١٢, Devanagari २) or a full-width one (２), which a number or a duration is
// never read from.
func OtherDigits(s string) bool {
	for _, r := range s {
		if r > utf8.RuneSelf && unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// ASCIIDigits is s with each decimal digit other than 0-9 written as 0-9, and each full-width
// letter or sign (ｈ, －) as its ASCII one, so "١٢" is "12" and "２ｈ" is "2h". clear is false
// where s mixes digits of two scripts (0-9 among them), whose number is not clear.
func ASCIIDigits(s string) (out string, clear bool) {
	b := make([]rune, 0, len(s))
	script := rune(-1) // the first digit's zero
	clear = true
	for _, r := range s {
		switch {
		case r >= 0xFF01 && r <= 0xFF5E && !unicode.IsDigit(r):
			r -= 0xFF01 - '!'
		case unicode.IsDigit(r):
			zero := digitZero(r)
			if script >= 0 && zero != script {
				clear = false
			}
			script = zero
			r = '0' + (r - zero)
		}
		b = append(b, r)
	}
	return string(b), clear
}

// digitZero is the zero of decimal digit r's script: every run of decimal digits in Unicode
// is whole sets of ten, each from 0 to 9.
func digitZero(r rune) rune {
	for _, rg := range unicode.Nd.R16 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); lo <= r && r <= hi {
			return r - (r-lo)%10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); lo <= r && r <= hi {
			return r - (r-lo)%10
		}
	}
	return '0'
}
