package commands

import (
	"strings"
	"testing"
)

// A data class no team has, but close to one the policy knows (a typo), still goes to a budget
// owner as a new data class; the reply says which one was likely meant, with the request typed
// back with it, and how to withdraw the one made. A refusal of such a request says so too, and
// its example names the data class meant. A data class another team has, or one far from any,
// gets no such hint.
func TestADataClassTypoIsPointedOut(t *testing.T) {
	h := newHarnessOn(t, egretPolicy)
	const nils, olga = "nils@egret.example", "olga@egret.example"

	r := mustOK(t, h.say(nils, "/gpu request 1 kestrel for 2h data confidental"))
	id := leaseIn(t, r.Text).String()
	if !strings.Contains(r.Text, "waits for approval") {
		t.Fatalf("a request of a data class no team has: %q; want it to wait for a budget owner", r.Text)
	}
	for _, want := range []string{`"confidental"`, "did you mean confidential?", "/gpu request 1 kestrel for 2h data confidential", "/gpu cancel " + id} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("the reply %q does not say %q", r.Text, want)
		}
	}
	// The request typed back is accepted as it is, and needs no decision.
	back := mustOK(t, h.say(nils, "/gpu request 1 kestrel for 2h data confidential"))
	if strings.Contains(back.Text, "waits for approval") || strings.Contains(back.Text, "did you mean") {
		t.Errorf("the request typed back answered %q", back.Text)
	}

	// Another team's data class, in a different case, and one far from any: no hint.
	for _, cmd := range []string{"/gpu request 1 kestrel for 1h data Restricted", "/gpu request 1 kestrel for 1h data zebra"} {
		if r := mustOK(t, h.say(nils, cmd)); strings.Contains(r.Text, "did you mean") {
			t.Errorf("%s answered %q; want no hint", cmd, r.Text)
		}
	}
	// A typo of another team's data class, in capitals: pointed out, lower case.
	if r := mustOK(t, h.say(nils, "/gpu request 1 kestrel for 1h data RESTRCTED")); !strings.Contains(r.Text, "did you mean restricted?") ||
		!strings.Contains(r.Text, "/gpu request 1 kestrel for 1h data restricted") {
		t.Errorf("a typo of restricted answered %q", r.Text)
	}

	// Refused for another reason: the refusal says it too, and its example carries the class meant.
	r = h.say(nils, "/gpu request 1 kestral for 2h data confidental")
	if !r.Error {
		t.Fatalf("a request of no class answered %q", r.Text)
	}
	if ex := exampleIn(t, r); ex != "/gpu request 1 kestrel for 2h data confidential" || !strings.Contains(r.Text, "did you mean confidential?") {
		t.Errorf("the refusal %q; want it to say did you mean confidential?, with /gpu request 1 kestrel for 2h data confidential as its example", r.Text)
	}
	if r := mustOK(t, h.say(nils, exampleIn(t, r))); strings.Contains(r.Text, "waits for approval") {
		t.Errorf("the example typed answered %q", r.Text)
	}
	h.notices(olga)
}

// The request typed back asks for the GPUs as they were asked, not the whole nodes they take.
func TestADataClassTypoTypesBackTheGPUsAsked(t *testing.T) {
	h := newHarnessOn(t, egretPolicy)
	r := mustOK(t, h.say("nils@egret.example", "/gpu request 5 kestrel for 2h data confidental"))
	if want := "/gpu request 5 kestrel for 2h data confidential,"; !strings.Contains(r.Text, want) {
		t.Errorf("the reply %q does not say %q", r.Text, want)
	}
}
