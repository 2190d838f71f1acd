package commands

import "testing"

// Cancel on a lease that no longer waits (a workspace that runs, a quota increase in effect) is
// refused in one sentence, with /gpu release as the example that ends it on purpose.
func TestCancelOnWhatNoLongerWaitsIsOneSentence(t *testing.T) {
	h := newHarness(t)
	running := leaseIn(t, mustOK(t, h.say("alice@acme.example", "/gpu request 1 interactive for 2h")).Text)
	refusedWithAWorkingExample(t, h, "alice@acme.example", "/gpu cancel "+running.String(), "so Cancel does not end it")

	quota := leaseIn(t, mustOK(t, h.say("alice@acme.example", "/gpu quota request +1 train for 1d because a deadline")).Text)
	mustOK(t, h.say("dana@acme.example", "/gpu approve "+quota.String()))
	refusedWithAWorkingExample(t, h, "alice@acme.example", "/gpu cancel "+quota.String(), "so Cancel does not end it")
}
