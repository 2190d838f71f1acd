package commands

import (
	"strings"
	"testing"
)

// A reason (a quota request's, a denial's) is bounded: one over MaxReason characters is refused
// in one sentence with an example that works, and nothing is made. Characters that change how
// chat shows the text around them without showing themselves (a right-to-left override, zero-width
// spaces) are not kept, so the approvers read what was typed in the order it was typed.
func TestReasonsAreBoundedAndKeepNoInvisibleCharacters(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	long := strings.Repeat("a", MaxReason+1)
	r := h.say("rita@borealis.example", "/gpu quota request +2 dev for 1d because "+long)
	if !r.Error || !strings.HasPrefix(r.Text, "The reason is 501 characters long; keep it to 500 or fewer. Example: /gpu ") || len(r.Text) > 300 {
		t.Fatalf("a reason of %d characters: %s", MaxReason+1, r.Text)
	}
	if ex := r.Text[strings.Index(r.Text, "Example: ")+len("Example: "):]; h.say("rita@borealis.example", ex).Error {
		t.Errorf("the refusal's example %q does not work", ex)
	}
	if got := h.say("rita@borealis.example", "/gpu list").PlainText(); strings.Contains(got, "L-2") {
		t.Errorf("the refused request made a lease beside its example's L-1: %s", got)
	}

	r = mustOK(t, h.say("rita@borealis.example", "/gpu quota request +2 dev for 1d because need\u202e gnorw si siht\u202c more\u200b GPUs\u2066 now\u2069"))
	id := leaseIn(t, r.Text)
	if l := h.lease(id); l.Because != "need gnorw si siht more GPUs now" {
		t.Errorf("the reason was kept as %q", l.Because)
	}
	for _, n := range h.notices("olga@borealis.example") {
		if strings.ContainsAny(n.PlainText(), "\u202e\u202c\u200b\u2066\u2069") {
			t.Errorf("the approvers read an invisible character: %q", n.PlainText())
		}
	}
	if r := h.say("rita@borealis.example", "/gpu quota request +2 dev because \u200b\u202e"); !r.Error || !strings.Contains(r.Text, `needs a reason after "because"`) {
		t.Errorf("a reason of invisible characters only: %s", r.Text)
	}

	big := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 5 dev for 1h")).Text)
	deny := "/gpu deny " + big.String() + " " + strings.Repeat("no ", 200)
	if r := h.say("olga@borealis.example", deny); !r.Error || !strings.HasPrefix(r.Text, "The reason is 599 characters long") {
		t.Errorf("a denial with a reason of 599 characters: %s", r.Text)
	}
	if l := h.lease(big); l.State != "pending_approval" {
		t.Errorf("the refused denial left %s %s", big, l.State)
	}
	mustOK(t, h.say("olga@borealis.example", "/gpu deny "+big.String()+" use\u202e dev"))
	if l := h.lease(big); l.State != "denied" {
		t.Errorf("%s is %s after its denial", big, l.State)
	}
	for _, n := range h.notices("rita@borealis.example") {
		if strings.Contains(n.PlainText(), "\u202e") {
			t.Errorf("the requester reads an invisible character: %q", n.PlainText())
		}
	}
}

// A data class is one word: one that is no word (very long, or with markup) is
// refused before anything is made, and a team whose policy writes its data classes in capitals is
// granted its own data class without approval.
func TestADataClassIsOneWord(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	for _, dc := range []string{strings.Repeat("d", 5000), "<!channel>", "@everyone", "x$(id)"} {
		r := h.say("rita@borealis.example", "/gpu request 1 dev for 1h data "+dc)
		if !r.Error || !strings.Contains(r.Text, "is not a data class, which is one word") || len(r.Text) > 300 {
			t.Errorf("data class %.20q: %s", dc, r.Text)
		}
	}
	if got := h.say("rita@borealis.example", "/gpu list").Text; !strings.Contains(got, "no leases") {
		t.Errorf("refused requests made leases: %s", got)
	}

	h = newHarnessOn(t, policyVariant(t, otherPolicy,
		"    data_classes: [open]\n    storage: {path: /data/robotics", "    data_classes: [Open, PII]\n    storage: {path: /data/robotics",
		"exceptions:\n", "exceptions:\n  - {name: data, when: \"!(request.data_class in team.data_classes)\", why: Not cleared for this data class}\n"))
	for _, line := range []string{"/gpu request 1 dev for 1h", "/gpu request 1 dev for 1h data pii", "/gpu request 1 dev for 1h data PII"} {
		if r := h.say("rita@borealis.example", line); r.Error || !strings.Contains(r.Text, "is active") {
			t.Errorf("%s by a team cleared for [Open, PII]: %s", line, r.Text)
		}
	}
}

// A duration longer than any lease may last (over ten years) is refused as too long, whatever the
// command and wherever the request puts it, never as a word that is not part of the request.
func TestADurationTooLongIsToldSo(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	id := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 1 dev for 1h")).Text)
	for _, line := range []string{
		"/gpu request 1 dev 10000w",
		"/gpu request 1 dev for 600w",
		"/gpu estimate 1 dev 99999d",
		"/gpu extend " + id.String() + " 5000w",
		"/gpu quota request +1 dev for 9999w because a long project",
	} {
		r := h.say("rita@borealis.example", line)
		if !r.Error || !strings.Contains(r.Text, "is longer than any lease may last (10 years at most); write a duration like ") {
			t.Errorf("%s: %s", line, r.Text)
			continue
		}
		ex := strings.ReplaceAll(r.Text[strings.Index(r.Text, "Example: ")+len("Example: "):], "L-42", id.String())
		if r := h.say("rita@borealis.example", ex); r.Error {
			t.Errorf("%s: the example %q does not work: %s", line, ex, r.Text)
		}
	}
}
