package commands

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// askedTwicePolicies are policies with names of their own: someone in a team, its budget owner,
// a class the team has GPUs in and a length past that class's max_duration, which a published
// rule sends to the budget owner.
var askedTwicePolicies = []struct{ policy, user, owner, class, long string }{
	{"testdata/fjord.yaml", "kari@fjord.example", "ingrid@fjord.example", "bigiron", "3d"},
	{"testdata/tokyo.yaml", "haru@sakura.example", "kenji@sakura.example", "a100-big", "3d"},
	{"testdata/orbit.yaml", "kim@orbit.example", "ria@orbit.example", "quad", "3d"},
	{"testdata/harbor.yaml", "wiremu@harbor.example", "ines@harbor.example", "rack", "2d"},
}

// allLeases counts the requests of every kind: workspaces, quota increases, extensions.
func (h *harness) allLeases() int {
	h.t.Helper()
	ls, err := h.svc.List(context.Background(), qm.LeaseFilter{Kind: qm.AnyKind})
	if err != nil {
		h.t.Fatal(err)
	}
	return len(ls)
}

// askedBefore checks that r answers a request asked again while the first, first, still waits:
// it names the first, who decides it and since when, offers its Cancel button, and made nothing.
func askedBefore(t *testing.T, h *harness, line string, r bot.Reply, first qm.LeaseID, before int) {
	t.Helper()
	want := "You already asked for this: " + first.String() + " is waiting for "
	if r.Error || !strings.HasPrefix(r.Text, want) || !strings.Contains(r.Text, " since ") {
		t.Errorf("%s asked again: %q; want it to begin %q and say since when", line, r.Text, want)
	}
	cancel := false
	for _, a := range r.Actions {
		cancel = cancel || a.Command == "/gpu cancel "+first.String()
	}
	if !cancel || !strings.Contains(r.Text, "/gpu cancel "+first.String()) {
		t.Errorf("%s asked again: %q %+v; want its cancel command and button", line, r.Text, r.Actions)
	}
	if n := h.allLeases(); n != before {
		t.Errorf("%s asked again made %d request(s)", line, n-before)
	}
}

// A request that waits for a budget owner, asked again the same while the first still waits (the
// same quota increase typed twice, the same long lease asked again as no answer came), is
// answered with the first and makes nothing: approving both would give twice what was asked. A
// request that differs in anything (its reason too) is a new one, and so is the same one once the first no longer
// waits. On SQLite and PostgreSQL.
func TestTheSameRequestAskedAgainWhileItWaitsIsAnsweredWithTheFirst(t *testing.T) {
	// Mostly waiting on its databases (a schema migrated for each case), with nothing shared
	// with other tests: it waits while they run.
	t.Parallel()
	for name, url := range map[string]func(testing.TB) string{"sqlite": storetest.SQLite, "postgres": storetest.Postgres} {
		for _, tc := range askedTwicePolicies {
			t.Run(name+"/"+tc.policy, func(t *testing.T) {
				h := newHarnessOnStore(t, tc.policy, url(t))
				quota := "/gpu quota request +2 " + tc.class + " for 3d because a paper deadline"
				long := "/gpu request 1 " + tc.class + " for " + tc.long
				asked := map[string]qm.LeaseID{}
				for _, line := range []string{quota, long} {
					// Delivered twice by the platform (one request key): one request, as before.
					key := "delivery:" + line
					rs := h.bot.Handle(context.Background(), bot.Request{User: tc.user, Text: line, Key: key})
					if len(rs) == 0 || rs[0].Error || !strings.Contains(rs[0].Text, "decide") {
						t.Fatalf("%s: %+v; want it to wait for a budget owner", line, rs)
					}
					first := leaseIn(t, rs[0].Text)
					asked[line] = first
					before := h.allLeases()
					again := h.bot.Handle(context.Background(), bot.Request{User: tc.user, Text: line, Key: key})
					if len(again) == 0 || !strings.HasPrefix(again[0].Text, "(already done) ") || leaseIn(t, again[0].Text) != first || h.allLeases() != before {
						t.Errorf("%s delivered again with its key: %+v; want the first delivery's answer", line, again)
					}
					h.notices(tc.owner)
					// Typed again: answered with the first.
					askedBefore(t, h, line, h.say(tc.user, line), first, before)
					if n := h.notices(tc.owner); len(n) != 0 {
						t.Errorf("%s asked again sent the budget owner %d more message(s): %q", line, len(n), n[0].Text)
					}
				}
				if r := h.say(tc.owner, "/gpu approvals"); !strings.HasPrefix(r.Text, "2 requests wait") {
					t.Errorf("/gpu approvals: %q; want the two requests, each once", r.Text)
				}
				// Anything different is asked anew.
				for _, line := range []string{
					strings.Replace(quota, "a paper deadline", "the deadline moved", 1),
					"/gpu quota request +3 " + tc.class + " for 3d because a paper deadline",
					"/gpu quota request +2 " + tc.class + " for 4d because a paper deadline",
					"/gpu request 2 " + tc.class + " for " + tc.long,
					long + " exclusive",
				} {
					before := h.allLeases()
					if r := h.say(tc.user, line); r.Error || strings.Contains(r.Text, "already asked") || h.allLeases() != before+1 {
						t.Errorf("%s: %q; want a new request", line, r.Text)
					}
				}
				// Cancelled, it no longer waits: asked again, it is asked anew.
				mustOK(t, h.say(tc.user, "/gpu cancel "+asked[long].String()))
				if r := h.say(tc.user, long); r.Error || leaseIn(t, r.Text) == asked[long] || strings.Contains(r.Text, "already asked") {
					t.Errorf("%s after %s was cancelled: %q; want a new request", long, asked[long], r.Text)
				}
			})
		}
	}
}
