package commands

import (
	"strings"
	"testing"
)

// ruleWords is what text says of the rule quota-increase: the words after "quota-increase: " up
// to the end of their sentence.
func ruleWords(t *testing.T, where, text string) string {
	t.Helper()
	_, after, ok := strings.Cut(text, "quota-increase: ")
	if !ok {
		t.Fatalf("%s: %q names no rule quota-increase with its why", where, text)
	}
	words, _, _ := strings.Cut(after, ". ")
	return strings.TrimSuffix(words, ".")
}

// The budget owners' approval card and /gpu approvals word a quota increase's rule alike: the
// same why, not the request said again on the card and the rule's why in the list.
func TestTheApprovalCardAndApprovalsWordTheQuotaRuleAlike(t *testing.T) {
	for _, tc := range askedTwicePolicies {
		t.Run(tc.policy, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			mustOK(t, h.say(tc.user, "/gpu quota request +2 "+tc.class+" for 3d because a paper deadline"))
			var card string
			for _, n := range h.notices(tc.owner) {
				if strings.HasPrefix(n.Text, "Approval needed:") {
					card = n.Text
				}
			}
			if card == "" {
				t.Fatalf("%s got no approval card", tc.owner)
			}
			list := h.say(tc.owner, "/gpu approvals")
			if len(list.Sections) != 1 {
				t.Fatalf("/gpu approvals: %+v; want the one request", list)
			}
			onCard, inList := ruleWords(t, "the card", card), ruleWords(t, "/gpu approvals", list.Sections[0].Text)
			if onCard != inList {
				t.Errorf("the card says the rule is %q, /gpu approvals %q; want one wording", onCard, inList)
			}
			if strings.Contains(onCard, "paper deadline") || strings.Contains(onCard, "+2") {
				t.Errorf("the rule's why %q says the request again; want why it waits", onCard)
			}
		})
	}
}
