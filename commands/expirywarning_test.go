package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/qm"
)

// warnPolicy is an installation unlike the example: Berlin time, a scratch class that warns 20
// minutes before a lease ends, a class that writes no expiry_warning (15 minutes) and one that
// turns the warning off.
const warnPolicy = `organization: Kestrel Institut
currency: EUR
timezone: Europe/Berlin
classes:
  - name: scratch
    sku: A10
    max_gpus: 1
    max_duration: 5h30m
    idle_timeout: 20m
    idle_grace: 5m
    expiry_warning: 20m
  - name: marathon
    sku: H100
    max_gpus: 2
    max_duration: 24h
  - name: silent
    sku: L4
    max_gpus: 1
    max_duration: 8h
    expiry_warning: 0
default_quota: {gpus: {scratch: 1, marathon: 0, silent: 0}}
teams:
  - name: falken
    idp_groups: [g-falken]
    budget_owners: [greta@kestrel.example]
    quota: {gpus: {scratch: 4, marathon: 2, silent: 2}}
exceptions:
  - name: lang
    when: request.duration > class.max_duration
    why: Longer than the class allows
approvals:
  fallback_approvers: [ops@kestrel.example]
backend: sim
directory:
  - {user: udo@kestrel.example, groups: [g-falken]}
  - {user: greta@kestrel.example, groups: [g-falken]}
  - {user: ops@kestrel.example, groups: [ops]}
sim:
  nodes:
    - {name: a10, count: 1, class: scratch, gpus: 4}
    - {name: h100, count: 1, class: marathon, gpus: 2}
    - {name: l4, count: 1, class: silent, gpus: 2}
`

const udo = "udo@kestrel.example"

func newWarnHarness(t *testing.T) *harness {
	t.Helper()
	f := filepath.Join(t.TempDir(), "kestrel.yaml")
	if err := os.WriteFile(f, []byte(warnPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	return newHarnessOn(t, f)
}

// expiryWarnings are the expiry warnings among rs.
func expiryWarnings(rs []bot.Reply) []bot.Reply {
	var out []bot.Reply
	for _, r := range rs {
		if strings.Contains(r.Text, " ends at ") {
			out = append(out, r)
		}
	}
	return out
}

// A running lease is warned once, at its end less its class's expiry_warning, in the policy's
// time zone, with an Extend and a Release button; not before, and not again.
func TestExpiryWarningComesOnceBeforeTheEnd(t *testing.T) {
	h := newWarnHarness(t)
	id := leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 scratch for 2h")).Text)
	h.notices(udo)
	h.advance(time.Hour + 39*time.Minute + 59*time.Second)
	if got := h.notices(udo); len(got) != 0 {
		t.Fatalf("20m and 1s before the end udo got %q", texts(got))
	}
	if next, _ := h.svc.NextDue(t.Context()); !next.Equal(start.Add(time.Hour + 40*time.Minute)) {
		t.Errorf("the lifecycle loop next wakes at %v, want the warning's time %v", next, start.Add(time.Hour+40*time.Minute))
	}
	h.advance(time.Second)
	got := h.notices(udo)
	want := id.String() + " ends at Mon 30 Nov 18:00 CET (in 20m); extend it with /gpu extend " + id.String() + " 1h."
	if len(got) != 1 || got[0].Text != want {
		t.Fatalf("at the end less 20m udo got %q\nwant %q", texts(got), want)
	}
	warning := got[0]
	wantActions := []bot.Action{{Label: "Extend 1h", Command: "/gpu extend " + id.String() + " 1h", Style: "primary"},
		{Label: "Release", Command: "/gpu release " + id.String(), Style: "danger"}}
	if a := got[0].Actions; len(a) != 2 || a[0] != wantActions[0] || a[1] != wantActions[1] {
		t.Errorf("the warning's buttons are %+v, want %+v", a, wantActions)
	}
	h.advance(19*time.Minute + 59*time.Second)
	if got := h.notices(udo); len(got) != 0 {
		t.Errorf("after the warning, before the end, udo got %q", texts(got))
	}
	h.advance(time.Minute)
	all := h.notices(udo)
	if got := posted(all); len(got) != 1 || !strings.HasPrefix(got[0].Text, id.String()+" expired at Mon 30 Nov 18:00 CET") {
		t.Errorf("at the end udo got %q", texts(got))
	}
	// The warning no longer offers Extend and Release: it says the lease expired.
	var edited bool
	for _, e := range editsIn(all) {
		if e.Ref == warning.Ref && e.EditOnly && len(e.Actions) == 0 && strings.HasPrefix(e.Text, id.String()+" expired at Mon 30 Nov 18:00 CET") {
			edited = true
		}
	}
	if warning.Ref == "" || !edited {
		t.Errorf("the expiry warning was not edited to say %s expired, without buttons: %+v", id, editsIn(all))
	}
}

// The warning's Extend button extends the lease at once; the new end is warned of in its turn.
func TestExpiryWarningIsSentAgainForAnExtendedEnd(t *testing.T) {
	h := newWarnHarness(t)
	id := leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 scratch for 2h")).Text)
	h.notices(udo)
	h.advance(time.Hour + 45*time.Minute)
	warned := h.notices(udo)
	if len(warned) != 1 || len(warned[0].Actions) == 0 {
		t.Fatalf("udo got %q", texts(warned))
	}
	r := mustOK(t, h.say(udo, warned[0].Actions[0].Command))
	if !strings.Contains(r.Text, "Mon 30 Nov 19:00 CET") || h.lease(id).State != qm.Active {
		t.Fatalf("the Extend button: %q, lease %s", r.Text, h.lease(id).State)
	}
	h.advance(54*time.Minute + 59*time.Second) // 18:39:59
	if got := h.notices(udo); len(got) != 0 {
		t.Fatalf("before the new end less 20m udo got %q", texts(got))
	}
	h.advance(time.Second)
	want := id.String() + " ends at Mon 30 Nov 19:00 CET (in 20m); extend it with /gpu extend " + id.String() + " 1h."
	if got := h.notices(udo); len(got) != 1 || got[0].Text != want {
		t.Fatalf("at the new end less 20m udo got %q\nwant %q", texts(got), want)
	}
	h.advance(21 * time.Minute)
	if got := posted(h.notices(udo)); len(got) != 1 || !strings.Contains(got[0].Text, "expired") {
		t.Errorf("after the new end udo got %q", texts(got))
	}
}

// The Extend button offers what the class grants without approval when that is less than an
// hour, and the hour, saying it goes past the class's limit, when nothing is left.
func TestExpiryWarningOffersWhatTheClassAllows(t *testing.T) {
	h := newWarnHarness(t)
	short := leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 scratch for 5h")).Text)
	full := leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 scratch for 5h30m")).Text)
	h.notices(udo)
	h.advance(4*time.Hour + 40*time.Minute)
	got := h.notices(udo)
	if len(got) != 1 || got[0].Text != short.String()+" ends at Mon 30 Nov 21:00 CET (in 20m); extend it with /gpu extend "+short.String()+" 30m." ||
		got[0].Actions[0].Label != "Extend 30m" {
		t.Fatalf("the warning of a 5h lease of a 5h30m class: %q %+v", texts(got), got)
	}
	if r := mustOK(t, h.say(udo, got[0].Actions[0].Command)); !strings.Contains(r.Text, "21:30 CET") {
		t.Errorf("Extend 30m: %q", r.Text)
	}
	h.advance(30 * time.Minute)
	got = expiryWarnings(h.notices(udo))
	want := []string{
		short.String() + " ends at Mon 30 Nov 21:30 CET (in 20m); extend it with /gpu extend " + short.String() + " 1h, which goes past the 5h30m class scratch gives without approval.",
		full.String() + " ends at Mon 30 Nov 21:30 CET (in 20m); extend it with /gpu extend " + full.String() + " 1h, which goes past the 5h30m class scratch gives without approval.",
	}
	if len(got) != 2 || got[0].Text != want[0] || got[1].Text != want[1] {
		t.Fatalf("the warnings of leases at the class's limit: %q\nwant %q", texts(got), want)
	}
	r := mustOK(t, h.say(udo, got[1].Actions[0].Command))
	if !strings.Contains(r.Text, "waits for approval") || !strings.Contains(r.Text, "lang") {
		t.Errorf("Extend 1h past the class's limit: %q", r.Text)
	}
}

// A lease shorter than twice the warning time, one released before it, and one of a class with
// expiry_warning: 0 are not warned; a class without the key warns 15 minutes before.
func TestNoExpiryWarningForShortReleasedOrSilentLeases(t *testing.T) {
	h := newWarnHarness(t)
	shortID := leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 scratch for 39m")).Text)
	released := leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 scratch for 2h")).Text)
	silent := leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 silent for 2h")).Text)
	long := leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 marathon for 2h")).Text)
	h.notices(udo)
	h.advance(time.Hour)
	mustOK(t, h.say(udo, "/gpu release "+released.String()))
	h.advance(3 * time.Hour)
	got := expiryWarnings(h.notices(udo))
	want := long.String() + " ends at Mon 30 Nov 18:00 CET (in 15m); extend it with /gpu extend " + long.String() + " 1h."
	if len(got) != 1 || got[0].Text != want {
		t.Errorf("warnings: %q\nwant only %q (not %s, %s or %s)", texts(got), want, shortID, released, silent)
	}
}

// A lease warned as idle whose reclaim comes before its end gets no expiry warning meanwhile;
// kept, it gets one at once when its warning time has passed.
func TestIdleWarnedLeaseIsNotAlsoWarnedOfItsEnd(t *testing.T) {
	h := newWarnHarness(t)
	id := leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 scratch for 2h")).Text)
	h.notices(udo)
	h.advance(time.Hour + 17*time.Minute)
	h.sim.SetUtilization(h.lease(id), 0)
	h.advance(20*time.Minute + 30*time.Second) // idle 20m: warned, reclaim at 17:42:30 CET
	if got := h.notices(udo); len(got) != 1 || !strings.Contains(got[0].Text, "no GPU activity") {
		t.Fatalf("idle warning: %q", texts(got))
	}
	h.advance(4 * time.Minute) // 17:41:30, past 17:40, the expiry warning's time
	if got := h.notices(udo); len(got) != 0 {
		t.Fatalf("an idle-warned lease whose reclaim comes first got %q", texts(got))
	}
	h.sim.SetUtilization(h.lease(id), 90)
	mustOK(t, h.say(udo, "/gpu keep "+id.String()))
	h.advance(time.Minute)
	got := expiryWarnings(h.notices(udo))
	if len(got) != 1 || !strings.HasPrefix(got[0].Text, id.String()+" ends at Mon 30 Nov 18:00 CET (in 18m)") {
		t.Errorf("kept inside its warning time, udo got %q", texts(got))
	}
}

// newWarnHarnessWith is newWarnHarness on warnPolicy with each old text replaced by the new.
func newWarnHarnessWith(t *testing.T, oldNew ...string) *harness {
	t.Helper()
	f := filepath.Join(t.TempDir(), "kestrel.yaml")
	if err := os.WriteFile(f, []byte(warnPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	return newHarnessOn(t, policyVariant(t, f, oldNew...))
}

// The warning's Extend offer is judged as /gpu extend judges it, the team's quota included: with
// team falken's 2 weekly GPU-hours used, the hour it offers is said to wait for a budget owner,
// past the team's weekly GPU-hours, where a rule sends it to one, and said to be refused, with no
// Extend button, where none does; each time as the button's command then finds.
func TestExpiryWarningSaysWhatTheTeamsQuotaMakesOfTheExtension(t *testing.T) {
	weekly := []string{"quota: {gpus: {scratch: 4, marathon: 2, silent: 2}}", "quota: {gpus: {scratch: 4, marathon: 2, silent: 2}, gpu_hours_per_week: 2}"}
	rule := []string{"exceptions:\n", "exceptions:\n  - name: weekly-hours\n    when: usage.gpu_hours_week + request.gpu_hours > team.quota.gpu_hours_per_week\n    why: Beyond the team's weekly GPU-hours\n"}

	h := newWarnHarnessWith(t, append(weekly, rule...)...)
	id := leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 scratch for 2h")).Text)
	h.notices(udo)
	h.advance(time.Hour + 40*time.Minute)
	got := expiryWarnings(h.notices(udo))
	want := id.String() + " ends at Mon 30 Nov 18:00 CET (in 20m); extend it with /gpu extend " + id.String() +
		" 1h, which will wait for a budget owner because it takes team falken past its quota, to 3 of its 2 GPU-hours this week."
	if len(got) != 1 || got[0].Text != want {
		t.Fatalf("the warning with the team's weekly GPU-hours used: %q\nwant %q", texts(got), want)
	}
	if len(got[0].Actions) != 2 || got[0].Actions[0].Label != "Extend 1h" {
		t.Fatalf("the warning's buttons: %+v", got[0].Actions)
	}
	if r := mustOK(t, h.say(udo, got[0].Actions[0].Command)); !strings.Contains(r.Text, "waits for approval") {
		t.Errorf("its Extend button: %q, want the extension to wait for approval", r.Text)
	}

	h = newWarnHarnessWith(t, weekly...) // no rule sends it to a budget owner: /gpu extend refuses it
	id = leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 scratch for 2h")).Text)
	h.notices(udo)
	h.advance(time.Hour + 40*time.Minute)
	got = expiryWarnings(h.notices(udo))
	extend := "/gpu extend " + id.String() + " 1h"
	if len(got) != 1 || !strings.HasPrefix(got[0].Text, id.String()+" ends at Mon 30 Nov 18:00 CET (in 20m); "+extend+" would be refused now: Team falken has 0 of its 2 GPU-hours left this week") {
		t.Fatalf("the warning with no rule to send the extension to a budget owner: %q", texts(got))
	}
	if a := got[0].Actions; len(a) != 1 || a[0].Label != "Release" {
		t.Errorf("a warning whose extension would be refused offers %+v, want Release alone", a)
	}
	if r := h.say(udo, extend); !r.Error || !strings.Contains(r.Text, "GPU-hours left this week") {
		t.Errorf("%s: %q, want the refusal the warning announced", extend, r.Text)
	}
}

// An expiry warning is recorded in the lease's history, as an idle warning is.
func TestExpiryWarningIsInTheLeasesHistory(t *testing.T) {
	h := newWarnHarness(t)
	id := leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 scratch for 2h")).Text)
	h.advance(time.Hour + 40*time.Minute)
	if len(expiryWarnings(h.notices(udo))) != 1 {
		t.Fatal("no expiry warning")
	}
	r := mustOK(t, h.say(udo, "/gpu status "+id.String()))
	var history string
	for _, s := range r.Sections {
		if s.Title == "History" {
			history = s.Text
		}
	}
	if !strings.Contains(history, "Mon 30 Nov 17:40 CET  system: active → active (its owner was warned that it ends in 20m)") {
		t.Errorf("the history does not show the warning:\n%s", history)
	}
}
