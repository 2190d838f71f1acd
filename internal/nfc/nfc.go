// Package nfc writes names that come from outside (an identity provider's groups and emails, a
// chat profile's email) in Unicode normal form C, as editors write the policy's names, so that
// every door in compares them by one rule. It wraps golang.org/x/text/unicode/norm.
package nfc

import (
	"strings"
	"unicode/utf8"

	"github.com/acme/quartermaster/internal/policy"
	"golang.org/x/text/unicode/norm"
)

// Name is s in Unicode normal form C, as editors write the policy's names: a letter followed by
// combining accents, as some directories send it (O and U+0308), is the one composed letter (Ö).
// A character that NFC would replace by another single character is left as written: a Kelvin
// sign (U+212A) is not a K, an angstrom sign (U+212B) not an Å, an ohm sign (U+2126) not an Ω;
// the policy treats such look-alikes as other names, and so they stay.
func Name(s string) string {
	if norm.NFC.IsNormalString(s) {
		return s
	}
	var b strings.Builder
	start := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if lookAlike(r, s[i:i+n]) {
			b.WriteString(norm.NFC.String(s[start:i]))
			b.WriteString(s[i : i+n])
			start = i + n
		}
		i += n
	}
	b.WriteString(norm.NFC.String(s[start:]))
	return b.String()
}

// Email is an email as Quartermaster knows the person by it, wherever it was read (a sign-in, a
// chat profile): trimmed, in NFC (Name), then A to Z in lower case only (policy.NameKey), so a
// domain in capitals is the domain and a Kelvin sign (K) is neither a K nor a k.
func Email(s string) string {
	return policy.NameKey(Name(strings.TrimSpace(s)))
}

// lookAlike reports whether r, written as text, is a character that NFC replaces by one other
// character (a singleton: the Kelvin sign by K), never keeping it: what it would become is
// another letter that only looks the same. Combining marks are not among them.
func lookAlike(r rune, text string) bool {
	if r < utf8.RuneSelf || r == utf8.RuneError || norm.NFC.PropertiesString(text).CCC() != 0 {
		return false
	}
	c := norm.NFC.String(text)
	cr, n := utf8.DecodeRuneInString(c)
	return n == len(c) && cr != r
}

// Names is each of names in NFC (Name), without repeats.
func Names(names []string) []string {
	if names == nil {
		return nil
	}
	out := make([]string, 0, len(names))
	for _, g := range names {
		if c := Name(g); !containsExact(out, c) {
			out = append(out, c)
		}
	}
	return out
}

func containsExact(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
