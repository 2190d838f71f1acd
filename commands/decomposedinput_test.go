package commands

import (
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// Text typed with an accent as a letter and a combining mark (e, U+0301: what macOS copy-paste
// gives) is the text typed with the accented letter (é) as one character: a request asked again
// with its reason pasted so is the request already asked, and what is kept and shown of it is
// written as it is typed, in Unicode normal form C.
func TestTextWithCombiningAccentsIsTheTextItLooksLike(t *testing.T) {
	for _, pc := range askedTwicePolicies {
		h := newHarnessOn(t, pc.policy)
		composed := "/gpu quota request +1 " + pc.class + " because r\u00e9sum\u00e9 d\u00fcnn work"
		decomposed := "/gpu quota request +1 " + pc.class + " because re\u0301sume\u0301 du\u0308nn work"
		first := h.say(pc.user, decomposed)
		id := leaseIn(t, first.Text)
		before := h.allLeases()
		askedBefore(t, h, pc.policy+": "+composed, h.say(pc.user, composed), id, before)
		for _, n := range h.notices(pc.owner) {
			text := n.PlainText()
			if !strings.Contains(text, "r\u00e9sum\u00e9 d\u00fcnn work") || !norm.NFC.IsNormalString(text) {
				t.Errorf("%s: the budget owner's notice is not written in NFC: %+q", pc.policy, text)
			}
		}
		if s := h.say(pc.user, "/gpu status "+id.String()).PlainText(); !strings.Contains(s, "r\u00e9sum\u00e9 d\u00fcnn work") {
			t.Errorf("%s: /gpu status %s: %q", pc.policy, id, s)
		}
	}
}
