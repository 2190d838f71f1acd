package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

func TestGrantExpire(t *testing.T) {
	h := newHarness(t)
	r := h.say("alice@acme.example", "/gpu request 1 interactive 2h")
	if r.Error {
		t.Fatalf("refused: %s", r.Text)
	}
	id := leaseIn(t, r.Text)
	for _, want := range []string{"active", "l40s-0", "$1.80", "Mon 30 Nov 11:00 CST"} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("grant reply %q lacks %q", r.Text, want)
		}
	}
	h.advance(3 * time.Hour)
	// Warned 15 minutes before the end (the example's classes write no expiry_warning), then told
	// it expired.
	got := posted(h.notices("alice@acme.example"))
	if len(got) != 2 || !strings.HasPrefix(got[0].Text, id.String()+" ends at Mon 30 Nov 11:00 CST") || !strings.Contains(got[1].Text, id.String()+" expired") {
		t.Fatalf("after 3h alice got %+v", got)
	}
	l, _ := h.svc.Get(context.Background(), id)
	if l.State != qm.Expired || !l.EndedAt.Equal(start.Add(2*time.Hour)) {
		t.Fatalf("lease = %s ended %v", l.State, l.EndedAt)
	}
	if h.sim.Running(l) {
		t.Fatal("the sim cluster still runs the expired workspace")
	}
}

func TestQueuedStartsWhenCapacityFrees(t *testing.T) {
	h := newHarness(t)
	// Train has 16 GPUs on two 8-GPU nodes; vision may hold 16.
	a := h.say("alice@acme.example", "/gpu request 8 train for 2h")
	b := h.say("bob@acme.example", "/gpu request 8 train for 4h")
	if a.Error || b.Error || !strings.Contains(a.Text, "active") || !strings.Contains(b.Text, "active") {
		t.Fatalf("8+8 train: %q / %q", a.Text, b.Text)
	}
	// language team: quota train 8, but the cluster is full.
	q := h.say("maya@acme.example", "/gpu request 8 train for 1h")
	if q.Error || !strings.Contains(q.Text, "queued") || !strings.Contains(q.Text, "about 2h") {
		t.Fatalf("third request should queue with a 2h wait: %q", q.Text)
	}
	qid := leaseIn(t, q.Text)
	h.advance(2*time.Hour + time.Minute)
	l, _ := h.svc.Get(context.Background(), qid)
	if l.State != qm.Active || !l.StartedAt.Equal(start.Add(2*time.Hour)) {
		t.Fatalf("queued lease = %s started %v; want active from the first expiry", l.State, l.StartedAt)
	}
	got := h.notices("maya@acme.example")
	if len(got) == 0 || !strings.Contains(got[0].Text, "active") {
		t.Fatalf("maya was not told her lease started: %+v", got)
	}
}

func TestIdleReclaim(t *testing.T) {
	h := newHarness(t)
	r := h.say("alice@acme.example", "/gpu request 1 interactive for 4h")
	id := leaseIn(t, r.Text)
	h.advance(10 * time.Minute)
	cur, _ := h.svc.Get(context.Background(), id)
	h.sim.SetUtilization(cur, 0)
	h.advance(29 * time.Minute)
	if n := h.notices("alice@acme.example"); len(n) != 0 {
		t.Fatalf("warned too early: %+v", n)
	}
	h.advance(2 * time.Minute)
	warn := h.notices("alice@acme.example")
	if len(warn) != 1 || len(warn[0].Actions) != 2 || warn[0].Actions[0].Command != "/gpu keep "+id.String() {
		t.Fatalf("want one idle warning with Keep/Release, got %+v", warn)
	}
	// Keep: another idle period.
	if k := h.say("alice@acme.example", "/gpu keep "+id.String()); k.Error {
		t.Fatal(k.Text)
	}
	h.advance(25 * time.Minute)
	if l, _ := h.svc.Get(context.Background(), id); l.State != qm.Active {
		t.Fatalf("kept lease is %s", l.State)
	}
	h.advance(6 * time.Minute) // idle 31m since keep -> warning
	h.advance(11 * time.Minute)
	l, _ := h.svc.Get(context.Background(), id)
	if l.State != qm.Reclaimed || l.Reclaimed <= 0 {
		t.Fatalf("lease = %s reclaimed %.2f GPU-h", l.State, l.Reclaimed)
	}
	n := posted(h.notices("alice@acme.example"))
	if len(n) != 2 || !strings.Contains(n[1].Text, "reclaimed") {
		t.Fatalf("notices: %+v", n)
	}
}

func TestBusyLeaseIsNotReclaimed(t *testing.T) {
	h := newHarness(t)
	id := leaseIn(t, h.say("alice@acme.example", "/gpu request 1 interactive for 4h").Text)
	h.advance(3 * time.Hour)
	if l, _ := h.svc.Get(context.Background(), id); l.State != qm.Active {
		t.Fatalf("busy lease is %s", l.State)
	}
}

func TestOwnLeasesOnly(t *testing.T) {
	h := newHarness(t)
	id := leaseIn(t, h.say("alice@acme.example", "/gpu request 1 interactive for 2h").Text)
	r := h.say("bob@acme.example", "/gpu release "+id.String())
	if !r.Error || !strings.Contains(r.Text, "You have no lease") || strings.Contains(r.Text, "alice@") {
		t.Fatalf("bob released alice's lease: %q", r.Text)
	}
	if l, _ := h.svc.Get(context.Background(), id); l.State != qm.Active {
		t.Fatalf("lease = %s after a refused release", l.State)
	}
	r = h.say("alice@acme.example", "/gpu release "+id.String())
	if r.Error || !strings.Contains(r.Text, "released") {
		t.Fatalf("release: %q", r.Text)
	}
}

func TestExtendWithinPolicy(t *testing.T) {
	h := newHarness(t)
	id := leaseIn(t, h.say("alice@acme.example", "/gpu request 1 interactive for 2h").Text)
	r := h.say("alice@acme.example", "/gpu extend "+id.String()+" 3h")
	if r.Error || !strings.Contains(r.Text, "5h in all") {
		t.Fatalf("extend: %q", r.Text)
	}
	// Beyond max_duration it is an exception like any other.
	r = h.say("alice@acme.example", "/gpu extend "+id.String()+" 4h")
	if r.Error || !strings.Contains(r.Text, "Extending "+id.String()+" by 4h waits for approval") || !strings.Contains(r.Text, "long-request") {
		t.Fatalf("extend past max_duration: %q", r.Text)
	}
	ext := leaseIn(t, r.Text[strings.Index(r.Text, "as L-"):])
	if n := h.notices("dana@acme.example"); len(n) != 1 || !strings.Contains(n[0].Text, "to extend "+id.String()+" by 4h") {
		t.Fatalf("budget owner: %+v", n)
	}
	if a := h.say("dana@acme.example", "/gpu approve "+ext.String()); a.Error {
		t.Fatal(a.Text)
	}
	l, _ := h.svc.Get(context.Background(), id)
	if l.Duration != 9*time.Hour || !l.ExpiresAt.Equal(start.Add(9*time.Hour)) {
		t.Fatalf("approved extension: lease lasts %v until %v", l.Duration, l.ExpiresAt)
	}
	h.advance(9*time.Hour + time.Minute)
	if l, _ := h.svc.Get(context.Background(), id); l.State != qm.Expired {
		t.Fatalf("extended lease is %s after its new end", l.State)
	}
}

func TestContractorWaitsForApproval(t *testing.T) {
	h := newHarness(t)
	r := h.say("carl@contractor.example", "/gpu request 1 interactive for 2h")
	if r.Error || !strings.Contains(r.Text, "waits for approval") || !strings.Contains(r.Text, "contractor") || !strings.Contains(r.Text, "dana@acme.example") {
		t.Fatalf("contractor: %q", r.Text)
	}
	id := leaseIn(t, r.Text)
	dm := h.notices("dana@acme.example")
	if len(dm) != 1 || len(dm[0].Actions) != 2 || dm[0].Actions[0].Command != "/gpu approve "+id.String() {
		t.Fatalf("budget owner got %+v", dm)
	}
	if ch := h.notices("#vision-gpu"); len(ch) != 1 {
		t.Fatalf("team channel got %+v", ch)
	}
	a := h.say("dana@acme.example", "/gpu approve "+id.String())
	if a.Error {
		t.Fatal(a.Text)
	}
	if l, _ := h.svc.Get(context.Background(), id); l.State != qm.Active {
		t.Fatalf("approved lease = %s", l.State)
	}
}

func TestQuotaAndCatalogAndPolicy(t *testing.T) {
	h := newHarness(t)
	h.say("alice@acme.example", "/gpu request 2 train for 10h")
	r := h.say("alice@acme.example", "/gpu quota")
	if !strings.Contains(r.PlainText(), "2 of 16 GPUs in use") || !strings.Contains(r.PlainText(), "20 of 600 used") {
		t.Fatalf("quota: %s", r.PlainText())
	}
	c := h.say("alice@acme.example", "/gpu catalog").PlainText()
	for _, want := range []string{"interactive", "L40S", "$0.90 per GPU-hour", "Free now: 14 of 16", "Free now: 4 of 16"} {
		if !strings.Contains(c, want) {
			t.Errorf("catalog lacks %q:\n%s", want, c)
		}
	}
	p := h.say("alice@acme.example", "/gpu policy").PlainText()
	for _, want := range []string{"contractor", "over-quota", "denied"} {
		if !strings.Contains(p, want) {
			t.Errorf("policy text lacks %q", want)
		}
	}
	e := h.say("alice@acme.example", "/gpu estimate 2 train 8h")
	if !strings.Contains(e.Text, "$56.00") {
		t.Fatalf("estimate: %q", e.Text)
	}
}

// TestBadInput: every malformed command gets one sentence naming the problem and an example that
// works; nothing is created.
func TestBadInput(t *testing.T) {
	h := newHarness(t)
	mine := leaseIn(t, h.say("alice@acme.example", "/gpu request 1 interactive for 2h").Text)
	bobs := leaseIn(t, h.say("bob@acme.example", "/gpu request 1 train for 2h").Text)
	cases := []struct {
		user, text, want string
	}{
		{"alice@acme.example", "/gpu request 1 gpu-of-dreams", `no class "gpu-of-dreams"`},
		{"alice@acme.example", "/gpu request 0 interactive", "at least 1"},
		{"alice@acme.example", "/gpu request -3 interactive", "at least 1, not -3"},
		{"alice@acme.example", "/gpu request banana", `no class "banana"`},
		{"alice@acme.example", "/gpu request 1 interactive for forever", `"forever" is not a duration`},
		{"alice@acme.example", "/gpu request 1 interactive for", `must be followed by a duration`},
		{"alice@acme.example", "/gpu request 1.5 interactive", `"1.5" is not a whole number`},
		{"alice@acme.example", "/gpu request 99999 train", "more than any request"},
		{"alice@acme.example", "/gpu request 64 train", "only 16 train GPUs"},
		{"alice@acme.example", "/gpu request 1 interactive 2h 3h", "names its duration twice"},
		{"alice@acme.example", "/gpu request 1 interactive train", "the class is already interactive"},
		{"alice@acme.example", "/gpu request 1 interactive team", `must be followed by a team name`},
		{"alice@acme.example", "/gpu request 1 interactive team language", "not a member of team language"},
		{"alice@acme.example", "/gpu request 1 interactive team nosuch", `no team "nosuch"`},
		{"alice@acme.example", "/gpu request 1 interactive for 40d", "between 1 minute and 30 days"},
		{"alice@acme.example", "/gpu request 1 interactive 2h 5", "out of place"},
		{"alice@acme.example", "/gpu request 1 interactive for 4h 1", "out of place"},
		{"alice@acme.example", "/gpu request 1 interactive 2h 05", `"2h 05" is not a duration; write it like 2h05m.`},
		{"alice@acme.example", "/gpu request 1 int€ractive", "not a class name"},
		{"mallory@evil.example", "/gpu request 1 interactive", "not in the directory"},
		{"alice@acme.example", "/gpu frobnicate", `"frobnicate" is not a /gpu command`},
		{"alice@acme.example", "/gpu status", "exactly one lease id"},
		{"alice@acme.example", "/gpu status L-x", `"L-x" is not a lease id`},
		{"alice@acme.example", "/gpu status L-999", "no lease L-999"},
		{"alice@acme.example", "/gpu status " + bobs.String(), "You have no lease " + bobs.String()},
		{"alice@acme.example", "/gpu release L-999", "no lease L-999"},
		{"alice@acme.example", "/gpu release " + bobs.String(), "You have no lease " + bobs.String()},
		{"alice@acme.example", "/gpu keep", "exactly one lease id"},
		{"alice@acme.example", "/gpu extend " + mine.String(), "how much longer"},
		{"alice@acme.example", "/gpu extend " + mine.String() + " forever", `"forever" is not a duration`},
		{"alice@acme.example", "/gpu extend " + bobs.String() + " 1h", "You have no lease " + bobs.String()},
		{"alice@acme.example", "/gpu extend L-0 1h", `"L-0" is not a lease id`},
		{"alice@acme.example", "/gpu estimate 2 train", "needs a number of GPUs, a class and a duration"},
		{"alice@acme.example", "/gpu estimate two train 2h", `"two" is not a whole number`},
		{"alice@acme.example", "/gpu estimate 2 nosuch 2h", `no class "nosuch"`},
		{"alice@acme.example", "/gpu estimate 2 train 0m", `"0m" is no length of time`},
		{"alice@acme.example", "/gpu approve " + bobs.String(), "Nothing about " + bobs.String() + " waits for a decision"},
		{"alice@acme.example", "/gpu deny", "needs a lease id"},
		{"alice@acme.example", "/gpu list everything", "takes no arguments"},
		{"alice@acme.example", "/gpu quota nosuch", `no team "nosuch"`},
		{"alice@acme.example", "/gpu quota request 4 train because x", `"4" should be the extra GPUs`},
		{"alice@acme.example", "/gpu quota request +4 train", `needs a reason after "because"`},
		{"alice@acme.example", "/gpu release " + mine.String() + " now", "exactly one lease id"},
	}
	if len(cases) < 30 {
		t.Fatalf("only %d cases", len(cases))
	}
	before, _ := h.svc.List(context.Background(), qm.LeaseFilter{})
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			r := h.say(c.user, c.text)
			if !r.Error {
				t.Fatalf("%q was not refused: %q", c.text, r.Text)
			}
			if !strings.Contains(r.Text, c.want) {
				t.Errorf("%q: reply %q does not name the problem (%q)", c.text, r.Text, c.want)
			}
			i := strings.Index(r.Text, " Example: ")
			if i < 0 {
				t.Fatalf("%q: reply %q has no example", c.text, r.Text)
			}
			if n := strings.Count(strings.TrimRight(r.Text[:i], "."), ". "); n > 0 {
				t.Errorf("%q: more than one sentence before the example: %q", c.text, r.Text)
			}
			ex := strings.Fields(r.Text[i+len(" Example: "):])
			if len(ex) == 0 || ex[0] != "/gpu" {
				t.Fatalf("example is not a command: %q", r.Text)
			}
			if _, err := Parse(strings.Join(ex, " ")); err != nil && !strings.Contains(r.Text, "L-…") {
				t.Errorf("the example %q does not parse: %v", strings.Join(ex, " "), err)
			}
		})
	}
	after, _ := h.svc.List(context.Background(), qm.LeaseFilter{})
	if len(after) != len(before) {
		t.Fatalf("bad input created leases: %d -> %d", len(before), len(after))
	}
}

func TestRequestGrammar(t *testing.T) {
	cases := map[string]Command{
		"/gpu request":                                 {Verb: "request"},
		"/gpu request 1 interactive 4h":                {Verb: "request", GPUs: 1, Class: "interactive", Duration: 4 * time.Hour},
		"request 2 train for 1d team vision exclusive": {Verb: "request", GPUs: 2, Class: "train", Duration: 24 * time.Hour, Team: "vision", Exclusive: true},
		"/GPU Request 4 gpus Train for 90m data internal template pytorch-ddp": {Verb: "request", GPUs: 4, Class: "train", Duration: 90 * time.Minute, DataClass: "internal", Template: "pytorch-ddp"},
		"gpu request 1 interactive 4h":                                         {Verb: "request", GPUs: 1, Class: "interactive", Duration: 4 * time.Hour},
		"/gpu gpu request 1 interactive 4h":                                    {Verb: "request", GPUs: 1, Class: "interactive", Duration: 4 * time.Hour},
		// Leases are by the minute, as every reply shows them.
		"/gpu request 1 interactive for 3h1s": {Verb: "request", GPUs: 1, Class: "interactive", Duration: 3 * time.Hour},
		"/gpu request 1 interactive for 90s":  {Verb: "request", GPUs: 1, Class: "interactive", Duration: 2 * time.Minute},
	}
	for in, want := range cases {
		got, err := Parse(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q = %+v; want %+v", in, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"/gpu request 1 interactive 4h", "/gpu extend L-3 2h", "/gpu quota request +4 train for 2w because x", "/gpu deny L-1 no", "/gpu submit x a=b for=2h", "/gpu estimate 1 train 1h", "/gpu unlink slack:T1:U1", "/gpu unlink a@b.example", "/gpu login", `/gpu request 1 "interactive" 2h`, "/gpu status \u201cL-1\u201d", `/gpu request 1 in"ter\x01 2h`} {
		f.Add(s)
	}
	for _, s := range []string{"/gpu request 1 dev for 1h\n\nteam x", "/gpu deny L-1 " + strings.Repeat("\xff", 100), "/gpu " + strings.Repeat("\U0010ffff", 60),
		"/gpu extend L-1 " + strings.Repeat("9", 500) + "h", "/gpu quota request +1 a because " + strings.Repeat("x", MaxReason+1), strings.Repeat("x ", MaxCommand)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		if err != nil {
			var pe *qm.Error
			if !errors.As(err, &pe) || pe.Code != qm.EINVALID || pe.Message == "" || !strings.HasPrefix(pe.Example, "/gpu") {
				t.Fatalf("bad error for %q: %v", s, err)
			}
			// One short sentence, whatever was typed: what it quotes of the input is cut short. It
			// ends with a full stop, or a question where it asks what was meant ("did you mean …?").
			if len(pe.Message) > 600 || strings.ContainsAny(pe.Message, "\n\r") || !strings.HasSuffix(pe.Message, ".") && !strings.HasSuffix(pe.Message, "?") {
				t.Fatalf("%q is refused in more than one short sentence: %q", s, pe.Message)
			}
			// What it quotes it shows as typed, in plain quotes: nothing escaped with a backslash.
			if strings.Contains(pe.Message, `\`) && !strings.Contains(s, `\`) {
				t.Fatalf("%q is refused with an escaped quote: %q", s, pe.Message)
			}
			return
		}
		if c.GPUs < 0 || c.Duration < 0 {
			t.Fatalf("%q parsed to negative values: %+v", s, c)
		}
	})
}

// TestWaitText: how a predicted wait reads in quotes, the catalog and queued replies.
func TestWaitText(t *testing.T) {
	for _, tc := range []struct {
		w    qm.WaitEstimate
		want string
	}{
		{qm.WaitEstimate{Unknown: true}, "no estimate; the scheduler decides when it starts"},
		{qm.WaitEstimate{}, "none, GPUs are free now"},
		{qm.WaitEstimate{P90: time.Minute}, "none expected (90%: within a minute)"},
		{qm.WaitEstimate{Median: 20 * time.Second, P90: 2 * time.Hour}, "probably none (90%: under 2h)"},
		{qm.WaitEstimate{Median: 90 * time.Minute, P90: 4 * time.Hour}, "about 1h30m (90%: under 4h)"},
		{qm.WaitEstimate{MayNotStart: true, Horizon: 6 * time.Hour}, "probably none, but similar requests often never started: it may not start within 6h"},
	} {
		if got := waitText(tc.w); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.w, got, tc.want)
		}
	}
}
