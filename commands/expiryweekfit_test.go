package commands

import (
	"strings"
	"testing"
	"time"
)

// Where only a shorter extension than the hour fits what the team's week has left, with no rule
// that sends the hour to a budget owner, the expiry warning offers that shorter extension, in its
// text and on its Extend button, and the button's command is granted at once. Where not a minute
// fits, there is no Extend button, and Release stays.
func TestExpiryWarningOffersTheExtensionTheWeekHasRoomFor(t *testing.T) {
	quota := "quota: {gpus: {scratch: 4, marathon: 2, silent: 2}}"
	h := newWarnHarnessWith(t, quota, "quota: {gpus: {scratch: 4, marathon: 2, silent: 2}, gpu_hours_per_week: 2.5}")
	id := leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 scratch for 2h")).Text).String()
	h.notices(udo)
	h.advance(time.Hour + 40*time.Minute)
	got := expiryWarnings(h.notices(udo))
	extend := "/gpu extend " + id + " 30m"
	if len(got) != 1 || !strings.Contains(got[0].Text, "extend it with "+extend) || strings.Contains(got[0].Text, " 1h") {
		t.Fatalf("the warning with half a GPU-hour left this week: %q; want it to offer %s", texts(got), extend)
	}
	a := got[0].Actions
	if len(a) != 2 || a[0].Label != "Extend 30m" || a[0].Command != extend || a[1].Label != "Release" {
		t.Fatalf("the warning's buttons: %+v; want Extend 30m (%s) and Release", a, extend)
	}
	r := mustOK(t, h.say(udo, a[0].Command))
	if strings.Contains(r.Text, "waits for approval") {
		t.Errorf("its Extend button: %q, want the extension granted at once", r.Text)
	}

	// Not a minute left: Release alone.
	h = newWarnHarnessWith(t, quota, "quota: {gpus: {scratch: 4, marathon: 2, silent: 2}, gpu_hours_per_week: 2}")
	mustOK(t, h.say(udo, "/gpu request 1 scratch for 2h"))
	h.notices(udo)
	h.advance(time.Hour + 40*time.Minute)
	got = expiryWarnings(h.notices(udo))
	if len(got) != 1 || len(got[0].Actions) != 1 || got[0].Actions[0].Label != "Release" {
		t.Fatalf("the warning with the week used up: %q %+v; want Release alone", texts(got), got)
	}
}
