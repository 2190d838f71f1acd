package discord_test

import (
	"testing"

	"github.com/acme/quartermaster/bot/discord"
)

// What is typed into an option being suggested matches in Unicode normal form C, as a command's
// text does (commands.Bot.Handle): a keyboard that sends a letter and its combining mark apart (テ
// and U+3099, ᄒ ᅡ ᆫ for 한, Greek α and U+0301) finds the template titled with the composed letter,
// and a title written apart is found by the letter typed composed.
func TestSuggestionsMatchTypedTextInNFC(t *testing.T) {
	for _, c := range []struct{ typed, title string }{
		{"\u30c6\u3099ータ", "データ準備"},         // デ typed as テ + combining dakuten
		{"\u1112\u1161\u11ab국어", "한국어 요약"},  // 한 typed as its jamo
		{"\u03b1\u0301λφα", "Άλφα cluster"}, // ά typed as α + combining acute
		{"データ", "\u30c6\u3099ータ準備"},         // a title written apart, typed composed
		{"  \u03b1\u0301ΛΦΑ ", "ΆΛΦΑ run"},  // spaces around it still do not count
	} {
		if !discord.Suggests(c.typed, c.title) {
			t.Errorf("typed %q: %q is not suggested", c.typed, c.title)
		}
	}
	// Another word is still not suggested.
	if discord.Suggests("\u30c6\u3099ータ", "テータ") {
		t.Errorf("デ typed apart suggests テ without its mark")
	}
}
