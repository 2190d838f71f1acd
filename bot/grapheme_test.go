package bot_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acme/quartermaster/bot"
)

// Characters as a chat platform shows them, each of several code points.
var clusters = []string{
	"👩\u200d🔬",       // woman scientist: a ZWJ sequence
	"🏳\ufe0f\u200d🌈", // rainbow flag: a variation selector and a ZWJ
	"🇳🇵",             // a flag: two regional indicators
	"👍🏽",             // a skin tone
	"e\u0301",        // é as a letter and a combining mark
	"a\u0308\u0323",  // two combining marks
	"1\ufe0f\u20e3",  // a keycap
	"🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F", // a subdivision's flag: tags
	"\u1100\u1161\u11a8", // 각 written as its jamo
	"\r\n",
}

// A cut at any byte of a text made of such characters falls between two of them: at the start
// of the character the byte is in, never after a part of it.
func TestClusterCutNeverSplitsACharacter(t *testing.T) {
	for _, c := range clusters {
		for _, lead := range []string{"", "x", "xy", "é "} {
			var starts []int
			s := lead
			for range 7 {
				starts = append(starts, len(s))
				s += c
			}
			starts = append(starts, len(s))
			for i := len(lead); i <= len(s); i++ {
				want := 0
				for _, st := range starts {
					if st <= i {
						want = st
					}
				}
				if got := bot.ClusterCut(s, i); got != want {
					t.Errorf("%q cut at byte %d is cut at %d, want %d (between two %q)", s, i, got, want, c)
				}
			}
		}
	}
}

// Runs of flags pair from their start: the third and fourth regional indicators are one flag
// whatever came before the run.
func TestFlagsPairFromTheStartOfTheirRun(t *testing.T) {
	s := "ab🇳🇵🇯🇵🇫🇷"
	for n := 0; n <= utf8.RuneCountInString(s); n++ {
		head := bot.ClusterHead(s, n)
		if rest := strings.TrimPrefix(s, head); utf8.RuneCountInString(head) > n ||
			strings.HasPrefix(rest, "🇵") || strings.HasPrefix(rest, "🇷") {
			t.Errorf("the first %d code points of %q are %q, which splits a flag", n, s, head)
		}
	}
}

// A command too long to repeat whole is repeated up to a whole character as it is shown.
func TestALongCommandIsRepeatedUpToAWholeCharacter(t *testing.T) {
	for _, c := range clusters {
		if strings.TrimSpace(c) == "" {
			continue // a line break the repeat trims away
		}
		for _, lead := range []string{"", "x", "xy"} {
			cmd := "/gpu request 1 because " + lead + strings.Repeat(c, bot.MaxShownCommand)
			got := bot.TooLateToRun(cmd, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
			shown, _, _ := strings.Cut(got[strings.Index(got, "`")+1:], "`")
			head, ok := strings.CutSuffix(shown, "…")
			if !ok || strings.ReplaceAll(strings.TrimPrefix(head, "/gpu request 1 because "+lead), c, "") != "" {
				t.Errorf("a long command of %q is repeated as %q", c, shown[max(0, len(shown)-24):])
			}
		}
	}
}

// A text shortened to a limit ends with "…" after a whole character as shown, within the limit.
func TestClipEndsAfterAWholeCharacter(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"L-42", 4, "L-42"},
		{"L-42 ends", 4, "L-4…"},
		{"ab🇳🇵🇯🇵", 5, "ab🇳🇵…"},
		{"ab🇳🇵🇯🇵", 4, "ab…"},
		{"e\u0301e\u0301e\u0301", 4, "e\u0301…"},
		{"L-42", 1, "…"},
		{"L-42", 0, ""},
	} {
		got := bot.Clip(tc.s, tc.n)
		if got != tc.want || utf8.RuneCountInString(got) > tc.n {
			t.Errorf("%q clipped to %d is %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
