package commands

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
)

// chathamPolicy is a policy in a time zone of an odd offset (UTC+12:45, +13:45 in summer) whose
// weekly GPU-hours no rule reads: the quota itself binds every request.
const chathamPolicy = "testdata/chatham.yaml"

// chathamAt is a wall-clock time on the Chatham Islands.
func chathamAt(t *testing.T, y int, m time.Month, d, hh, mm int) time.Time {
	t.Helper()
	loc, err := time.LoadLocation("Pacific/Chatham")
	if err != nil {
		t.Fatal(err)
	}
	return time.Date(y, m, d, hh, mm, 0, 0, loc)
}

// quotaText is what /gpu quota tells who, every reply.
func (h *harness) quotaText(who string) string {
	return texts(h.bot.Handle(context.Background(), bot.Request{User: who, Text: "/gpu quota"}))
}

// A request late on a Sunday counts against each week by the hours that fall in it, as
// /gpu quota counts them: with 10 of 12 GPU-hours used, 3 hours at 23:00 put 1 in this week and
// 2 in the next, so it is granted, and the week shows 11 of 12.
func TestASundayNightRequestCountsOnlyItsHoursInTheWeek(t *testing.T) {
	h := newHarnessOn(t, chathamPolicy)
	const tama = "tama@chatham.example" // korimako: 12 GPU-hours a week
	h.clock.Set(chathamAt(t, 2026, 12, 7, 9, 0))
	mustOK(t, h.say(tama, "/gpu request 2 kiwi for 5h"))
	h.advance(chathamAt(t, 2026, 12, 13, 23, 0).Sub(h.clock.Now()))
	if r := h.quotaText(tama); !strings.Contains(r, "10 of 12 used or committed") {
		t.Fatalf("before: %s", r)
	}
	r := h.say(tama, "/gpu request 1 kiwi for 3h")
	if r.Error || !strings.Contains(r.Text, " is active") {
		t.Fatalf("1 of its 3 GPU-hours falls in this week, with 2 left: %s", r.Text)
	}
	if r := h.quotaText(tama); !strings.Contains(r, "11 of 12 used or committed, 1 left") {
		t.Errorf("after: %s", r)
	}
}

// A lease asked on a Sunday night that would take the next week past its GPU-hours is refused
// naming that week, with the longest request that fits both weeks; typed back, it is granted.
func TestALeaseThatWouldPassNextWeeksHoursIsRefusedNamingIt(t *testing.T) {
	h := newHarnessOn(t, chathamPolicy)
	const aroha = "aroha@chatham.example" // toroa: 40 GPU-hours a week
	h.clock.Set(chathamAt(t, 2026, 12, 13, 21, 0))
	// 2 × 3h this week, 2 × 17h = 34 next week.
	mustOK(t, h.say(aroha, "/gpu request 2 kiwi for 20h"))
	h.advance(time.Hour)
	// 2 more this week (8 of 40), but 8 more next week: 42 of 40.
	r := h.say(aroha, "/gpu request 1 kiwi for 10h")
	if !r.Error {
		t.Fatalf("next week would be past its quota, yet: %s", r.Text)
	}
	for _, want := range []string{
		"Team toroa has 6 of its 40 GPU-hours left next week (from Mon 14 Dec), and 8 of the 10 GPU-hours this request needs fall in it; ask for 8h at most",
		"/gpu request 1 kiwi for 8h",
	} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("the refusal:\n%s\nwant %q", r.Text, want)
		}
	}
	if ex := exampleIn(t, r); ex != "/gpu request 1 kiwi for 8h" {
		t.Errorf("example %q", ex)
	} else if r := h.say(aroha, ex); r.Error || !strings.Contains(r.Text, " is active") {
		t.Errorf("the example typed back: %s", r.Text)
	}
	// Longer than the class gives: it waits for a budget owner, who reads that it would also
	// take the next week past its quota.
	r = mustOK(t, h.say(aroha, "/gpu request 1 kiwi for 37h"))
	for _, want := range []string{
		"It would take team toroa to 75 of its 40 GPU-hours next week (from Mon 14 Dec): 40 used or committed, and 35 for this request.",
	} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("the request that waits:\n%s\nwant %q", r.Text, want)
		}
	}
	card := texts(h.notices("rua@chatham.example"))
	if !strings.Contains(card, "past its quota, to 75 of its 40 GPU-hours next week (from Mon 14 Dec)") {
		t.Errorf("the budget owner's card:\n%s", card)
	}
}

// An extension of a lease that ends late on a Sunday counts by the hours it adds to each week:
// those past Monday 00:00 go to the next week, whose GPU-hours are still whole.
func TestAnExtensionAcrossTheWeekBoundaryCountsEachWeek(t *testing.T) {
	h := newHarnessOn(t, chathamPolicy)
	const tama = "tama@chatham.example" // korimako: 12 GPU-hours a week
	h.clock.Set(chathamAt(t, 2026, 12, 7, 9, 0))
	mustOK(t, h.say(tama, "/gpu request 2 kiwi for 4h")) // 8
	h.advance(chathamAt(t, 2026, 12, 13, 20, 0).Sub(h.clock.Now()))
	id := leaseIn(t, mustOK(t, h.say(tama, "/gpu request 1 kiwi for 2h")).Text) // 10, to 22:00
	// 2 hours more this week (12 of 12), 3 in the next.
	if r := h.say(tama, "/gpu extend "+id.String()+" 5h"); r.Error || !strings.Contains(r.Text, "now runs until") {
		t.Fatalf("the extension: %s", r.Text)
	}
	if r := h.quotaText(tama); !strings.Contains(r, "12 of 12 used or committed, 0 left") {
		t.Errorf("this week: %s", r)
	}
	// Past what the next week has left (12 − 3 = 9): refused naming it, with what fits.
	r := h.say(tama, "/gpu extend "+id.String()+" 10h")
	if !r.Error || !strings.Contains(r.Text, "next week (from Mon 14 Dec)") || !strings.Contains(r.Text, "ask for 9h at most") {
		t.Fatalf("the longer extension: %s", r.Text)
	}
	if ex := exampleIn(t, r); ex != "/gpu extend "+id.String()+" 9h" {
		t.Errorf("example %q", ex)
	} else if r := h.say(tama, ex); r.Error || !strings.Contains(r.Text, "now runs until") {
		t.Errorf("the example typed back: %s", r.Text)
	}
}

// The week in which the clocks go back is an hour long: on the Saturday at 22:00 before
// Chatham's summer time ends, Monday 00:00 is 27 hours away, not 26, and a request is counted
// against this week by the hours that really fall in it, as /gpu quota counts them.
func TestAWeekWhoseClocksChangeCountsItsRealHours(t *testing.T) {
	h := newHarnessOn(t, policyVariant(t, chathamPolicy, "gpu_hours_per_week: 40", "gpu_hours_per_week: 26.5"))
	const aroha = "aroha@chatham.example"
	h.clock.Set(chathamAt(t, 2027, 4, 3, 22, 0))
	// 27 hours this week, 3 the next.
	r := h.say(aroha, "/gpu request 1 kiwi for 30h")
	want := "Team toroa has 26.5 of its 26.5 GPU-hours left this week, and 27 of the 30 GPU-hours this request needs fall in it; ask for 1d2h30m at most"
	if !r.Error || !strings.Contains(r.Text, want) {
		t.Fatalf("past this week:\n%s\nwant %q", r.Text, want)
	}
	if ex := exampleIn(t, r); ex != "/gpu request 1 kiwi for 1d2h30m" {
		t.Errorf("example %q", ex)
	} else if r := h.say(aroha, ex); r.Error || !strings.Contains(r.Text, " is active") {
		t.Errorf("the example typed back: %s", r.Text)
	}
	if r := h.quotaText(aroha); !strings.Contains(r, "26.5 of 26.5 used or committed, 0 left") {
		t.Errorf("this week: %s", r)
	}
}

// A quota increase adds its GPUs' hours to each week it lasts into: approved on a Sunday night
// for its usual week, it makes room in the next week too, and the lease refused for that week is
// granted.
func TestAQuotaIncreaseMakesRoomInTheWeeksItLastsInto(t *testing.T) {
	h := newHarnessOn(t, chathamPolicy)
	const tama = "tama@chatham.example" // korimako: 12 GPU-hours a week
	h.clock.Set(chathamAt(t, 2026, 12, 13, 22, 0))
	r := h.say(tama, "/gpu request 1 kiwi for 20h") // 2 this week, 18 the next
	if !r.Error || !strings.Contains(r.Text, "left next week (from Mon 14 Dec)") {
		t.Fatalf("past next week's GPU-hours: %s", r.Text)
	}
	mustOK(t, h.say(tama, "/gpu quota request +1 kiwi because a deadline"))
	id := leaseIn(t, texts(h.notices("hine@chatham.example")))
	mustOK(t, h.say("hine@chatham.example", "/gpu approve "+id.String()))
	if r := h.say(tama, "/gpu request 1 kiwi for 20h"); r.Error || !strings.Contains(r.Text, " is active") {
		t.Errorf("with the increase: %s", r.Text)
	}
}

// A lease waiting to run counts its length from now, split at Monday 00:00 as a running one is:
// queued on a Sunday at 23:00 for 3h, it holds 1 GPU-hour of this week, not 3.
func TestAQueuedLeaseCountsItsHoursInEachWeek(t *testing.T) {
	h := newHarnessOn(t, policyVariant(t, chathamPolicy, "quota: {gpus: {kiwi: 4}, gpu_hours_per_week: 40}", "quota: {gpus: {kiwi: 8}, gpu_hours_per_week: 40}"))
	const aroha, tama = "aroha@chatham.example", "tama@chatham.example"
	h.clock.Set(chathamAt(t, 2026, 12, 13, 23, 0))
	for range 3 {
		mustOK(t, h.say(aroha, "/gpu request 2 kiwi for 1h")) // 6 of toroa's
	}
	mustOK(t, h.say(tama, "/gpu request 2 kiwi for 1h")) // the cluster's 8 GPUs all held
	if r := mustOK(t, h.say(aroha, "/gpu request 1 kiwi for 3h")); !strings.Contains(r.Text, "queued") {
		t.Fatalf("want it queued: %s", r.Text)
	}
	if r := h.quotaText(aroha); !strings.Contains(r, "7 of 40 used or committed, 33 left") {
		t.Errorf("this week: %s", r)
	}
}

// A published rule that reads this week's GPU-hours with the whole request's
// (usage.gpu_hours_week + request.gpu_hours > team.quota.gpu_hours_per_week) goes on working as
// written: on a Sunday at 23:00 it sends a request of 3 GPU-hours with 2 left to a decision,
// though only 1 falls in this week, and no week is said to pass its quota.
func TestARuleOnTheWeeksGPUHoursStillReadsTheWholeRequest(t *testing.T) {
	h := newHarnessOn(t, himalPolicy)
	const nima = "nima@himal.example" // team yeti: 12 GPU-hours a week
	mustOK(t, h.say(nima, "/gpu request 2 forge for 5h"))
	kathmandu, err := time.LoadLocation("Asia/Kathmandu")
	if err != nil {
		t.Fatal(err)
	}
	h.advance(time.Date(2026, 12, 6, 23, 0, 0, 0, kathmandu).Sub(h.clock.Now()))
	r := mustOK(t, h.say(nima, "/gpu request 1 forge for 3h"))
	if !strings.Contains(r.Text, "waits for approval") || !strings.Contains(r.Text, "forge-quota") {
		t.Fatalf("the rule forge-quota: %s", r.Text)
	}
	if strings.Contains(r.Text, "GPU-hours") {
		t.Errorf("no week passes its GPU-hours, yet: %s", r.Text)
	}
	// The quota alone grants it: sketch has no such rule.
	if r := h.say(nima, "/gpu request 1 sketch for 3h"); r.Error || !strings.Contains(r.Text, " is active") {
		t.Errorf("1 of its 3 GPU-hours in this week: %s", r.Text)
	}
}

// /gpu quota shows what the team's leases already commit to the next week, as admission counts
// it, so that a refusal naming next week comes as no surprise: a Sunday-night lease of 2 GPUs for
// 20h puts 34 GPU-hours there; one waiting for a budget owner puts none; a team whose leases end
// before Monday, or a week that nothing reaches past, shows no such line.
func TestQuotaShowsWhatIsCommittedToNextWeek(t *testing.T) {
	h := newHarnessOn(t, chathamPolicy)
	const aroha, tama = "aroha@chatham.example", "tama@chatham.example" // toroa 40, korimako 12
	h.clock.Set(chathamAt(t, 2026, 12, 13, 21, 0))
	if r := h.quotaText(aroha); strings.Contains(r, "Next week") {
		t.Errorf("nothing reaches next week, yet:\n%s", r)
	}
	mustOK(t, h.say(aroha, "/gpu request 2 kiwi for 20h")) // 6 this week, 34 the next
	mustOK(t, h.say(tama, "/gpu request 1 kiwi for 2h"))   // up to 23:00
	mustOK(t, h.say(aroha, "/gpu request 1 kiwi for 37h")) // waits for a budget owner
	r := h.quotaText(aroha)
	for _, want := range []string{
		"6 of 40 used or committed, 34 left",
		"Next week (from Mon 14 Dec): 34 of 40 GPU-hours committed, 6 left",
	} {
		if !strings.Contains(r, want) {
			t.Errorf("toroa's quota:\n%s\nwant %q", r, want)
		}
	}
	if r := h.quotaText(tama); strings.Contains(r, "Next week") || !strings.Contains(r, "2 of 12 used or committed") {
		t.Errorf("korimako's lease ends before Monday:\n%s", r)
	}
	// The line counts what admission counts: the next week's limit with the increases that
	// last into it (+1 GPU from Sunday 22:00 for a week: 166 hours of it next week).
	h.advance(time.Hour)
	mustOK(t, h.say(tama, "/gpu quota request +1 kiwi because a deadline"))
	id := leaseIn(t, texts(h.notices("hine@chatham.example")))
	mustOK(t, h.say("hine@chatham.example", "/gpu approve "+id.String()))
	mustOK(t, h.say(tama, "/gpu request 1 kiwi for 20h")) // 2 this week, 18 the next
	if r, want := h.quotaText(tama), "Next week (from Mon 14 Dec): 18 of 178 GPU-hours committed, 160 left"; !strings.Contains(r, want) {
		t.Errorf("korimako's quota:\n%s\nwant %q", r, want)
	}
	// On Monday the week reached is this week, and nothing reaches past it.
	h.advance(chathamAt(t, 2026, 12, 14, 10, 0).Sub(h.clock.Now()))
	if r := h.quotaText(aroha); strings.Contains(r, "Next week") || !strings.Contains(r, "34 of 40 used or committed") {
		t.Errorf("on Monday:\n%s", r)
	}
	// A lease a budget owner let run 15 days reaches two weeks after this one, each its own line.
	id = leaseIn(t, mustOK(t, h.say(aroha, "/gpu request 1 kiwi for 15d")).Text)
	mustOK(t, h.say("rua@chatham.example", "/gpu approve "+id.String()))
	r = h.quotaText(aroha)
	for _, want := range []string{
		"Next week (from Mon 21 Dec): 168 of 40 GPU-hours committed, 0 left",
		"The week from Mon 28 Dec: 34 of 40 GPU-hours committed, 6 left",
	} {
		if !strings.Contains(r, want) {
			t.Errorf("toroa's quota:\n%s\nwant %q", r, want)
		}
	}
}
