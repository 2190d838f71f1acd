package commands

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/waits"
	"github.com/acme/quartermaster/internal/workload"
	"github.com/acme/quartermaster/reports/showback"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// The behaviours below are what a user sees; each runs on the example policy and on another one
// with other names, classes, sizes and prices (testdata/other.yaml), so that the rule is fixed
// and not the example.

const otherPolicy = "testdata/other.yaml"

// jump moves the clock at once, as a restart after downtime does, and runs one tick.
func (h *harness) jump(d time.Duration) {
	h.t.Helper()
	h.clock.Set(h.clock.Now().Add(d))
	if err := h.svc.Tick(context.Background()); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) lease(id qm.LeaseID) *qm.Lease {
	h.t.Helper()
	l, err := h.svc.Get(context.Background(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return l
}

func mustOK(t *testing.T, r bot.Reply) bot.Reply {
	t.Helper()
	if r.Error {
		t.Fatalf("refused: %s", r.Text)
	}
	return r
}

func texts(rs []bot.Reply) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.PlainText() + "\n---\n")
	}
	return b.String()
}

// A lease noticed late (the service was down when it fell due) ends, and is billed, when it was due.
func TestLateExpiryIsBilledUntilTheLeaseEnd(t *testing.T) {
	for _, tc := range []struct {
		policy, user, ask, endsAt, used string
	}{
		{"../docs/quartermaster.example.yaml", "alice@acme.example", "/gpu request 8 train for 2h", "Mon 30 Nov 11:00 CST", "It used 16.00 GPU-hours, $56.00."},
		{otherPolicy, "rita@borealis.example", "/gpu request 4 bigiron for 3h", "Mon 30 Nov 19:00 CET", "It used 12.00 GPU-hours, 24.00 EUR."},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			id := leaseIn(t, mustOK(t, h.say(tc.user, tc.ask)).Text)
			h.jump(27 * time.Hour)
			l := h.lease(id)
			if l.State != qm.Expired || !l.EndedAt.Equal(l.ExpiresAt) {
				t.Fatalf("%s is %s, ended %v, expiry %v: want expired at its expiry", id, l.State, l.EndedAt, l.ExpiresAt)
			}
			got := texts(h.notices(tc.user))
			for _, want := range []string{"expired at " + tc.endsAt, tc.used} {
				if !strings.Contains(got, want) {
					t.Errorf("the expiry notice lacks %q:\n%s", want, got)
				}
			}
			ev, _ := h.svc.History(context.Background(), id)
			if last := ev[len(ev)-1]; last.To != qm.Expired || !last.At.Equal(l.ExpiresAt) {
				t.Errorf("the audit dates the expiry %v, want %v", last.At, l.ExpiresAt)
			}
		})
	}
}

// An idle reclaim noticed late is dated when the grace ran out, and counts the hours from then.
func TestLateReclaimIsDatedWhenItFellDue(t *testing.T) {
	h := newHarness(t)
	id := leaseIn(t, mustOK(t, h.say("alice@acme.example", "/gpu request 1 interactive for 4h")).Text)
	h.sim.SetUtilization(h.lease(id), 0)
	h.advance(31 * time.Minute) // warned at 30m
	if l := h.lease(id); l.State != qm.IdleWarned {
		t.Fatalf("%s is %s, want idle_warned", id, l.State)
	}
	warned := h.lease(id).WarnedAt
	h.jump(5 * time.Hour) // down past the grace and the expiry
	l := h.lease(id)
	due := warned.Add(10 * time.Minute)
	if l.State != qm.Reclaimed || !l.EndedAt.Equal(due) {
		t.Fatalf("%s is %s ended %v, want reclaimed at %v", id, l.State, l.EndedAt, due)
	}
	if want := l.ExpiresAt.Sub(due).Hours(); l.Reclaimed != want {
		t.Errorf("reclaimed %.2f GPU-hours, want %.2f", l.Reclaimed, want)
	}
}

// An approval that times out while the service is down is denied as of the timeout.
func TestLateApprovalTimeoutIsDatedAtTheTimeout(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	id := leaseIn(t, h.say("rita@borealis.example", "/gpu request 3 dev for 1h").Text)
	created := h.lease(id).CreatedAt
	h.jump(40 * time.Hour)
	l := h.lease(id)
	if l.State != qm.Denied || !l.DecidedAt.Equal(created.Add(12*time.Hour)) || !l.EndedAt.Equal(created.Add(12*time.Hour)) {
		t.Fatalf("%s: %s decided %v ended %v; want denied at %v", id, l.State, l.DecidedAt, l.EndedAt, created.Add(12*time.Hour))
	}
}

// An exclusive class's node runs one team's leases at a time; a reservation holds whole nodes.
func TestExclusiveClassNodesRunOneTeamAtATime(t *testing.T) {
	for _, tc := range []struct {
		policy string
		asks   [][2]string // user, command
	}{
		{"../docs/quartermaster.example.yaml", [][2]string{
			{"alice@acme.example", "/gpu request 2 train for 2h"}, {"lee@acme.example", "/gpu request 2 train for 2h"},
			{"maya@acme.example", "/gpu request 2 train for 2h"}, {"bob@acme.example", "/gpu request 2 train for 2h"}}},
		{otherPolicy, [][2]string{
			{"rita@borealis.example", "/gpu request 1 bigiron for 2h"}, {"sam@borealis.example", "/gpu request 1 bigiron for 2h"},
			{"vic@borealis.example", "/gpu request 1 bigiron for 2h"}, {"rolf@borealis.example", "/gpu request 2 bigiron for 2h"},
			{"sven@borealis.example", "/gpu request 1 bigiron for 2h"}}},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			for _, a := range tc.asks {
				mustOK(t, h.say(a[0], a[1]))
			}
			ls, _ := h.svc.List(context.Background(), qm.LeaseFilter{States: []qm.State{qm.Active}})
			teams := map[string]map[string]bool{}
			for _, l := range ls {
				for _, n := range strings.Split(l.Node, ",") {
					if teams[n] == nil {
						teams[n] = map[string]bool{}
					}
					teams[n][l.Team] = true
				}
			}
			for n, ts := range teams {
				if len(ts) > 1 {
					t.Errorf("node %s runs leases of %d teams at once: %v", n, len(ts), ts)
				}
			}
			if len(ls) < 3 {
				t.Errorf("only %d leases run; the cluster has room for one team per node", len(ls))
			}
		})
	}
	// A reservation (exclusive) takes a whole node that nobody else then shares.
	h := newHarnessOn(t, otherPolicy)
	id := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 1 bigiron for 2h exclusive")).Text)
	mustOK(t, h.say("rolf@borealis.example", "/gpu request 1 bigiron for 2h"))
	ls, _ := h.svc.List(context.Background(), qm.LeaseFilter{States: []qm.State{qm.Active}})
	for _, l := range ls {
		if l.ID != id && l.Node == h.lease(id).Node {
			t.Errorf("%s shares %s with the reservation %s", l.ID, l.Node, id)
		}
	}
}

// What a user is told about free GPUs and waits agrees with what admission does under the cap.
func TestFreeCountsAndWaitsAgreeWithTheSharedCap(t *testing.T) {
	for _, model := range []bool{false, true} {
		t.Run(fmt.Sprintf("predictor=%v", model), func(t *testing.T) {
			h := newHarnessOn(t, otherPolicy) // dev: 8 GPUs, cap 20% of 20 = 4
			if model {
				h.svc.Waits = waits.New()
			}
			for _, u := range []string{"rita", "rolf", "sam", "sven"} {
				mustOK(t, h.say(u+"@borealis.example", "/gpu request 1 dev for 2h"))
			}
			r := mustOK(t, h.say("vic@borealis.example", "/gpu request 1 dev for 2h"))
			if !strings.Contains(r.Text, "is queued") || !strings.Contains(r.Text, "dev may hold 4 GPUs at once (its capacity share) and holds 4") {
				t.Fatalf("the fifth dev GPU: %s", r.Text)
			}
			for _, bad := range []string{"none expected", "GPUs are free now", "probably none"} {
				if strings.Contains(r.Text, bad) {
					t.Errorf("queued under a full cap, yet told %q: %s", bad, r.Text)
				}
			}
			c := mustOK(t, h.say("vic@borealis.example", "/gpu catalog")).PlainText()
			if !strings.Contains(c, "Free now: 0 of 8") {
				t.Errorf("the catalog does not show the cap full:\n%s", c)
			}
			e := mustOK(t, h.say("vic@borealis.example", "/gpu estimate 1 dev 1h")).Text
			if strings.Contains(e, "free now") || strings.Contains(e, "none expected") {
				t.Errorf("the quote promises no wait under a full cap: %s", e)
			}
		})
	}
}

func templatesOn(t testing.TB, policyFile string) *harness {
	t.Helper()
	h := newHarnessOn(t, policyFile)
	cat, err := shippedCatalog()
	if err != nil {
		t.Fatal(err)
	}
	AddTemplates(h.bot, cat, workload.Settings{})
	return h
}

// shippedCatalog is the shipped templates, loaded once: a catalog is only read once loaded, and
// parsing every definition again for each harness was most of what a test of many harnesses did.
var shippedCatalog = sync.OnceValues(func() (*templates.Catalog, error) { return templates.Load(qmtemplates.FS) })

// /gpu template NAME previews NAME, for every template.
func TestTemplatePreviewShowsThatTemplate(t *testing.T) {
	h := templatesOn(t, otherPolicy)
	for _, tp := range h.bot.Templates.Catalog.List() {
		r := mustOK(t, h.say("rita@borealis.example", "/gpu template "+tp.Name))
		if !strings.Contains(r.Sections[0].Text, "template "+tp.Name+" v") || !strings.Contains(r.Sections[1].Text, tp.Name) {
			t.Errorf("/gpu template %s previews something else:\n%s", tp.Name, r.Sections[0].Text)
		}
	}
}

// A multi-node template goes to the class with the big nodes, and its lease says which nodes.
func TestMultiNodeTemplateGoesToTheBigNodes(t *testing.T) {
	h := templatesOn(t, "../docs/quartermaster.example.yaml")
	r := mustOK(t, h.say("alice@acme.example", "/gpu submit pytorch-ddp nnodes=2"))
	id := leaseIn(t, r.Text)
	if l := h.lease(id); l.Class != "train" || l.GPUs != 16 {
		t.Fatalf("pytorch-ddp nnodes=2 asks for %d × %s, want 16 × train", l.GPUs, l.Class)
	}
	mustOK(t, h.say("dana@acme.example", "/gpu approve "+id.String()))
	got := texts(h.notices("alice@acme.example"))
	if !strings.Contains(got, "all GPUs of h100-01 and h100-02") || strings.Contains(got, "(GPUs )") {
		t.Errorf("the approved multi-node lease does not say where it runs:\n%s", got)
	}
	// On 4-GPU nodes it asks for what fits: 4 per node.
	h = templatesOn(t, otherPolicy)
	id = leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu submit pytorch-ddp nnodes=2")).Text)
	if l := h.lease(id); l.Class != "bigiron" || l.GPUs != 8 {
		t.Fatalf("on 4-GPU nodes pytorch-ddp nnodes=2 asks for %d × %s, want 8 × bigiron", l.GPUs, l.Class)
	}
}

// A budget owner's own exception names and tells who really decides.
func TestOwnExceptionNamesWhoReallyDecides(t *testing.T) {
	for _, tc := range []struct {
		policy, owner, ask, decider string
	}{
		{"../docs/quartermaster.example.yaml", "dana@acme.example", "/gpu request 16 train for 2h", "platform-leads@acme.example"},
		{otherPolicy, "olga@borealis.example", "/gpu request 3 dev for 1h", "pete@borealis.example"},
		{otherPolicy, "vera@borealis.example", "/gpu request 3 dev for 1h", "ops@borealis.example"},
	} {
		t.Run(tc.owner, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			r := mustOK(t, h.say(tc.owner, tc.ask))
			id := leaseIn(t, r.Text)
			if !strings.Contains(r.Text, "so "+tc.decider+" will decide") || strings.Contains(r.Text, tc.owner+" will decide") {
				t.Errorf("reply names the wrong decider: %s", r.Text)
			}
			if len(h.notices(tc.owner)) != 0 {
				t.Errorf("%s was asked to decide their own request", tc.owner)
			}
			asked := h.notices(tc.decider)
			if len(asked) == 0 || len(asked[0].Actions) != 2 {
				t.Fatalf("%s was not told with Approve/Deny: %+v", tc.decider, asked)
			}
			mustOK(t, h.say(tc.decider, "/gpu approve "+id.String()))
			if l := h.lease(id); l.State == qm.PendingApproval || l.State == qm.Denied {
				t.Errorf("after %s approved, %s is %s", tc.decider, id, l.State)
			}
		})
	}
}

// Every example the product prints parses and does what it says: help's examples, the
// examples in refusals, the templates' examples, and every button's command.
func TestEveryPrintedExampleWorks(t *testing.T) {
	for _, pf := range []string{"../docs/quartermaster.example.yaml", otherPolicy} {
		t.Run(pf, func(t *testing.T) {
			h := templatesOn(t, pf)
			owner, member := "dana@acme.example", "alice@acme.example"
			if pf == otherPolicy {
				owner, member = "olga@borealis.example", "rita@borealis.example"
			}
			seen := map[string]bool{}
			add := func(m string) {
				m = strings.TrimRight(strings.TrimSpace(m), ".,)")
				if strings.HasPrefix(m, "/gpu") {
					seen[m] = true
				}
			}
			// Examples are what follows "Example: ", the lines of help's Examples section, the
			// templates' examples and every button's command.
			collect := func(r bot.Reply) {
				for _, line := range strings.Split(r.PlainText(), "\n") {
					if _, ex, ok := strings.Cut(line, "Example: "); ok {
						add(strings.SplitN(ex, " (", 2)[0])
					}
				}
				for _, s := range r.Sections {
					if s.Title == "Examples" {
						for _, line := range strings.Split(s.Text, "\n") {
							add(line)
						}
					}
					if i := strings.LastIndex(s.Text, "/gpu "); i >= 0 && strings.Contains(s.Title, " — ") { // a template in /gpu templates
						add(s.Text[i:])
					}
				}
				for _, a := range r.Actions {
					add(a.Command)
				}
			}
			collect(h.say(member, "/gpu help"))
			for _, s := range h.bot.Offered() {
				collect(h.say(member, "/gpu help "+strings.Join(s.Words, " ")))
				collect(h.say(member, "/gpu "+strings.Join(s.Words, " ")+" ~~~ 999999999 zz"))
			}
			collect(h.say(member, "/gpu frobnicate"))
			collect(h.say(member, "/gpu templates"))
			collect(h.say(member, "/gpu catalog"))
			collect(h.say(member, "/gpu estimate 1 zz 1h"))
			collect(h.say(member, "/gpu request 1 "+h.svc.Policy.Classes[0].Name+" for 1h"))
			if len(seen) < 20 {
				t.Fatalf("only %d examples found: %v", len(seen), seen)
			}
			var all []string
			for ex := range seen {
				all = append(all, ex)
			}
			sort.Strings(all)
			for _, ex := range all {
				if _, err := Parse(ex); err != nil {
					t.Errorf("printed example %q does not parse: %v", ex, err)
					continue
				}
				// Run it where it makes sense: a pending request L-1 of a member, an active lease
				// L-2 of the budget owner (and for cancel, a waiting request L-3 of theirs).
				fresh := templatesOn(t, pf)
				mustOK(t, fresh.say(member, "/gpu quota request +1 "+fresh.svc.Policy.Classes[0].Name+" because a test"))
				mustOK(t, fresh.say(owner, "/gpu request 1 "+fresh.svc.Policy.Classes[0].Name+" for 2h"))
				if strings.HasPrefix(ex, "/gpu cancel") { // cancels what waits: a request L-3 of the budget owner
					mustOK(t, fresh.say(owner, "/gpu quota request +1 "+fresh.svc.Policy.Classes[0].Name+" because a test"))
				}
				if c := fresh.svc.Policy.Classes[0]; strings.HasPrefix(ex, "/gpu keep") && c.IdleTimeout.Duration > 0 {
					// keep answers an idle warning: L-2 has been idle past its class's timeout
					fresh.sim.SetUtilization(fresh.lease(2), 0)
					fresh.advance(c.IdleTimeout.Duration + time.Minute)
				}
				run := regexp.MustCompile(`L-\d+`).ReplaceAllStringFunc(ex, func(string) string {
					if strings.HasPrefix(ex, "/gpu approve") || strings.HasPrefix(ex, "/gpu deny") {
						return "L-1"
					}
					if strings.HasPrefix(ex, "/gpu cancel") {
						return "L-3"
					}
					return "L-2"
				})
				if r := fresh.say(owner, run); r.Error {
					t.Errorf("printed example %q (run as %q) is refused: %s", ex, run, r.Text)
				}
			}
		})
	}
}

// One person whatever the case of their email: what Alice@… made, alice@… lists and releases.
func TestEmailCaseIsOnePerson(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	id := leaseIn(t, mustOK(t, h.say("Rita@Borealis.Example", "/gpu request 1 dev for 1h")).Text)
	if l := h.lease(id); l.User != "rita@borealis.example" {
		t.Errorf("the lease is held by %q, want the canonical rita@borealis.example", l.User)
	}
	if r := h.say("rita@borealis.example", "/gpu list"); !strings.Contains(r.PlainText(), id.String()) {
		t.Errorf("/gpu list in lower case does not show %s:\n%s", id, r.PlainText())
	}
	if r := h.say("RITA@borealis.example", "/gpu status "+id.String()); r.Error {
		t.Errorf("status in upper case: %s", r.Text)
	}
}

// /gpu help COMMAND explains one command with examples from this policy.
func TestHelpExplainsOneCommand(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	r := mustOK(t, h.say("rita@borealis.example", "/gpu help estimate"))
	got := r.PlainText()
	for _, want := range []string{"/gpu estimate N CLASS DURATION", "`N`, required: how many GPUs", "/gpu estimate 1 dev 4h"} {
		if !strings.Contains(got, want) {
			t.Errorf("/gpu help estimate lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "interactive") {
		t.Errorf("help names a class this policy does not have:\n%s", got)
	}
	r = h.say("rita@borealis.example", "/gpu frobnicate")
	if !r.Error || strings.Contains(r.Text, "interactive") {
		t.Errorf("an unknown command's hint names a class of another policy: %s", r.Text)
	}
}

// A duration under a minute is refused in the words it was asked in.
func TestSubMinuteDurationIsRefusedInItsOwnWords(t *testing.T) {
	h := newHarness(t)
	r := h.say("alice@acme.example", "/gpu request 1 interactive for 45s")
	if !r.Error || !strings.Contains(r.Text, `"45s"`) {
		t.Errorf("for 45s: %s", r.Text)
	}
}

// Only what is built is offered: report is neither in help nor accepted until it exists.
func TestOnlyBuiltCommandsAreOffered(t *testing.T) {
	h := newHarness(t)
	offered := map[string]bool{}
	for _, s := range h.bot.Offered() {
		offered[s.Name] = true
	}
	help := h.say("alice@acme.example", "/gpu help").PlainText()
	for _, s := range Table() {
		if strings.Contains(help, "`"+s.Usage+"`") != offered[s.Name] {
			t.Errorf("help and the table disagree on %s", s.Name)
		}
	}
	if offered["templates"] {
		t.Error("templates are offered by a bot without a template catalog")
	}
	if r := h.say("alice@acme.example", "/gpu templates"); !r.Error || !strings.Contains(r.Text, "not offered here") {
		t.Errorf("/gpu templates without templates: %s", r.Text)
	}
}

// failingStore is a fake store whose reads fail after the first few, as a database does when it
// goes away in the middle of a command.
type failingStore struct {
	qm.Store
	fail bool
}

func (f *failingStore) View(ctx context.Context, fn func(qm.Tx) error) error {
	if f.fail {
		return errors.New("database gone")
	}
	return f.Store.View(ctx, fn)
}

// A database error while predicting a wait is an error, never "no wait".
func TestStoreErrorWhilePredictingIsAnError(t *testing.T) {
	h := newHarness(t)
	fs := &failingStore{Store: h.svc.Store}
	h.svc.Store = fs
	fs.fail = true
	for _, cmd := range []string{"/gpu catalog", "/gpu estimate 1 train 2h"} {
		r := h.say("alice@acme.example", cmd)
		if !r.Error || strings.Contains(r.Text, "none") || strings.Contains(r.Text, "free now") {
			t.Errorf("%s with the database gone: %s", cmd, r.Text)
		}
	}
}

// A command delivered again (Slack retries; a redelivery after a restart reaches a new process)
// changes nothing the second time and is answered as done: extend, quota request, keep,
// release, approve and deny all carry their delivery key into the database.
func TestRedeliveredCommandsChangeNothingTwice(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	say := func(user, text, key string) bot.Reply {
		t.Helper()
		rs := h.bot.Handle(context.Background(), bot.Request{User: user, Text: text, Key: key})
		return rs[0]
	}
	id := leaseIn(t, mustOK(t, say("rita@borealis.example", "/gpu request 1 dev for 2h", "k1")).Text)
	for i := 0; i < 2; i++ {
		h.bot = &Bot{Svc: h.svc} // a restart: nothing in memory survives
		mustOK(t, say("rita@borealis.example", "/gpu extend "+id.String()+" 1h", "k2"))
	}
	if l := h.lease(id); l.Duration != 3*time.Hour {
		t.Errorf("extended twice by one command: %s", l.Duration)
	}
	before, _ := h.svc.List(context.Background(), qm.LeaseFilter{Kind: qm.AnyKind})
	for i := 0; i < 2; i++ {
		r := mustOK(t, say("rita@borealis.example", "/gpu quota request +2 dev for 1d because demo", "k3"))
		if i == 1 && !strings.Contains(r.Text, "already done") {
			t.Errorf("the repeat is not answered as done: %s", r.Text)
		}
	}
	after, _ := h.svc.List(context.Background(), qm.LeaseFilter{Kind: qm.AnyKind})
	if len(after) != len(before)+1 {
		t.Errorf("one quota request made %d requests", len(after)-len(before))
	}
	q := after[len(after)-1].ID
	for i := 0; i < 2; i++ {
		mustOK(t, say("olga@borealis.example", "/gpu approve "+q.String(), "k4"))
	}
	ev, _ := h.svc.History(context.Background(), q)
	if len(ev) != 2 {
		t.Errorf("one approval delivered twice left %d events: %+v", len(ev), ev)
	}
	for i := 0; i < 2; i++ {
		mustOK(t, say("rita@borealis.example", "/gpu release "+id.String(), "k5"))
	}
	if l := h.lease(id); l.State != qm.Released {
		t.Errorf("%s is %s", id, l.State)
	}
	// A new delivery (another key) of the same words is a new command.
	if r := say("rita@borealis.example", "/gpu release "+id.String(), "k6"); !r.Error {
		t.Errorf("releasing an ended lease again with a new command: %s", r.Text)
	}
}

// Approvers named by group hear of the exceptions they may decide: each member of the group the
// directory knows (not the requester), and any of them may decide.
func TestGroupApproversAreTold(t *testing.T) {
	raw, err := os.ReadFile(otherPolicy)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(raw), "budget_owners: [sven@borealis.example]", "budget_owners: [grp-speech-leads]", 1)
	s = strings.Replace(s, "{user: sven@borealis.example, groups: [grp-speech]}", "{user: sven@borealis.example, groups: [grp-speech, grp-speech-leads]}", 1)
	s = strings.Replace(s, "{user: sam@borealis.example, groups: [grp-speech]}", "{user: sam@borealis.example, groups: [grp-speech, grp-speech-leads]}\n  - {user: sue@borealis.example, groups: [grp-speech, grp-speech-leads]}", 1)
	path := filepath.Join(t.TempDir(), "groups.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarnessOn(t, path)
	id := leaseIn(t, mustOK(t, h.say("sam@borealis.example", "/gpu request 3 dev for 1h")).Text)
	for _, who := range []string{"sven@borealis.example", "sue@borealis.example"} {
		if got := h.notices(who); len(got) != 1 || len(got[0].Actions) != 2 {
			t.Errorf("%s (in the approvers' group) was not asked with Approve/Deny: %+v", who, got)
		}
	}
	if got := h.notices("sam@borealis.example"); len(got) != 0 {
		t.Errorf("the requester, also in the group, was asked to decide his own request: %+v", got)
	}
	mustOK(t, h.say("sue@borealis.example", "/gpu approve "+id.String()))
	if l := h.lease(id); l.State == qm.PendingApproval {
		t.Errorf("a group approver's decision did not stand: %s", l.State)
	}
}

// A request that queues because every node of an exclusive class is held by another team (or
// has too little room left) is not told that no wait is expected, though GPUs are free.
func TestWaitsOnAnExclusiveClassCountOnlyTheNodesTheTeamCanUse(t *testing.T) {
	for _, model := range []bool{false, true} {
		t.Run(fmt.Sprintf("predictor=%v", model), func(t *testing.T) {
			h := newHarnessOn(t, otherPolicy) // bigiron: 3 exclusive nodes of 4 GPUs
			if model {
				h.svc.Waits = waits.New()
			}
			mustOK(t, h.say("rita@borealis.example", "/gpu request 1 bigiron for 2h"))
			mustOK(t, h.say("sam@borealis.example", "/gpu request 1 bigiron for 2h"))
			mustOK(t, h.say("vic@borealis.example", "/gpu request 1 bigiron for 2h"))
			r := mustOK(t, h.say("rolf@borealis.example", "/gpu request 4 bigiron for 2h"))
			if !strings.Contains(r.Text, "is queued") {
				t.Fatalf("four GPUs with every node taken: %s", r.Text)
			}
			for _, bad := range []string{"none expected", "GPUs are free now", "probably none"} {
				if strings.Contains(r.Text, bad) {
					t.Errorf("queued with no node free for the team, yet told %q: %s", bad, r.Text)
				}
			}
			e := mustOK(t, h.say("rolf@borealis.example", "/gpu estimate 4 bigiron 1h")).Text
			if strings.Contains(e, "none expected") {
				t.Errorf("the quote promises no wait with no node free for the team: %s", e)
			}
		})
	}
}

// A request that meets several published rules names them all, in one sentence that reads
// right ("the published rules A (…) and B (…) apply"), and the approver's message says "Rules".
// A lease's card says what it would cost before it starts, what it costs so far while it runs,
// and how long it ran of how long and what it cost once it ended.
func TestSeveralRulesAndTheCardThroughALeaseLife(t *testing.T) {
	for _, tc := range []struct {
		policy, user, ask, decider string
		rules                      []string
		release                    string
	}{
		{"../docs/quartermaster.example.yaml", "carl@contractor.example", "/gpu request 2 interactive for 10h", "dana@acme.example",
			[]string{"large-request", "long-request", "contractor"}, "carl@contractor.example"},
		{otherPolicy, "vic@borealis.example", "/gpu request 3 dev for 3h", "vera@borealis.example",
			[]string{"too-big", "beyond-quota"}, "vic@borealis.example"},
	} {
		t.Run(tc.user, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			r := mustOK(t, h.say(tc.user, tc.ask))
			id := leaseIn(t, r.Text)
			want := "the published rules " + tc.rules[0] + " ("
			if !strings.Contains(r.Text, want) || !strings.Contains(r.Text, " and "+tc.rules[len(tc.rules)-1]+" (") || !strings.Contains(r.Text, ") apply, so ") {
				t.Errorf("reply does not name the rules in one sentence: %s", r.Text)
			}
			field := func(r bot.Reply, label string) string {
				for _, s := range r.Sections {
					for _, f := range s.Fields {
						if f.Label == label {
							return f.Value
						}
					}
				}
				return ""
			}
			if c := field(r, "Estimated cost"); c == "" || field(r, "Cost so far") != "" {
				t.Errorf("a request waiting for approval shows %q as its estimated cost and %q so far", c, field(r, "Cost so far"))
			}
			asked := h.notices(tc.decider)
			if len(asked) == 0 || !strings.Contains(asked[0].Text, "Rules: "+tc.rules[0]+":") {
				t.Fatalf("%s was not told the rules: %+v", tc.decider, asked)
			}
			mustOK(t, h.say(tc.decider, "/gpu approve "+id.String()))
			h.advance(90 * time.Minute)
			if s := mustOK(t, h.say(tc.user, "/gpu status "+id.String())); field(s, "Cost so far") == "" || field(s, "Time left") == "" {
				t.Errorf("a running lease's card lacks its time left or cost so far: %s", s.PlainText())
			}
			mustOK(t, h.say(tc.release, "/gpu release "+id.String()))
			s := mustOK(t, h.say(tc.user, "/gpu status "+id.String()))
			l := h.lease(id)
			if ran := field(s, "Ran"); !strings.HasPrefix(ran, "1h30m of ") {
				t.Errorf("a released lease's card says Ran %q, want 1h30m of its duration: %s", ran, s.PlainText())
			}
			if c := field(s, "Cost"); c == "" || field(s, "Cost so far") != "" || field(s, "Estimated cost") != "" {
				t.Errorf("a released lease's card shows cost %q: %s", c, s.PlainText())
			}
			if l.State != qm.Released {
				t.Errorf("%s is %s after release", id, l.State)
			}
		})
	}
}

// Someone in the directory with no groups has no team: /gpu quota says so, and how to get one,
// with an example naming one of the policy's teams, rather than an example that fails the same way.
func TestQuotaOfSomeoneWithoutATeam(t *testing.T) {
	src, err := os.ReadFile(otherPolicy)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "policy.yaml")
	text := strings.Replace(string(src), "directory:\n", "directory:\n  - {user: newcomer@borealis.example, groups: []}\n", 1)
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarnessOn(t, file)
	r := h.say("newcomer@borealis.example", "/gpu quota")
	if !r.Error || !strings.Contains(r.Text, "You belong to no team") || !strings.Contains(r.Text, "ask a platform admin") {
		t.Fatalf("/gpu quota without a team: %q", r.Text)
	}
	i := strings.Index(r.Text, " Example: ")
	if i < 0 {
		t.Fatalf("no example: %q", r.Text)
	}
	ex := r.Text[i+len(" Example: "):]
	if ex != "/gpu quota robotics" {
		t.Errorf("example %q, want one that names a team of the policy", ex)
	}
	if got := h.say("newcomer@borealis.example", ex); got.Error || !strings.Contains(got.Text, "Team robotics") {
		t.Errorf("the example %q does not work: %q", ex, got.Text)
	}
}

// A lease made longer holds its GPUs longer, so the wait quoted to the requests behind it grows
// with the extension: the predictor hears of it, not only of the lease's first length.
func TestExtendingALeaseLengthensTheWaitBehindIt(t *testing.T) {
	quoted := func(h *harness) time.Duration {
		t.Helper()
		e := mustOK(t, h.say("rolf@borealis.example", "/gpu estimate 1 bigiron 1h")).Text
		m := regexp.MustCompile(`Predicted wait: about ([0-9dhm]+)`).FindStringSubmatch(e)
		if m == nil {
			t.Fatalf("no predicted wait in %q", e)
		}
		d, err := policy.ParseDuration(m[1])
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, model := range []bool{false, true} {
		t.Run(fmt.Sprintf("predictor=%v", model), func(t *testing.T) {
			h := newHarnessOn(t, otherPolicy) // bigiron: 3 exclusive nodes of 4 GPUs, 48h without approval
			if model {
				h.svc.Waits = waits.New()
			}
			var ids []string
			for _, who := range []string{"rita@borealis.example", "sam@borealis.example", "vic@borealis.example"} {
				ids = append(ids, leaseIn(t, mustOK(t, h.say(who, "/gpu request 4 bigiron for 2h")).Text).String())
			}
			if before := quoted(h); before < 90*time.Minute || before > 3*time.Hour {
				t.Fatalf("every node held for 2h, yet the quoted wait is %s", before)
			}
			for i, who := range []string{"rita@borealis.example", "sam@borealis.example", "vic@borealis.example"} {
				if r := mustOK(t, h.say(who, "/gpu extend "+ids[i]+" 10h")); !strings.Contains(r.Text, "now runs until") {
					t.Fatalf("extension within policy: %s", r.Text)
				}
			}
			if after := quoted(h); after < 11*time.Hour {
				t.Errorf("every node now held for 12h, yet the quoted wait is %s", after)
			}
		})
	}
}

// On nodes without NVLink (each GPU its own island) a lease of two GPUs cannot be in one island
// whatever GPUs it gets: it is recorded as wider than the node's islands, not as badly placed,
// so the showback's well-connected share does not count it. On NVLinked nodes it is one island.
func TestLeasesWiderThanAnyIslandAreNotBadlyPlaced(t *testing.T) {
	h := newHarnessOn(t, otherPolicy) // dev: A10 nodes without NVLink; bigiron: one island of 4
	dev := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 2 dev for 1h")).Text)
	big := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 2 bigiron for 1h")).Text)
	if c := h.lease(dev).Connection; c != qm.ConnectionWider {
		t.Errorf("2 GPUs on a node without NVLink: connection %q, want %q", c, qm.ConnectionWider)
	}
	if c := h.lease(big).Connection; c != qm.ConnectionIsland {
		t.Errorf("2 GPUs on a node of one NVLink island: connection %q, want %q", c, qm.ConnectionIsland)
	}
}

// An exclusive lease holds whole nodes, so it is asked, counted against quota and billed for all
// their GPUs, as the scheduler allocates them: one GPU asked exclusively on nodes of four is four
// GPUs, and the published rules see four.
func TestAnExclusiveLeaseIsWholeNodesInEveryFigure(t *testing.T) {
	h := newHarnessOn(t, otherPolicy) // bigiron: nodes of 4 A100 at 2.00 EUR per GPU-hour; 4 without approval
	r := mustOK(t, h.say("rita@borealis.example", "/gpu request 1 bigiron for 2h exclusive"))
	t.Logf("reservation: %s", r.Text)
	id := leaseIn(t, r.Text)
	l := h.lease(id)
	if l.State != qm.Active || l.GPUs != 4 {
		t.Fatalf("1 GPU asked exclusively: %s with %d GPUs, want active with the node's 4", l.State, l.GPUs)
	}
	for _, want := range []string{"1 × bigiron", "takes 1 whole node of 4 GPUs = 4 GPUs for this lease alone", "16.00 EUR"} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("the grant does not say %q: %s", want, r.Text)
		}
	}
	if q := mustOK(t, h.say("rita@borealis.example", "/gpu quota")).PlainText(); !strings.Contains(q, "bigiron: 4 of 8 GPUs in use") {
		t.Errorf("the quota does not count the whole node: %s", q)
	}
	// Five GPUs exclusively are two whole nodes, eight GPUs: more than the class allows without approval.
	p := mustOK(t, h.say("rita@borealis.example", "/gpu request 5 bigiron for 1h exclusive"))
	t.Logf("reservation: %s", r.Text)
	if !strings.Contains(p.Text, "waits for approval") || !strings.Contains(p.Text, "too-big") {
		t.Fatalf("5 GPUs exclusively on nodes of 4: %s", p.Text)
	}
	asked := h.notices("olga@borealis.example")
	if len(asked) == 0 || !strings.Contains(asked[0].Text, "5 × bigiron exclusive for 1h, which takes 2 whole nodes of 4 GPUs = 8 GPUs") {
		t.Errorf("the approver is not told the whole nodes: %+v", asked)
	}
	h.advance(3 * time.Hour)
	if c := h.lease(id); c.State != qm.Expired || c.GPUs != 4 {
		t.Errorf("after expiry %s is %s with %d GPUs", id, c.State, c.GPUs)
	}
}

// policyVariant writes policyFile with each old text replaced by its new one, and returns the
// copy's path.
func policyVariant(t *testing.T, policyFile string, oldNew ...string) string {
	t.Helper()
	b, err := os.ReadFile(policyFile)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i+1 < len(oldNew); i += 2 {
		if !strings.Contains(s, oldNew[i]) {
			t.Fatalf("%s has no %q", policyFile, oldNew[i])
		}
		s = strings.Replace(s, oldNew[i], oldNew[i+1], 1)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(policyFile))
	if err := os.WriteFile(out, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// An extension that no published rule sends to a budget owner still may not take the team past
// its weekly GPU-hours, and a quota with a fraction of an hour is shown as written.
func TestAnExtensionCannotPassTheWeeklyGPUHours(t *testing.T) {
	h := newHarnessOn(t, policyVariant(t, otherPolicy, "gpu_hours_per_week: 100", "gpu_hours_per_week: 97.5"))
	id := leaseIn(t, mustOK(t, h.say("vic@borealis.example", "/gpu request 4 bigiron for 24h")).Text) // 96 GPU-hours
	r := h.say("vic@borealis.example", "/gpu extend "+id.String()+" 1h")
	want := "Team vision has 1.5 of its 97.5 GPU-hours left this week, and extending " + id.String() + " by 1h needs 4; ask for 22m at most, or ask your budget owner for more with /gpu quota request."
	if !r.Error || !strings.HasPrefix(r.Text, want) {
		t.Errorf("an extension past the weekly GPU-hours = %q, want a refusal starting %q", r.Text, want)
	}
	if l := h.lease(id); l.Duration != 24*time.Hour {
		t.Errorf("the refused extension left %s at %s", id, l.Duration)
	}
	q := mustOK(t, h.say("vic@borealis.example", "/gpu quota")).PlainText()
	if !strings.Contains(q, "96 of 97.5 used or committed, 1.5 left") {
		t.Errorf("/gpu quota after the refusal:\n%s", q)
	}
	mustOK(t, h.say("vic@borealis.example", "/gpu extend "+id.String()+" 15m")) // 1 GPU-hour: fits
	if l := h.lease(id); l.Duration != 24*time.Hour+15*time.Minute {
		t.Errorf("an extension within the quota left %s at %s", id, l.Duration)
	}
}

// An approved quota increase adds to the weekly GPU-hours its GPUs × the hours of this week it
// lasts, as the showback counts it: not a whole week from the moment it was approved, and not
// less as the week goes by.
func TestAQuotaIncreaseAddsItsHoursInTheWeek(t *testing.T) {
	for _, tc := range []struct {
		policy, user, owner, class, week string
		base                             float64
	}{
		{"../docs/quartermaster.example.yaml", "alice@acme.example", "dana@acme.example", "interactive", "Mon 30 Nov 09:00 CST", 600},
		{otherPolicy, "vic@borealis.example", "vera@borealis.example", "dev", "Mon 30 Nov 16:00 CET", 100},
	} {
		t.Run(tc.class, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			r := mustOK(t, h.say(tc.user, "/gpu quota request +1 "+tc.class+" for 1w because a deadline"))
			mustOK(t, h.say(tc.owner, "/gpu approve "+leaseIn(t, r.Text).String()))
			// Approved on Monday at start (a week from then ends in next week): 1 GPU × the
			// hours until next Monday 00:00.
			left := time.Date(2026, 12, 7, 0, 0, 0, 0, h.svc.Policy.Location).Sub(h.clock.Now()).Hours()
			want := fmt.Sprintf("of %s used or committed", qm.FormatHours(tc.base+left))
			for _, d := range []time.Duration{0, 26 * time.Hour} {
				h.advance(d)
				if q := mustOK(t, h.say(tc.user, "/gpu quota")).PlainText(); !strings.Contains(q, want) {
					t.Errorf("%s after approval (%s on): /gpu quota says\n%s\nwant %q", d, tc.week, q, want)
				}
			}
		})
	}
}

// On a backend that needs no Slurm or Kubernetes mapping, a class without one still previews,
// submits and runs every template.
func TestTemplatesWorkForAClassWithoutBackendMaps(t *testing.T) {
	h := templatesOn(t, policyVariant(t, otherPolicy,
		`    slurm: {partition: dev, gres: "gpu:a10"}
    kubernetes: {resource: nvidia.com/gpu, node_selector: {pool: dev}}
`, "",
		`    slurm: {partition: big, gres: "gpu:a100"}
    kubernetes: {resource: nvidia.com/gpu, node_selector: {pool: big}}
`, ""))
	for _, tp := range h.bot.Templates.Catalog.List() {
		r := h.say("rita@borealis.example", "/gpu template "+tp.Name)
		if r.Error {
			t.Errorf("/gpu template %s: %s", tp.Name, r.Text)
		}
	}
	r := h.say("rita@borealis.example", "/gpu request 1 dev for 2h template jupyterlab")
	if r.Error || !strings.Contains(r.Text, "is active") {
		t.Errorf("a request with a template on a class without a slurm map: %s", r.Text)
	}
	if r := h.say("rita@borealis.example", "/gpu submit cuda-smoke"); r.Error {
		t.Errorf("/gpu submit cuda-smoke on classes without slurm maps: %s", r.Text)
	}
}

// Money is written in the currency's own unit: yen without decimals, and a price finer than a cent
// as the policy wrote it; a bill is the same whether the chat or the showback says it.
func TestMoneyInTheCurrencysOwnUnit(t *testing.T) {
	h := newHarnessOn(t, policyVariant(t, otherPolicy, "currency: EUR", "currency: JPY", "price_per_gpu_hour: 0.50", "price_per_gpu_hour: 150.5"))
	c := mustOK(t, h.say("rita@borealis.example", "/gpu catalog")).PlainText()
	if !strings.Contains(c, "150.5 JPY per GPU-hour") || !strings.Contains(c, "2 JPY per GPU-hour") {
		t.Errorf("the catalog in yen:\n%s", c)
	}
	g := mustOK(t, h.say("rita@borealis.example", "/gpu request 1 dev for 3h"))
	if !strings.Contains(g.Text, "Estimated cost 452 JPY (150.5 JPY per GPU-hour)") {
		t.Errorf("the grant in yen: %s", g.Text)
	}

	h = newHarnessOn(t, policyVariant(t, otherPolicy, "price_per_gpu_hour: 0.50", "price_per_gpu_hour: 0.125"))
	id := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 1 dev for 1h")).Text)
	if c := mustOK(t, h.say("rita@borealis.example", "/gpu catalog")).PlainText(); !strings.Contains(c, "0.125 EUR per GPU-hour") {
		t.Errorf("a price of an eighth of a euro in the catalog:\n%s", c)
	}
	h.advance(90 * time.Minute)
	var ended string
	for _, n := range posted(h.notices("rita@borealis.example")) {
		if strings.Contains(n.Text, id.String()+" expired") {
			ended = n.Text
		}
	}
	if !strings.Contains(ended, "It used 1.00 GPU-hours, 0.13 EUR.") { // as the showback rounds it
		t.Errorf("the expiry of a 0.125 EUR lease: %q", ended)
	}
}

// When the requester is the only one who could decide, the refusal names the rule that needs the
// decision and says truly why nobody else can.
func TestNobodyElseCanDecideSaysWhy(t *testing.T) {
	for _, tc := range []struct{ name, fallback, why string }{
		{"owner and fallback approver", "fallback_approvers: [sven@borealis.example]", "you are its only budget owner and the only fallback approver too, and nobody may decide their own requests"},
		{"owner, no fallback approver", "fallback_approvers: []", "you are its only budget owner and the policy names no fallback approvers, and nobody may decide their own requests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarnessOn(t, policyVariant(t, otherPolicy, "fallback_approvers: [ops@borealis.example]", tc.fallback))
			r := h.say("sven@borealis.example", "/gpu request 4 dev for 2h")
			want := "The published rule too-big (Bigger than the class allows) needs a budget owner's approval, but nobody can decide the exceptions of team speech: " + tc.why + "; ask a platform admin"
			if !r.Error || !strings.HasPrefix(r.Text, want) {
				t.Errorf("got %q\nwant it to start %q", r.Text, want)
			}
			r = h.say("sven@borealis.example", "/gpu quota request +2 dev because a deadline")
			if want := "A quota increase needs a budget owner's approval, but nobody can decide the exceptions of team speech: " + tc.why; !r.Error || !strings.HasPrefix(r.Text, want) {
				t.Errorf("got %q\nwant it to start %q", r.Text, want)
			}
		})
	}
}

// The request examples in help, in refusals and in a template's preview stay within the class's
// max_duration, so that an example as given is granted without approval.
func TestRequestExamplesAreWithinTheClassLimits(t *testing.T) {
	h := templatesOn(t, policyVariant(t, otherPolicy, "max_duration: 6h", "max_duration: 90m"))
	help := mustOK(t, h.say("rita@borealis.example", "/gpu help request")).PlainText()
	if !strings.Contains(help, "/gpu request 1 dev for 1h30m") || strings.Contains(help, "for 4h") || strings.Contains(help, "for 2h") {
		t.Errorf("/gpu help request on a class of at most 90m:\n%s", help)
	}
	bad := h.say("rita@borealis.example", "/gpu request 1 dev for soon")
	ex := bad.Text[strings.Index(bad.Text, "Example: ")+len("Example: "):]
	if ex != "/gpu request 1 dev for 1h30m" {
		t.Fatalf("the refusal's example is %q: %s", ex, bad.Text)
	}
	if r := h.say("rita@borealis.example", ex); r.Error || !strings.Contains(r.Text, "is active") {
		t.Errorf("the example %q as given: %s", ex, r.Text)
	}
	if p := mustOK(t, h.say("rita@borealis.example", "/gpu template jupyterlab")).PlainText(); !strings.Contains(p, "1 × dev for 1h30m") {
		t.Errorf("the template preview's example lease:\n%s", p)
	}
}

// A listed team that names no data classes is cleared for public data, as a team the policy does
// not list is: its plain requests are not exceptions of a blank data class.
func TestATeamWithoutDataClassesIsClearedForPublicData(t *testing.T) {
	h := newHarnessOn(t, policyVariant(t, otherPolicy,
		"    quota: {gpus: {dev: 2, bigiron: 4}, gpu_hours_per_week: 100}\n    data_classes: [open]\n",
		"    quota: {gpus: {dev: 2, bigiron: 4}, gpu_hours_per_week: 100}\n",
		"exceptions:\n", "exceptions:\n  - {name: data, when: \"!(request.data_class in team.data_classes)\", why: Not cleared for this data class}\n"))
	r := h.say("vic@borealis.example", "/gpu request 1 dev for 1h")
	if r.Error || !strings.Contains(r.Text, "is active") {
		t.Fatalf("a plain request of a team without data_classes: %s", r.Text)
	}
	if l := h.lease(leaseIn(t, r.Text)); l.DataClass != "public" {
		t.Errorf("its data class is %q, want public", l.DataClass)
	}
	if r := h.say("vic@borealis.example", "/gpu request 1 dev for 1h data secret"); r.Error || !strings.Contains(r.Text, "data (Not cleared for this data class)") {
		t.Errorf("another data class is still an exception: %s", r.Text)
	}
}

// An approved extension tells the requester and the approver the lease's new end, its card on the
// approvers' copies is dated in full, and the list shows the lease at its new length, not the
// extension as a lease of its own.
func TestAnApprovedExtensionSaysTheNewEnd(t *testing.T) {
	long := "exceptions:\n  - {name: long, when: request.duration > class.max_duration, why: Longer than the class allows}\n"
	for _, tc := range []struct {
		policy, user, owner, class, by, end, decided string // by: past max_duration, so it needs approval
	}{
		{"../docs/quartermaster.example.yaml", "alice@acme.example", "dana@acme.example", "interactive", "8h", "Mon 30 Nov 19:00 CST (in 10h), 10h in all.", "at Mon 30 Nov 09:00 CST."},
		{policyVariant(t, otherPolicy, "exceptions:\n", long), "rita@borealis.example", "olga@borealis.example", "dev", "5h", "Mon 30 Nov 23:00 CET (in 7h), 7h in all.", "at Mon 30 Nov 16:00 CET."},
	} {
		t.Run(tc.class, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			lease := leaseIn(t, mustOK(t, h.say(tc.user, "/gpu request 1 "+tc.class+" for 2h")).Text)
			ext := leaseIn(t, mustOK(t, h.say(tc.user, "/gpu extend "+lease.String()+" "+tc.by)).Text[len("Extending L-1 by "+tc.by):])
			h.notices(tc.user)
			h.notices(tc.owner)
			r := mustOK(t, h.say(tc.owner, "/gpu approve "+ext.String()))
			if want := lease.String() + " now runs until " + tc.end; !strings.Contains(r.Text, want) {
				t.Errorf("the approver's answer %q, want it to say %q", r.Text, want)
			}
			var told, card string
			for _, n := range h.notices(tc.user) {
				if strings.Contains(n.Text, "was approved by") {
					told = n.Text
				}
			}
			for _, n := range h.notices(tc.owner) {
				if n.Update {
					card = n.Text
				}
			}
			if !strings.Contains(told, lease.String()+" now runs until "+tc.end) {
				t.Errorf("the requester was told %q", told)
			}
			if !strings.Contains(card, " "+tc.decided) {
				t.Errorf("the approver's card says %q, want it dated %q", card, tc.decided)
			}
			l := mustOK(t, h.say(tc.user, "/gpu list"))
			if len(l.Sections) != 1 || strings.Contains(l.PlainText(), ext.String()) {
				t.Errorf("/gpu list after the extension:\n%s", l.PlainText())
			}
		})
	}
}

// /gpu approvals gives every rule that sent a request for approval with its own reason, as the
// approval card does.
func TestApprovalsListEveryRuleWithItsReason(t *testing.T) {
	h := newHarnessOn(t, policyVariant(t, otherPolicy, "exceptions:\n",
		"exceptions:\n  - {name: long, when: request.duration > class.max_duration, why: Longer than the class allows}\n"))
	mustOK(t, h.say("rita@borealis.example", "/gpu request 3 dev for 8h"))
	a := mustOK(t, h.say("olga@borealis.example", "/gpu approvals")).PlainText()
	if want := "rules long: Longer than the class allows; too-big: Bigger than the class allows"; !strings.Contains(a, want) {
		t.Errorf("/gpu approvals:\n%s\nwant %q", a, want)
	}
}

// Extending a lease that waits to start says how long it will run once it starts.
func TestExtendingAQueuedLease(t *testing.T) {
	h := newHarnessOn(t, otherPolicy) // dev: at most 20% of 20 GPUs at once, 4
	mustOK(t, h.say("rita@borealis.example", "/gpu request 2 dev for 2h"))
	mustOK(t, h.say("rolf@borealis.example", "/gpu request 2 dev for 2h"))
	q := mustOK(t, h.say("sam@borealis.example", "/gpu request 1 dev for 1h"))
	if !strings.Contains(q.Text, "queued") {
		t.Fatalf("a request over the cap: %s", q.Text)
	}
	id := leaseIn(t, q.Text)
	r := mustOK(t, h.say("sam@borealis.example", "/gpu extend "+id.String()+" 1h"))
	if want := id.String() + " now lasts 2h in all, from when it starts. Estimated cost of the 1h added: 0.50 EUR (0.50 EUR per GPU-hour)."; r.Text != want {
		t.Errorf("extending a queued lease: %q, want %q", r.Text, want)
	}
	// Its card offers to cancel it, as the queued reply does.
	st := mustOK(t, h.say("sam@borealis.example", "/gpu status "+id.String()))
	if len(st.Actions) != 1 || st.Actions[0].Label != "Cancel" {
		t.Errorf("the queued lease's buttons: %+v", st.Actions)
	}
}

// A lease larger than a node takes whole nodes, so it is asked, counted against quota and billed
// for all of their GPUs, as an exclusive one is.
func TestALeaseLargerThanANodeIsWholeNodes(t *testing.T) {
	h := newHarnessOn(t, otherPolicy) // bigiron: nodes of 4
	r := mustOK(t, h.say("rita@borealis.example", "/gpu request 5 bigiron for 1h"))
	id := leaseIn(t, r.Text)
	if l := h.lease(id); l.GPUs != 8 {
		t.Fatalf("5 bigiron GPUs on nodes of 4 hold %d, want 8 (two whole nodes)", l.GPUs)
	}
	if !strings.Contains(r.Text, "the published rule too-big") {
		t.Errorf("8 GPUs are more than the class allows without approval: %s", r.Text)
	}
	asked := h.notices("olga@borealis.example")
	if len(asked) == 0 || !strings.Contains(asked[0].Text, "5 × bigiron for 1h, which takes 2 whole nodes of 4 GPUs = 8 GPUs") {
		t.Errorf("the approver is not told the whole nodes: %+v", asked)
	}
	mustOK(t, h.say("olga@borealis.example", "/gpu approve "+id.String()))
	granted := h.notices("rita@borealis.example")
	if len(granted) == 0 || !strings.Contains(granted[0].Text, "5 × bigiron (A100-80), which takes 2 whole nodes of 4 GPUs = 8 GPUs") || !strings.Contains(granted[0].Text, "16.00 EUR") {
		t.Errorf("the grant: %+v", granted)
	}
	if q := mustOK(t, h.say("rita@borealis.example", "/gpu quota")).PlainText(); !strings.Contains(q, "8 of 8") {
		t.Errorf("/gpu quota after two whole nodes:\n%s", q)
	}
}

// An exception that would also take the team past its quota says so to its approvers, so that an
// approval is a decision on the quota too; a rule about the quota already says it.
func TestAnExceptionPastTheQuotaSaysSoToTheApprover(t *testing.T) {
	long := "  - {name: long, when: request.duration > class.max_duration, why: Longer than the class allows}\n"
	h := newHarnessOn(t, policyVariant(t, otherPolicy,
		"  - name: beyond-quota\n    when: usage.gpus_in_use + request.gpus > team.quota.gpus[class.name]\n    why: Beyond the team's quota\n", long))
	mustOK(t, h.say("vic@borealis.example", "/gpu request 2 dev for 1h")) // vision: 2 dev GPUs at once
	h.notices("vera@borealis.example")
	r := mustOK(t, h.say("vic@borealis.example", "/gpu request 1 dev for 8h"))
	if !strings.Contains(r.Text, "the published rules long (Longer than the class allows) and quota (It would also take team vision past its quota, to 3 of its 2 dev GPUs at once) apply") {
		t.Errorf("the requester is told: %s", r.Text)
	}
	asked := h.notices("vera@borealis.example")
	if len(asked) == 0 || !strings.Contains(asked[0].Text, "quota: It would also take team vision past its quota, to 3 of its 2 dev GPUs at once") {
		t.Errorf("the approver is told: %+v", asked)
	}
	if a := mustOK(t, h.say("vera@borealis.example", "/gpu approvals")).PlainText(); !strings.Contains(a, "rules long: Longer than the class allows; quota: It would also take team vision past its quota, to 3 of its 2 dev GPUs at once") {
		t.Errorf("/gpu approvals:\n%s", a)
	}

	// The same request within the quota names only the rule it met.
	h = newHarnessOn(t, policyVariant(t, otherPolicy,
		"  - name: beyond-quota\n    when: usage.gpus_in_use + request.gpus > team.quota.gpus[class.name]\n    why: Beyond the team's quota\n", long))
	if r := mustOK(t, h.say("vic@borealis.example", "/gpu request 1 dev for 8h")); strings.Contains(r.Text, "quota") {
		t.Errorf("a request within the quota: %s", r.Text)
	}
}

// A request approved while its GPUs are taken is queued, and its requester hears when it may
// start, as a request queued at once does.
func TestAnApprovedRequestThatQueuesSaysItsWait(t *testing.T) {
	long := "exceptions:\n  - {name: long, when: request.duration > class.max_duration, why: Longer than the class allows}\n"
	h := newHarnessOn(t, policyVariant(t, otherPolicy, "exceptions:\n", long)) // dev: 4 GPUs at once
	mustOK(t, h.say("rita@borealis.example", "/gpu request 2 dev for 2h"))
	mustOK(t, h.say("rolf@borealis.example", "/gpu request 2 dev for 2h"))
	id := leaseIn(t, mustOK(t, h.say("vic@borealis.example", "/gpu request 1 dev for 8h")).Text)
	h.notices("vic@borealis.example")
	mustOK(t, h.say("vera@borealis.example", "/gpu approve "+id.String()))
	var told bot.Reply
	for _, n := range h.notices("vic@borealis.example") {
		if strings.Contains(n.Text, "was approved") {
			told = n
		}
	}
	if !strings.HasPrefix(told.Text, id.String()+" (for 1 × dev for 8h) was approved by vera@borealis.example and is queued: ") ||
		!strings.Contains(told.Text, "Predicted wait: ") || !strings.HasSuffix(told.Text, "You will get a message when it starts.") {
		t.Errorf("the requester of an approved request that queued is told %q", told.Text)
	}
	if len(told.Actions) != 1 || told.Actions[0].Label != "Cancel" {
		t.Errorf("its buttons: %+v", told.Actions)
	}
}

// A class without an idle grace still gives the owner of an idle lease a minute to keep it: the
// warning says so, and the reclaim comes that minute later, not at the instant of the warning.
func TestNoIdleGraceStillGivesTheWarningAMinute(t *testing.T) {
	h := newHarnessOn(t, policyVariant(t, otherPolicy, "    idle_grace: 5m\n", ""))
	id := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 1 dev for 4h")).Text)
	h.sim.SetUtilization(h.lease(id), 0)
	h.advance(20*time.Minute + 30*time.Second) // idle_timeout 20m
	warned := h.notices("rita@borealis.example")
	if len(warned) != 1 || !strings.Contains(warned[0].Text, "it will be reclaimed at Mon 30 Nov 16:21 CET (in 1m) unless you keep it with /gpu keep "+id.String()+".") {
		t.Fatalf("the idle warning: %+v", warned)
	}
	if l := h.lease(id); l.State != qm.IdleWarned {
		t.Fatalf("at the warning the lease is %s", l.State)
	}
	h.advance(time.Minute)
	if l := h.lease(id); l.State != qm.Reclaimed {
		t.Errorf("a minute after the warning the lease is %s", l.State)
	}
}

// On an exclusive class the wait quoted follows placement: a request that fits no node its team
// may use now starts when the first node another team holds frees up, not when its own team's
// node does.
func TestExclusiveClassWaitFollowsTheNodesThatFree(t *testing.T) {
	for _, model := range []bool{false, true} {
		t.Run(map[bool]string{false: "expiries", true: "predictor"}[model], func(t *testing.T) {
			h := newHarnessOn(t, otherPolicy) // bigiron: 3 exclusive nodes of 4
			if model {
				h.svc.Waits = waits.New()
			}
			mustOK(t, h.say("rita@borealis.example", "/gpu request 2 bigiron for 3h")) // robotics, a node until +3h
			mustOK(t, h.say("sam@borealis.example", "/gpu request 2 bigiron for 1h"))  // speech, a node until +1h
			mustOK(t, h.say("vic@borealis.example", "/gpu request 2 bigiron for 2h"))  // vision, a node until +2h
			e := mustOK(t, h.say("rolf@borealis.example", "/gpu estimate 3 bigiron 1h"))
			if !strings.Contains(e.Text, "Predicted wait: about 1h (90%: under 1h") {
				t.Errorf("3 GPUs on one node, robotics' own node holding 2: %s", e.Text)
			}
			q := mustOK(t, h.say("rolf@borealis.example", "/gpu request 3 bigiron for 1h"))
			if !strings.Contains(q.Text, "is queued") || !strings.Contains(q.Text, "Predicted wait: about 1h (90%: under 1h") {
				t.Errorf("the queued reply: %s", q.Text)
			}
			id := leaseIn(t, q.Text)
			h.advance(time.Hour + time.Minute)
			if l := h.lease(id); l.State != qm.Active || !l.StartedAt.Equal(start.Add(time.Hour)) {
				t.Errorf("the lease is %s from %s, want active from an hour on", l.State, l.StartedAt)
			}
		})
	}
}

// A lease that ends before it could be reclaimed is not warned of idleness: keeping it would not
// keep it any longer. It simply expires.
func TestNoIdleWarningForALeaseEndingFirst(t *testing.T) {
	h := newHarnessOn(t, otherPolicy) // dev: idle 20m → warning, reclaimed 5m later
	id := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 1 dev for 23m")).Text)
	h.sim.SetUtilization(h.lease(id), 0)
	h.advance(30 * time.Minute)
	got := posted(h.notices("rita@borealis.example"))
	if len(got) != 1 || !strings.Contains(got[0].Text, id.String()+" expired") {
		t.Errorf("an idle lease ending 3 minutes after its idle timeout: %+v", got)
	}
}

// An exception that was within its team's quota when asked, approved after the team's other
// leases grew past it, still stands (the budget owner decides), but the approver is told it
// takes the team past its quota, in the reply and on every approver's card, and the lease's
// rules record it. An approval that stays within says nothing of the quota.
func TestApprovalPastQuotaSaysSo(t *testing.T) {
	h := newHarnessOn(t, otherPolicy) // robotics: 6 dev GPUs at once; dev: at most 2 a lease
	big := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 3 dev for 1h")).Text)
	if l := h.lease(big); l.State != qm.PendingApproval || strings.Contains(l.Rules, qm.QuotaLimit) {
		t.Fatalf("3 of 6 dev GPUs: %s, rules %q", l.State, l.Rules)
	}
	h.notices("olga@borealis.example")
	h.notices("pete@borealis.example")
	mustOK(t, h.say("rolf@borealis.example", "/gpu request 2 dev for 1h"))
	mustOK(t, h.say("rolf@borealis.example", "/gpu request 2 dev for 1h"))

	r := mustOK(t, h.say("olga@borealis.example", "/gpu approve "+big.String()))
	want := "This approval takes team robotics past its quota, to 7 of its 6 dev GPUs at once."
	if !strings.Contains(r.Text, want) {
		t.Errorf("the approver was not told the approval goes past the quota: %s", r.Text)
	}
	if l := h.lease(big); l.State == qm.PendingApproval || !strings.Contains(l.Rules, qm.QuotaLimit) {
		t.Errorf("approved past the quota: %s, rules %q", l.State, l.Rules)
	}
	cards := h.notices("pete@borealis.example")
	if len(cards) != 1 || !cards[0].Update || !strings.Contains(cards[0].Text, want) {
		t.Errorf("the other approver's card does not say the approval went past the quota: %+v", cards)
	}
	// The other approver, a moment late, is pointed at the lease as it is now.
	late := h.say("pete@borealis.example", "/gpu deny "+big.String()+" too late")
	if !late.Error || !strings.Contains(late.Text, "already decided by olga@borealis.example") || !strings.HasSuffix(late.Text, "Example: /gpu status "+big.String()) {
		t.Errorf("a second decision: %s", late.Text)
	}
	mustOK(t, h.say("pete@borealis.example", "/gpu status "+big.String()))

	small := leaseIn(t, mustOK(t, h.say("sam@borealis.example", "/gpu request 3 dev for 1h")).Text)
	r = mustOK(t, h.say("sven@borealis.example", "/gpu approve "+small.String()))
	if strings.Contains(r.Text, "quota") {
		t.Errorf("an approval within the quota speaks of it: %s", r.Text)
	}
}

// A lease is billed at the price its class had when it was requested: a later change of the
// catalog's price (a new policy published) re-prices neither the lease's bill in chat nor the
// week's showback, and a lease whose class has left the catalog is still billed, not dropped.
func TestALeaseKeepsThePriceItWasRequestedAt(t *testing.T) {
	h := newHarnessOn(t, otherPolicy) // dev: 0.50 EUR per GPU-hour
	AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})
	a := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 2 dev for 2h")).Text)
	b := leaseIn(t, mustOK(t, h.say("rolf@borealis.example", "/gpu request 1 bigiron for 2h")).Text)
	h.advance(time.Hour)

	dev, _ := h.svc.Policy.Class("dev")
	dev.PricePerGPUHour = 3 // the price rises after rita asked
	if got := mustOK(t, h.say("rita@borealis.example", "/gpu release "+a.String())).Text; !strings.Contains(got, "It used 2.00 GPU-hours, 1.00 EUR.") {
		t.Errorf("the bill after the price rose: %s", got)
	}
	// rolf's class leaves the catalog while his lease runs: his bill is still 2.00 EUR an hour.
	h.svc.Policy.Classes = slices.DeleteFunc(h.svc.Policy.Classes, func(c *policy.Class) bool { return c.Name == "bigiron" })
	if got := mustOK(t, h.say("rolf@borealis.example", "/gpu release "+b.String())).Text; !strings.Contains(got, "It used 1.00 GPU-hours, 2.00 EUR.") {
		t.Errorf("the bill of a lease whose class left the catalog: %s", got)
	}
	r := h.say("olga@borealis.example", "/gpu report this week robotics")
	if !strings.Contains(r.Text+texts([]bot.Reply{r}), "3.00 EUR") {
		t.Errorf("this week's showback, 1.00 EUR of dev and 2.00 EUR of bigiron, says: %s", texts([]bot.Reply{r}))
	}
}

// A running lease whose job the scheduler put back in its queue: its owner reads what happened,
// that the workspace does not run and is not billed meanwhile, that its GPUs still count in its
// team's quota, when the lease still ends, and can release it.
func TestRequeuedNoticeSaysWhatHappened(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	id := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 1 dev for 2h")).Text)
	l := h.lease(id)
	rs := h.bot.RenderNotice(context.Background(), qm.Notice{Kind: qm.NoticeRequeued, To: []string{l.User}, Lease: l,
		Reason: "its job is back in the scheduler's queue: Slurm: JobHeldAdmin"})
	want := id.String() + ": its job is back in the scheduler's queue: Slurm: JobHeldAdmin, so its workspace does not run now and is not billed until it runs again; the quota of team robotics still counts its 1 GPU, which it takes back when it runs. You will get a message with how to connect when it runs again. The lease still ends Mon 30 Nov 18:00 CET (in 2h)."
	if len(rs) != 1 || rs[0].Text != want || len(rs[0].Actions) != 1 || rs[0].Actions[0].Command != "/gpu release "+id.String() {
		t.Errorf("requeued notice: %+v\nwant %q", rs, want)
	}
}

// heldGPUs is how many GPUs a running lease holds on the cluster: all of its nodes' when it holds
// whole nodes, else the GPUs placement gave it.
func heldGPUs(h *harness, l *qm.Lease) int {
	h.t.Helper()
	if !l.Exclusive && !strings.Contains(l.Node, ",") {
		return len(l.GPUIndex)
	}
	n := 0
	for _, name := range strings.Split(l.Node, ",") {
		for _, nd := range h.sim.Inventory() {
			if nd.Name == name && nd.Class == l.Class {
				n += nd.GPUs
			}
		}
	}
	return n
}

// On a class whose nodes differ in size, a lease holds the GPUs it is counted and billed for: a
// reservation or a lease larger than any node holds whole nodes that add up to its GPUs (the
// fewest GPUs of whole nodes that hold what was asked), and a lease that fits one node takes GPUs
// of one node, whichever size of node the policy lists first.
func TestWholeNodesOfDifferentSizesHoldWhatIsBilled(t *testing.T) {
	mini := "    - {name: a100mini, count: 2, class: bigiron, gpus: 2, nvlink_islands: 1}\n"
	big := "    - {name: a100, count: 3, class: bigiron, gpus: 4, nvlink_islands: 1}\n"
	for _, tc := range []struct{ name, nodes string }{{"big nodes first", big + mini}, {"small nodes first", mini + big}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarnessOn(t, policyVariant(t, otherPolicy, big, tc.nodes)) // bigiron: 3 nodes of 4, 2 of 2
			check := func(id qm.LeaseID, text string) {
				t.Helper()
				l := h.lease(id)
				if l.State != qm.Active {
					t.Fatalf("%s is %s: %s", id, l.State, text)
				}
				if got := heldGPUs(h, l); got != l.GPUs {
					t.Errorf("%s is %d × bigiron but holds %d GPUs on %s: %s", id, l.GPUs, got, l.Node, text)
				}
				if want := fmt.Sprintf("%.2f EUR", 2*float64(l.GPUs)); !strings.Contains(text, want) {
					t.Errorf("%s's bill is not its %d GPUs' %s: %s", id, l.GPUs, want, text)
				}
			}
			// 3 GPUs fit one node of 4.
			r := mustOK(t, h.say("rita@borealis.example", "/gpu request 3 bigiron for 1h"))
			check(leaseIn(t, r.Text), r.Text)
			// The other nodes of 4 go to other teams; a reservation then gets a node of 2.
			mustOK(t, h.say("sam@borealis.example", "/gpu request 4 bigiron for 1h"))
			mustOK(t, h.say("vic@borealis.example", "/gpu request 4 bigiron for 1h"))
			r = mustOK(t, h.say("rolf@borealis.example", "/gpu request 1 bigiron for 1h exclusive"))
			id := leaseIn(t, r.Text)
			if l := h.lease(id); l.State == qm.PendingApproval {
				r = mustOK(t, h.say("olga@borealis.example", "/gpu approve "+id.String()))
				r = h.notices("rolf@borealis.example")[0]
			}
			check(id, r.Text)
			// Six GPUs are a node of 4 and one of 2 once those are free.
			h.advance(2 * time.Hour)
			r = mustOK(t, h.say("rita@borealis.example", "/gpu request 5 bigiron for 1h"))
			id = leaseIn(t, r.Text)
			if l := h.lease(id); l.GPUs != 6 {
				t.Errorf("5 GPUs on nodes of 4 and 2 are %d × bigiron, want 6 (a node of 4 and one of 2)", l.GPUs)
			}
			h.notices("rita@borealis.example")
			mustOK(t, h.say("olga@borealis.example", "/gpu approve "+id.String()))
			check(id, texts(h.notices("rita@borealis.example")))
		})
	}
}

// The catalog's request button and the empty list's suggestion ask for what the first class
// grants without approval: on a class of at most 90m, not 2h.
func TestSuggestedRequestsAreWithinTheClassLimits(t *testing.T) {
	h := newHarnessOn(t, policyVariant(t, otherPolicy, "max_duration: 6h", "max_duration: 90m"))
	c := mustOK(t, h.say("rita@borealis.example", "/gpu catalog"))
	if len(c.Actions) != 1 || c.Actions[0].Command != "/gpu request 1 dev for 1h30m" {
		t.Fatalf("the catalog's button: %+v", c.Actions)
	}
	l := mustOK(t, h.say("rita@borealis.example", "/gpu list"))
	if !strings.HasSuffix(l.Text, "Try /gpu request 1 dev for 1h30m") {
		t.Errorf("/gpu list with no leases: %s", l.Text)
	}
	if r := mustOK(t, h.say("rita@borealis.example", c.Actions[0].Command)); !strings.Contains(r.Text, "is active") {
		t.Errorf("the catalog's button as given: %s", r.Text)
	}
}

// The GPU-hours a reclaim gave back are told as the showback counts them, to the hundredth: a
// lease of 1h reclaimed after 25m gave back 0.58 GPU-hours, not "0.6".
func TestReclaimedHoursAreToldAsTheShowbackCountsThem(t *testing.T) {
	h := newHarnessOn(t, otherPolicy) // dev: idle 20m → warning, reclaimed 5m later
	AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})
	id := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 1 dev for 1h")).Text)
	h.sim.SetUtilization(h.lease(id), 0)
	h.advance(30 * time.Minute)
	if l := h.lease(id); l.State != qm.Reclaimed {
		t.Fatalf("%s is %s", id, l.State)
	}
	told := texts(h.notices("rita@borealis.example"))
	if !strings.Contains(told, "0.58 GPU-hours went back to the pool. It used 0.42 GPU-hours") {
		t.Errorf("the reclaim notice:\n%s", told)
	}
	r := h.say("olga@borealis.example", "/gpu report this week robotics")
	if got := texts([]bot.Reply{r}); !strings.Contains(got, "reclaimed 0.58") {
		t.Errorf("the showback does not count 0.58 reclaimed GPU-hours:\n%s", got)
	}
}

// A team without a weekly GPU-hour limit is not sent to its budget owner by a rule that compares
// the week's GPU-hours with that limit: rules read no limit as none, as admission does.
func TestNoWeeklyLimitIsNoneToTheRules(t *testing.T) {
	raw, err := os.ReadFile(otherPolicy)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(raw), "    quota: {gpus: {dev: 2, bigiron: 4}, gpu_hours_per_week: 100}", "    quota: {gpus: {dev: 2, bigiron: 4}}", 1)
	s = strings.Replace(s, "exceptions:\n", "exceptions:\n  - name: weekly-hours\n    when: usage.gpu_hours_week + request.gpu_hours > team.quota.gpu_hours_per_week\n    why: Beyond the team's weekly GPU-hours\n", 1)
	path := filepath.Join(t.TempDir(), "noweekly.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarnessOn(t, path)
	id := leaseIn(t, mustOK(t, h.say("vic@borealis.example", "/gpu request 1 dev for 2h")).Text)
	if l := h.lease(id); l.State == qm.PendingApproval {
		t.Errorf("vision, with no weekly limit, waits for approval by %q", l.Rules)
	}
	// A team with a weekly limit still meets the rule past it.
	big := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 2 dev for 6h")).Text)
	for range 40 {
		if l := h.lease(big); l.State == qm.PendingApproval {
			break
		}
		big = leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 1 bigiron for 48h")).Text)
	}
	if l := h.lease(big); l.State != qm.PendingApproval || !strings.Contains(l.Rules, "weekly-hours") {
		t.Errorf("robotics past its 400 GPU-hours: %s, rules %q", l.State, l.Rules)
	}
}

// A lease's history names the time zone of its times, as every other time shown does, so that
// times on either side of a clock change read in order.
func TestStatusHistoryNamesItsZone(t *testing.T) {
	h := newHarnessOn(t, otherPolicy) // Europe/Berlin
	id := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 1 dev for 2h")).Text)
	r := mustOK(t, h.say("rita@borealis.example", "/gpu status "+id.String()))
	hist := r.Sections[len(r.Sections)-1]
	if hist.Title != "History" || !strings.Contains(hist.Text, "Mon 30 Nov 16:00 CET  rita@borealis.example: new → ") {
		t.Errorf("history: %+v", hist)
	}
}

// A template that runs on one node, asked for more GPUs than a node of the class holds, is refused
// before a lease is asked for, saying so, instead of a lease that could never start; a multi-node
// template asked for as many is spread over whole nodes, as the service places it.
func TestMoreGPUsThanANodeHolds(t *testing.T) {
	h := templatesOn(t, "../docs/quartermaster.example.yaml")
	r := h.say("alice@acme.example", "/gpu submit jupyterlab gpus=8 class=interactive")
	if !r.Error || !strings.Contains(r.Text, "a node of class interactive holds 4 GPUs, fewer than the 8 asked for") {
		t.Errorf("jupyterlab on 8 L40S of 4-GPU nodes: %q", r.Text)
	}
	if n := h.leaseCount(); n != 0 {
		t.Errorf("%d leases were made", n)
	}
	r = mustOK(t, h.say("alice@acme.example", "/gpu submit pytorch-ddp gpus=16 class=train"))
	if l := h.lease(leaseIn(t, r.Text)); l.GPUs != 16 {
		t.Errorf("pytorch-ddp gpus=16: %d GPUs", l.GPUs)
	}
}

// A running lease whose job the scheduler suspended: its owner reads what happened, that the
// workspace is paused, keeps its GPUs and is billed, when the lease still ends, and can release it.
func TestSuspendedNoticeSaysWhatHappened(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	id := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 1 dev for 2h")).Text)
	l := h.lease(id)
	rs := h.bot.RenderNotice(context.Background(), qm.Notice{Kind: qm.NoticeSuspended, To: []string{l.User}, Lease: l,
		Reason: "its job is suspended in the scheduler (Slurm: SUSPENDED)"})
	want := id.String() + ": its job is suspended in the scheduler (Slurm: SUSPENDED), so its workspace is paused: it keeps its GPUs and is billed as before, and you will get a message when it runs again. The lease still ends Mon 30 Nov 18:00 CET (in 2h)."
	if len(rs) != 1 || rs[0].Text != want || len(rs[0].Actions) != 1 || rs[0].Actions[0].Command != "/gpu release "+id.String() {
		t.Errorf("suspended notice: %+v\nwant %q", rs, want)
	}
}
