package bot

import (
	"unicode"
	"unicode/utf8"
)

// What a chat platform shows as one character (a user-perceived character, a grapheme cluster)
// may be several code points: a letter and its combining marks (é written as e and U+0301), an
// emoji and its variation selector or skin tone (👍🏽), emoji joined by a zero width joiner (👩‍🔬,
// 🏳️‍🌈), a flag (two regional indicators, 🇳🇵; or a black flag and tag characters), a keycap
// (1️⃣), a Hangul syllable written as its jamo. A text cut to fit a platform's limit is cut
// between such characters, never inside one, which would leave half an emoji or a mark on the
// wrong letter: the rules below are Unicode's extended grapheme cluster boundaries (UAX #29) for
// these cases; a cut may only come out earlier than it would, never later.

// ClusterBoundary reports whether s may be cut at byte i without splitting a character as it is
// shown: i is the start or end of s, or the start of a code point that begins a new grapheme
// cluster.
func ClusterBoundary(s string, i int) bool {
	if i <= 0 || i >= len(s) {
		return true
	}
	if !utf8.RuneStart(s[i]) {
		return false
	}
	prev, _ := utf8.DecodeLastRuneInString(s[:i])
	next, _ := utf8.DecodeRuneInString(s[i:])
	switch {
	case prev == '\r' && next == '\n':
		return false
	case prev == '\r' || prev == '\n' || next == '\r' || next == '\n':
		return true
	case extends(next):
		return false
	case prev == zwj && !unicode.IsSpace(next) && !unicode.IsControl(next):
		// An emoji ZWJ sequence (👩‍🔬), and a conjunct written with a joiner.
		return false
	case regional(prev) && regional(next):
		// Regional indicators pair from the start of their run: a flag is two of them.
		n := 0
		for j := i; j > 0; {
			r, size := utf8.DecodeLastRuneInString(s[:j])
			if !regional(r) {
				break
			}
			n++
			j -= size
		}
		return n%2 == 0
	case hangulL(prev) && (hangulL(next) || hangulV(next) || hangulLV(next) || hangulLVT(next)),
		(hangulLV(prev) || hangulV(prev)) && (hangulV(next) || hangulT(next)),
		(hangulLVT(prev) || hangulT(prev)) && hangulT(next):
		return false
	}
	return true
}

// ClusterCut is where to cut s at or before byte i: the last grapheme cluster boundary there, 0
// when the first character as shown is longer than i bytes.
func ClusterCut(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	for i > 0 && !ClusterBoundary(s, i) {
		i--
	}
	return max(i, 0)
}

// ClusterHead is the longest start of s that holds at most n code points and ends between two
// characters as they are shown (ClusterCut).
func ClusterHead(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:ClusterCut(s, i)]
}

// Clip shortens s to at most n code points, ending it with "…" when it was cut, after a whole
// character as it is shown (ClusterHead).
func Clip(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return ClusterHead(s, n-1) + "…"
}

const zwj = '\u200d'

// extends reports whether r belongs to the character before it: a combining mark (of any kind),
// a variation selector, a zero width joiner, an emoji skin tone, or a tag character (the tags of
// a subdivision's flag, 🏴󠁧󠁢󠁳󠁣󠁴󠁿).
func extends(r rune) bool {
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc, unicode.Variation_Selector) ||
		r == zwj || r >= 0x1F3FB && r <= 0x1F3FF || r >= 0xE0020 && r <= 0xE007F
}

func regional(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

// The Hangul jamo and syllables by their part in a syllable: leading consonants (L), vowels (V),
// trailing consonants (T), and precomposed syllables without (LV) and with (LVT) a trailing one.
func hangulL(r rune) bool { return r >= 0x1100 && r <= 0x115F || r >= 0xA960 && r <= 0xA97C }
func hangulV(r rune) bool { return r >= 0x1160 && r <= 0x11A7 || r >= 0xD7B0 && r <= 0xD7C6 }
func hangulT(r rune) bool { return r >= 0x11A8 && r <= 0x11FF || r >= 0xD7CB && r <= 0xD7FB }
func hangulLV(r rune) bool {
	return r >= 0xAC00 && r <= 0xD7A3 && (r-0xAC00)%28 == 0
}
func hangulLVT(r rune) bool {
	return r >= 0xAC00 && r <= 0xD7A3 && (r-0xAC00)%28 != 0
}
