package commands

import (
	"strings"
	"testing"
)

// A malformed duration or reason after a lease id the asker may not name (another's lease, one
// that does not exist, one no longer waiting for their decision) is refused with an example
// that names a lease of their own, or the list of them: before, "/gpu extend L-1 x" by someone
// without L-1 gave "/gpu extend L-1 2h" as its example, which was refused in turn as "You have no
// lease L-1". Another's lease and one that does not exist are answered alike.
func TestABadArgumentAfterALeaseNotOnesOwnGivesAnExampleThatWorks(t *testing.T) {
	h := newHarness(t)
	alices := leaseIn(t, mustOK(t, h.say("alice@acme.example", "/gpu request 1 interactive for 2h")).Text).String()
	pending := leaseIn(t, mustOK(t, h.say("alice@acme.example", "/gpu request 1 train for 2h exclusive")).Text).String()
	if l := h.lease(leaseIn(t, pending)); l.State != "pending_approval" {
		t.Fatalf("%s is %s; want it waiting for a decision", pending, l.State)
	}
	long := strings.Repeat("no ", 200)
	for _, c := range []struct{ who, line, want string }{
		{"bob@acme.example", "/gpu extend " + alices + " <!channel>", "is not a duration"},
		{"bob@acme.example", "/gpu extend L-999 soon", "is not a duration"},
		{"maya@acme.example", "/gpu extend " + alices + " ２h", "is written with digits other than 0-9"},
		{"lee@acme.example", "/gpu deny " + pending + " " + long, "The reason is 599 characters long"},
		{"lee@acme.example", "/gpu deny L-999 " + long, "The reason is 599 characters long"},
		{"alice@acme.example", "/gpu extend " + pending + " x", "is not a duration"},
	} {
		refusedWithAWorkingExample(t, h, c.who, c.line, c.want)
	}
	// With a lease of their own, the example names it.
	bobs := leaseIn(t, mustOK(t, h.say("bob@acme.example", "/gpu request 1 interactive for 1h")).Text).String()
	if r := h.say("bob@acme.example", "/gpu extend "+alices+" x"); !strings.HasSuffix(r.Text, "Example: /gpu extend "+bobs+" 2h") {
		t.Errorf("/gpu extend %s x by bob, who holds %s: %s", alices, bobs, r.Text)
	}
	// The lease typed stays in the example where it may be named.
	if r := h.say("alice@acme.example", "/gpu extend "+alices+" x"); !strings.HasSuffix(r.Text, "Example: /gpu extend "+alices+" 2h") {
		t.Errorf("/gpu extend %s x by its holder: %s", alices, r.Text)
	}
	if r := h.say("dana@acme.example", "/gpu deny "+pending+" "+long); !strings.Contains(r.Text, "Example: /gpu deny "+pending+" ") {
		t.Errorf("/gpu deny %s with a long reason by its approver: %s", pending, r.Text)
	}
	// Another's lease reads as one that does not exist.
	other := h.say("maya@acme.example", "/gpu extend "+alices+" x").Text
	none := h.say("maya@acme.example", "/gpu extend L-999 x").Text
	if strings.ReplaceAll(other, alices, "L-999") != none {
		t.Errorf("another's lease is answered unlike one that does not exist:\n%s\n%s", other, none)
	}
}

// A malformed duration in an extension of a lease whose earlier extension still waits for a
// budget owner gets an example that works: not another extension of that lease, which would be
// refused while the first waits.
func TestABadDurationWhileAnExtensionWaitsGivesAnExampleThatWorks(t *testing.T) {
	h := newHarness(t)
	id := leaseIn(t, mustOK(t, h.say("alice@acme.example", "/gpu request 1 interactive for 2h")).Text).String()
	ext := mustOK(t, h.say("alice@acme.example", "/gpu extend "+id+" 8h"))
	if l := h.lease(leaseIn(t, strings.ReplaceAll(ext.Text, id, ""))); l.State != "pending_approval" {
		t.Fatalf("the extension is %s: %s", l.State, ext.Text)
	}
	refusedWithAWorkingExample(t, h, "alice@acme.example", "/gpu extend "+id+" soon", "is not a duration")
	other := leaseIn(t, mustOK(t, h.say("alice@acme.example", "/gpu request 1 interactive for 1h")).Text).String()
	if r := h.say("alice@acme.example", "/gpu extend "+id+" soon"); !strings.HasSuffix(r.Text, "Example: /gpu extend "+other+" 2h") {
		t.Errorf("with %s free to extend: %s", other, r.Text)
	}
}
