package commands

import (
	"strings"
	"testing"
	"time"
)

const sydneyPolicy = "testdata/sydney.yaml"

// Request again leaves out the data class where a request leaving it out gets the same one: for a
// team the policy lists without data classes, and for one it does not list, that is public.
func TestRequestAgainLeavesOutPublicWhereItIsTheDefault(t *testing.T) {
	for _, user := range []string{"bo@wattle.example", "nia@wattle.example"} {
		h := newHarnessOn(t, sydneyPolicy)
		mustOK(t, h.say(user, "/gpu request 1 notebook for 1h"))
		h.advance(90 * time.Minute)
		again := againIn(t, h.notices(user))
		if again != "/gpu request 1 notebook for 1h" {
			t.Errorf("%s: Request again is %q; want /gpu request 1 notebook for 1h", user, again)
		}
	}
}

// No lease lasts longer than 30 days, approved or not: an extension that would take one past it
// is refused, with the longest extension left, which works when typed; nothing waits for a budget
// owner meanwhile.
func TestAnExtensionPastThirtyDaysInAllIsRefused(t *testing.T) {
	h := newHarnessOn(t, sydneyPolicy)
	const ravi = "ravi@wattle.example"
	id := leaseIn(t, mustOK(t, h.say(ravi, "/gpu request 1 notebook for 5h")).Text).String()
	before := h.leaseCount()
	r := h.say(ravi, "/gpu extend "+id+" 30d")
	msg, ex, _ := strings.Cut(r.Text, " Example: ")
	if !r.Error || !strings.Contains(msg, "30d") || ex != "/gpu extend "+id+" 29d19h" {
		t.Fatalf("extending a 5h lease by 30d: %q; want it refused, with /gpu extend %s 29d19h", r.Text, id)
	}
	if n := h.leaseCount(); n != before {
		t.Errorf("the refused extension made %d request(s)", n-before)
	}
	r = h.say(ravi, ex)
	if r.Error || !strings.Contains(r.Text, "waits for approval") {
		t.Fatalf("%s: %q; want it waiting for a budget owner", ex, r.Text)
	}
	ext := leaseIn(t, strings.TrimPrefix(r.Text, "Extending "+id)).String()
	if r := h.say("priya@wattle.example", "/gpu approve "+ext); r.Error || !strings.Contains(r.Text, "30d in all") {
		t.Fatalf("approving %s: %q; want %s to last 30d in all", ext, r.Text, id)
	}
	if r := h.say(ravi, "/gpu extend "+id+" 1h"); !r.Error || !strings.Contains(r.Text, "30d") || strings.Contains(r.Text, "Example: /gpu extend") {
		t.Errorf("extending a lease of 30d by 1h: %q; want it refused as the longest a lease may last, with no extension as its example", r.Text)
	}
}

// The expiry warning of a lease near the 30 days no lease goes past offers what is left of them,
// and its Extend button is not refused when pressed.
func TestTheExpiryWarningNearThirtyDaysOffersWhatIsLeft(t *testing.T) {
	h := newHarnessOn(t, sydneyPolicy)
	const ravi = "ravi@wattle.example"
	id := leaseIn(t, mustOK(t, h.say(ravi, "/gpu request 1 notebook for 5h")).Text).String()
	r := mustOK(t, h.say(ravi, "/gpu extend "+id+" 29d18h30m"))
	mustOK(t, h.say("priya@wattle.example", "/gpu approve "+leaseIn(t, strings.TrimPrefix(r.Text, "Extending "+id)).String()))
	h.notices(ravi)
	h.advance(29*24*time.Hour + 23*time.Hour + 11*time.Minute)
	var extend string
	for _, n := range h.notices(ravi) {
		for _, a := range n.Actions {
			if strings.HasPrefix(a.Label, "Extend") {
				extend = a.Command
			}
		}
	}
	if extend != "/gpu extend "+id+" 30m" {
		t.Fatalf("the expiry warning of a lease of 29d23h30m offers %q; want /gpu extend %s 30m", extend, id)
	}
	if r := h.say(ravi, extend); r.Error {
		t.Errorf("%s: %q", extend, r.Text)
	}
}

// Releasing a quota increase, or cancelling one or an extension that waits, says what that does
// to the quota or the lease, not what GPU-hours it used, which it never had.
func TestReleasingAQuotaIncreaseOrAnExtensionSaysWhatItChanges(t *testing.T) {
	h := newHarnessOn(t, sydneyPolicy)
	const ravi = "ravi@wattle.example"
	q := leaseIn(t, mustOK(t, h.say(ravi, "/gpu quota request +1 tiny for 2d because ci")).Text).String()
	r := mustOK(t, h.say(ravi, "/gpu release "+q))
	if strings.Contains(r.Text, "GPU-hours") || !strings.Contains(r.Text, "tiny") || !strings.Contains(r.Text, "stays at 2") {
		t.Errorf("cancelling a quota request: %q; want it to say the quota of tiny stays at 2", r.Text)
	}
	q = leaseIn(t, mustOK(t, h.say(ravi, "/gpu quota request +1 tiny for 2d because ci")).Text).String()
	mustOK(t, h.say("priya@wattle.example", "/gpu approve "+q))
	r = mustOK(t, h.say(ravi, "/gpu release "+q))
	if strings.Contains(r.Text, "GPU-hours") || !strings.Contains(r.Text, "back to 2") {
		t.Errorf("releasing an approved quota increase: %q; want it to say the quota of tiny is back to 2", r.Text)
	}
	id := leaseIn(t, mustOK(t, h.say(ravi, "/gpu request 1 notebook for 5h")).Text).String()
	r = mustOK(t, h.say(ravi, "/gpu extend "+id+" 3h"))
	ext := leaseIn(t, strings.TrimPrefix(r.Text, "Extending "+id)).String()
	r = mustOK(t, h.say(ravi, "/gpu release "+ext))
	if strings.Contains(r.Text, "GPU-hours") || !strings.Contains(r.Text, id+" still ends at") {
		t.Errorf("cancelling an extension: %q; want it to say when %s still ends", r.Text, id)
	}
}

// A zero duration written without "for" is refused as no length of time too, not taken for a
// class.
func TestABareZeroDurationIsRefusedAsNoLengthOfTime(t *testing.T) {
	for _, in := range []string{"/gpu request 1 notebook 0h", "/gpu request 1 0h", "/gpu request 0m", "/gpu request 2 notebook 0h0m"} {
		_, err := ParseFor(in, []string{"notebook", "bulk"})
		if err == nil || !strings.Contains(err.Error(), "no length of time") {
			t.Errorf("%s: %v; want it refused as no length of time", in, err)
		}
	}
}

// Extending a quota request is refused with an example that works, not a made-up lease id.
func TestExtendingAQuotaRequestIsRefusedWithAWorkingExample(t *testing.T) {
	h := newHarnessOn(t, sydneyPolicy)
	const ravi = "ravi@wattle.example"
	q := leaseIn(t, mustOK(t, h.say(ravi, "/gpu quota request +1 tiny for 2d because ci")).Text).String()
	refusedWithAWorkingExample(t, h, ravi, "/gpu extend "+q+" 1h", "is a quota request, not a workspace lease")
	id := leaseIn(t, mustOK(t, h.say(ravi, "/gpu request 1 notebook for 5h")).Text).String()
	r := mustOK(t, h.say(ravi, "/gpu extend "+id+" 3h"))
	ext := leaseIn(t, strings.TrimPrefix(r.Text, "Extending "+id)).String()
	refusedWithAWorkingExample(t, h, ravi, "/gpu extend "+ext+" 1h", "is an extension request, not a workspace lease")
}
