package commands

import (
	"strings"
	"testing"
)

// TestARefusedDecisionNamesAGroupsMembers: team equipe-vision's budget owners are the group
// chefs-baobab (aminata and moussa). aminata, approving her own request, was told "chefs-baobab
// decides", a group she is in, and awa "Only chefs-baobab or ops@baobab.example can decide", a
// group she cannot reach. Each names the group with the members who can decide, as the requester
// reads them, and the fallback approvers, who may decide any team's request.
func TestARefusedDecisionNamesAGroupsMembers(t *testing.T) {
	h := newHarnessOn(t, baobabPolicy)
	r := h.say("aminata@baobab.example", "/gpu request 3 cuivre for 1h")
	if r.Error || !strings.Contains(r.Text, "the group chefs-baobab (moussa@baobab.example) will decide") {
		t.Fatalf("request: %s", r.Text)
	}
	for who, want := range map[string]string{
		"aminata@baobab.example": "You cannot decide your own request L-1; only the group chefs-baobab (moussa@baobab.example) or ops@baobab.example can.",
		"awa@baobab.example":     "Only the group chefs-baobab (moussa@baobab.example) or ops@baobab.example can decide L-1, a request of team equipe-vision.",
	} {
		r := h.say(who, "/gpu approve L-1")
		if msg, _, _ := strings.Cut(r.Text, " Example: "); !r.Error || msg != want {
			t.Errorf("%s: %q, want %q", who, r.Text, want)
		}
	}
}
