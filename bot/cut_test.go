package bot_test

import (
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/acme/quartermaster/bot"
)

// utf16Units measures a text as JavaScript does, an emoji outside the BMP counting two.
func utf16Units(s string) int { return len(utf16.Encode([]rune(s))) }

// outsideMention lets a piece end anywhere but inside a <…>.
func outsideMention(s string, i int) bool {
	lt := strings.LastIndexByte(s[:i], '<')
	return lt < 0 || strings.Contains(s[lt:i], ">")
}

// How a long text is cut into pieces: at line breaks, else at spaces, else between characters as
// shown; a code block closed at the end of a piece and opened again at the start of the next,
// never left empty; each piece within the limit as the platform counts it.
func TestCutterCutsBetweenLinesWordsAndCharacters(t *testing.T) {
	flag := "🇳🇵"
	scotland := "🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"
	for _, tc := range []struct {
		name string
		c    bot.Cutter
		in   string
		want []string
	}{
		{"a text that fits is one piece, as it is", bot.Cutter{Limit: 30},
			" Renew L-42 by Friday. ", []string{" Renew L-42 by Friday. "}},
		{"a line break in the second half ends a piece", bot.Cutter{Limit: 30},
			"The lease L-42 ends soon.\nRenew it with /gpu extend.",
			[]string{"The lease L-42 ends soon.", "Renew it with /gpu extend."}},
		{"a line longer than the limit is cut at its last space", bot.Cutter{Limit: 30},
			"Renew the lease before it ends, or it is gone.",
			[]string{"Renew the lease before it", "ends, or it is gone."}},
		{"a line break in the first half gives way to a space in the second", bot.Cutter{Limit: 30},
			"Renew it.\nThe lease before it ends or it is gone.",
			[]string{"Renew it.\nThe lease before", "it ends or it is gone."}},
		{"a word longer than the limit is cut between characters", bot.Cutter{Limit: 20},
			"x " + strings.Repeat("y", 40),
			[]string{"x " + strings.Repeat("y", 14), strings.Repeat("y", 16), strings.Repeat("y", 10)}},
		{"with whole words, a space however early", bot.Cutter{Limit: 20, WholeWords: true},
			"x " + strings.Repeat("y", 40),
			[]string{"x", strings.Repeat("y", 16), strings.Repeat("y", 16), strings.Repeat("y", 8)}},
		{"a flag at the limit goes whole to the next piece", bot.Cutter{Limit: 20},
			strings.Repeat("x", 15) + flag + strings.Repeat("x", 10),
			[]string{strings.Repeat("x", 15), flag + strings.Repeat("x", 10)}},
		{"a subdivision's flag (tags) at the limit goes whole to the next piece", bot.Cutter{Limit: 20},
			strings.Repeat("x", 12) + scotland + strings.Repeat("x", 5),
			[]string{strings.Repeat("x", 12), scotland + strings.Repeat("x", 5)}},
		{"a character longer than a piece is cut between its code points", bot.Cutter{Limit: 20},
			"a" + strings.Repeat("\u0301", 30),
			[]string{"a" + strings.Repeat("\u0301", 15), strings.Repeat("\u0301", 15)}},
		{"a limit in UTF-16 units: a flag is four", bot.Cutter{Limit: 20, Len: utf16Units},
			"ab" + strings.Repeat(flag, 5),
			[]string{"ab" + strings.Repeat(flag, 3), strings.Repeat(flag, 2)}},
		{"a limit in bytes: é is two", bot.Cutter{Limit: 20, Len: func(s string) int { return len(s) }},
			strings.Repeat("é", 15),
			[]string{strings.Repeat("é", 8), strings.Repeat("é", 7)}},
		{"no piece ends inside what the platform reads as one", bot.Cutter{Limit: 20, WholeWords: true, Cuttable: outsideMention},
			"Ask them: <@U1 and 2> today",
			[]string{"Ask them:", "<@U1 and 2> today"}},
		{"a code block cut in two is closed and opened again, its indentation kept", bot.Cutter{Limit: 40},
			"Apply it:\n```\nkind: Pod\nmetadata:\n  name: lab\n  labels: {}\nspec:\n  containers: []\n```\nDone.",
			[]string{"Apply it:\n```\nkind: Pod\nmetadata:\n```", "```\n  name: lab\n  labels: {}\nspec:\n```", "```\n  containers: []\n```\nDone."}},
		{"a block's language opens it again where the platform reads one", bot.Cutter{Limit: 40, Languages: true},
			"Apply it:\n```yaml\nkind: Pod\nmetadata:\n  name: lab\n```",
			[]string{"Apply it:\n```yaml\nkind: Pod\n```", "```yaml\nmetadata:\n  name: lab\n```"}},
		{"where it reads none, ``` alone", bot.Cutter{Limit: 40},
			"Apply it:\n```yaml\nkind: Pod\nmetadata:\n  name: lab\n```",
			[]string{"Apply it:\n```yaml\nkind: Pod\n```", "```\nmetadata:\n  name: lab\n```"}},
		{"a cut right after an opening fence leaves the block to the next piece", bot.Cutter{Limit: 40},
			"Run this to install the lab image:\n```\n" + strings.Repeat("k", 30) + "\n```",
			[]string{"Run this to install the lab image:", "```\n" + strings.Repeat("k", 30) + "\n```"}},
		{"a block that ends where a piece does is not opened again", bot.Cutter{Limit: 30},
			"```\n" + strings.Repeat("k", 20) + "\n```\nThen /gpu list shows it.",
			[]string{"```\n" + strings.Repeat("k", 20) + "\n```", "Then /gpu list shows it."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.c.Pieces(tc.in)
			if strings.Join(got, "\x00") != strings.Join(tc.want, "\x00") {
				t.Errorf("pieces of %q:\n got %q\nwant %q", tc.in, got, tc.want)
			}
			measure := utf8.RuneCountInString
			if tc.c.Len != nil {
				measure = tc.c.Len
			}
			for i, p := range got {
				if n := measure(p); n > tc.c.Limit {
					t.Errorf("piece %d measures %d, over the limit of %d", i+1, n, tc.c.Limit)
				}
			}
		})
	}
}

// FuzzCutterKeepsTheText: whatever the text and the limit, cutting ends, each piece keeps to the
// limit, and the pieces hold the text: all of it, in order, but for the blanks around a cut and
// the fences a cut adds.
func FuzzCutterKeepsTheText(f *testing.F) {
	f.Add("Apply it:\n```\nkind: Pod\n  name: lab\n```\nDone.", 20, false)
	f.Add("```\n"+strings.Repeat(" ", 50)+"x\n```", 20, true)
	f.Add("```"+strings.Repeat("k", 50), 20, false)
	f.Add("🇳🇵🇳🇵🇳🇵 e\u0301e\u0301 \xff\xff ``````", 17, true)
	f.Fuzz(func(t *testing.T, s string, limit int, words bool) {
		limit = 1 + (limit%200+200)%200
		got := bot.Cutter{Limit: limit, WholeWords: words}.Pieces(s)
		for i, p := range got {
			if n := utf8.RuneCountInString(p); n > limit {
				t.Errorf("piece %d measures %d, over the limit of %d", i+1, n, limit)
			}
		}
		bare := func(s string) string {
			return strings.Join(strings.Fields(strings.ReplaceAll(s, "`", "")), "")
		}
		if bare(strings.Join(got, "")) != bare(s) {
			t.Errorf("the pieces %q do not hold the text %q", got, s)
		}
	})
}
