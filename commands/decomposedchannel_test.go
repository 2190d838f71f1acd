package commands

import (
	"strings"
	"testing"
)

// A team's channel typed with a combining accent (s a n t e and U+0301, as text copied from macOS
// often holds #santé) is the same channel as the policy's #santé, which looks the same: it names
// team sante-donnees wherever a channel names a team, as typed with the one-character é.
func TestAChannelTypedWithACombiningAccentNamesItsTeam(t *testing.T) {
	h := newHarnessOn(t, baobabPolicy)
	for _, ask := range []string{"/gpu quota #sante\u0301", "/gpu quota #e\u0301quipe-vision"} {
		composed := h.say("koffi@baobab.example", strings.NewReplacer("e\u0301", "\u00e9").Replace(ask))
		r := h.say("koffi@baobab.example", ask)
		if r.Error || r.Text != composed.Text {
			t.Errorf("%+q: %q; want what %q answers: %q", ask, r.Text, strings.NewReplacer("e\u0301", "é").Replace(ask), composed.Text)
		}
	}
}
