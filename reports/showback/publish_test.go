package showback_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/schedule"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/reports/showback"
)

// chat is a fake chat platform (no Slack here): it records every message delivered to it, by
// week and recipient, and lets a test make a replica die at a chosen message.
type chat struct {
	mu   sync.Mutex
	got  map[string][]string // week -> recipients, in delivery order
	by   map[string]string   // week/recipient -> replica
	kill func(replica string, r bot.Reply) bool
}

func newChat() *chat { return &chat{got: map[string][]string{}, by: map[string]string{}} }

func weekOfRef(ref string) string {
	return strings.TrimSuffix(strings.TrimPrefix(ref, "showback:"), ":dm")
}

// deliverer is one replica's way to the chat.
type deliverer struct {
	c       *chat
	replica *replica
}

var errKilled = errors.New("the replica died")

func (d deliverer) Deliver(_ context.Context, r bot.Reply) error {
	d.c.mu.Lock()
	kill := d.c.kill != nil && d.c.kill(d.replica.name, r)
	if kill {
		d.c.kill = nil
	}
	d.c.mu.Unlock()
	if kill {
		// The process dies here: its database connections (and the job lock one of them held)
		// go with it, so it can neither record nor release anything.
		d.replica.die()
		return errKilled
	}
	if d.replica.dead() {
		return errKilled
	}
	d.c.mu.Lock()
	defer d.c.mu.Unlock()
	w := weekOfRef(r.Ref)
	d.c.got[w] = append(d.c.got[w], r.To)
	d.c.by[w+"/"+r.To] = d.replica.name
	if r.To == "#gpu-showback" && len(r.Files) != 2 {
		return fmt.Errorf("the channel post has %d files, want the chart and the CSV", len(r.Files))
	}
	return nil
}

func (c *chat) snapshot() map[string][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]string{}
	for k, v := range c.got {
		out[k] = append([]string(nil), v...)
	}
	return out
}

type replica struct {
	name   string
	db     *store.DB
	sched  *schedule.Scheduler
	mu     sync.Mutex
	isDead bool
	died   chan struct{}
}

func (r *replica) die() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.isDead {
		r.isDead = true
		_ = r.db.Close()
		close(r.died)
	}
}

func (r *replica) dead() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.isDead
}

type cluster struct {
	t    *testing.T
	url  string
	pol  *policy.Policy
	fc   *clockwork.FakeClock
	chat *chat
	live []*replica
}

func (c *cluster) start(name string) *replica {
	c.t.Helper()
	db := storetest.Open(c.t, c.url)
	r := &replica{name: name, db: db, died: make(chan struct{})}
	w, err := schedule.ParseWeekly(c.pol.Reports.Showback.Schedule, c.pol.Location)
	if err != nil {
		c.t.Fatal(err)
	}
	pub := &showback.Publisher{Reports: &showback.Service{Policy: c.pol, Source: db, Clock: c.fc}, Ledger: db,
		Deliver: deliverer{c.chat, r}, Schedule: w, Owner: name, ClaimTTL: 15 * time.Minute}
	r.sched, err = schedule.New(schedule.Options{Clock: c.fc, Location: c.pol.Location, Locker: db, Logger: storetest.Logger(c.t)})
	if err != nil {
		c.t.Fatal(err)
	}
	if err := pub.Plan(r.sched, 5*time.Minute); err != nil {
		c.t.Fatal(err)
	}
	r.sched.Start()
	c.live = append(c.live, r)
	return r
}

// stop stops a replica's scheduler (after it died, or to take it down).
func (c *cluster) stop(r *replica) {
	c.t.Helper()
	if err := r.sched.Stop(); err != nil {
		c.t.Fatal(err)
	}
	r.die()
	for i, x := range c.live {
		if x == r {
			c.live = append(c.live[:i], c.live[i+1:]...)
		}
	}
}

// advance moves the shared clock to t once every live scheduler has armed its two timers.
func (c *cluster) advance(t time.Time) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), 20*time.Second)
	defer cancel()
	if err := c.fc.BlockUntilContext(ctx, 2*len(c.live)); err != nil {
		c.t.Fatalf("the schedulers did not arm their timers: %v", err)
	}
	c.fc.Advance(t.Sub(c.fc.Now()))
}

// posted waits until the week is recorded as posted.
func (c *cluster) posted(db *store.DB, week string) {
	c.t.Helper()
	c.until(week+" was not posted", func() bool {
		at, err := db.PostedWeek(context.Background(), week)
		if err != nil {
			c.t.Fatal(err)
		}
		return !at.IsZero()
	})
}

// awaitDeath waits until a live replica has died.
func (c *cluster) awaitDeath() {
	c.t.Helper()
	c.until("no replica died", func() bool {
		for _, r := range c.live {
			if r.dead() {
				return true
			}
		}
		return false
	})
}

// until waits for cond. Whenever two seconds pass without it, the shared clock moves on by the
// catch-up interval, as time passes in production: when the clock jumped while a replica's job
// of the week before still held its lock, the replicas skip that run, and the next catch-up
// makes it up.
func (c *cluster) until(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	nudge := time.Now().Add(2 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("%s within 90 s; the chat has %v", what, c.chat.snapshot())
		}
		if time.Now().After(nudge) {
			c.advance(c.fc.Now().Add(5 * time.Minute))
			c.t.Logf("waiting for %q: moved the clock on to %s", what, c.fc.Now().Format(time.DateTime))
			nudge = time.Now().Add(2 * time.Second)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// settle gives the replicas' jobs that the last advance fired time to finish.
func settle() { time.Sleep(time.Second) }

// Three replicas on one PostgreSQL over four simulated weeks: each week's post and each budget
// owner's DM goes out exactly once, though a replica dies after claiming a week and before posting
// it, another dies half-way through a week's DMs, and every replica is down over the last Monday.
func TestThreeReplicasPostEachWeekExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("four simulated weeks on PostgreSQL")
	}
	storetest.RequirePostgres(t)
	pol := examplePolicy(t)
	loc := pol.Location
	url := storetest.Postgres(t)
	seed := storetest.Open(t, url)
	// A little use each week from 2 November (2026-W45) to 29 November (2026-W48).
	start := time.Date(2026, 11, 2, 8, 0, 0, 0, loc)
	if err := seed.Update(t.Context(), nil, func(tx qm.Tx) error {
		for d := range 28 {
			day := start.AddDate(0, 0, d)
			for i, team := range []string{"vision", "language"} {
				l := &qm.Lease{User: "alice@acme.example", Team: team, Class: "interactive", GPUs: 1 + i, State: qm.Expired,
					CreatedAt: day, StartedAt: day, ExpiresAt: day.Add(2 * time.Hour), EndedAt: day.Add(2 * time.Hour)}
				if err := tx.CreateLease(t.Context(), l); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	c := &cluster{t: t, url: url, pol: pol, fc: clockwork.NewFakeClockAt(start), chat: newChat()}
	a, b, r3 := c.start("a"), c.start("b"), c.start("c")
	defer func() {
		for _, r := range append([]*replica(nil), c.live...) {
			c.stop(r)
		}
	}()
	monday := func(day int) time.Time { return time.Date(2026, 11, day, 9, 0, 0, 0, loc) }

	// 2026-W45: an ordinary Monday.
	c.advance(monday(9).Add(-time.Minute))
	settle()
	c.advance(monday(9))
	c.posted(seed, "2026-W45")

	// 2026-W46: whichever replica claims the week dies before it posts anything.
	var victim string
	c.chat.mu.Lock()
	c.chat.kill = func(replica string, r bot.Reply) bool { return r.Ref == showback.Ref("2026-W46") }
	c.chat.mu.Unlock()
	c.advance(monday(16))
	select {
	case <-a.died:
		victim = a.name
	case <-b.died:
		victim = b.name
	case <-r3.died:
		victim = r3.name
	case <-time.After(60 * time.Second):
		t.Fatal("no replica claimed 2026-W46")
	}
	for _, r := range []*replica{a, b, r3} {
		if r.name == victim {
			c.stop(r)
		}
	}
	settle()
	if at, _ := seed.PostedWeek(t.Context(), "2026-W46"); !at.IsZero() {
		t.Fatal("2026-W46 was marked posted though its replica died before posting")
	}
	if got := c.chat.snapshot()["2026-W46"]; len(got) != 0 {
		t.Fatalf("2026-W46 reached the chat before its claim ran out: %v", got)
	}
	// Its claim runs out after 15 minutes; the next catch-up of a live replica posts it.
	c.advance(monday(16).Add(16 * time.Minute))
	settle()
	c.advance(monday(16).Add(21 * time.Minute))
	c.posted(seed, "2026-W46")

	// 2026-W47: a replica dies after the channel post and the first DM.
	c.chat.mu.Lock()
	c.chat.kill = func(replica string, r bot.Reply) bool {
		return r.Ref == showback.Ref("2026-W47")+":dm" && r.To == "lee@acme.example"
	}
	c.chat.mu.Unlock()
	c.advance(monday(23))
	c.awaitDeath()
	for _, r := range append([]*replica(nil), c.live...) {
		if r.dead() {
			c.stop(r)
		}
	}
	if len(c.live) != 1 {
		t.Fatalf("%d replicas alive after the second death, want 1", len(c.live))
	}
	c.advance(monday(23).Add(16 * time.Minute))
	settle()
	c.advance(monday(23).Add(21 * time.Minute))
	c.posted(seed, "2026-W47")

	// 2026-W48: every replica is down over Monday; two start on Tuesday and post it once.
	for _, r := range append([]*replica(nil), c.live...) {
		c.stop(r)
	}
	c.fc.Advance(time.Date(2026, 12, 1, 10, 0, 0, 0, loc).Sub(c.fc.Now()))
	c.start("d")
	c.start("e")
	c.posted(seed, "2026-W48")
	settle()

	got := c.chat.snapshot()
	want := []string{"#gpu-showback", "dana@acme.example", "lee@acme.example"}
	var weeks []string
	for w := range got {
		weeks = append(weeks, w)
	}
	sort.Strings(weeks)
	if strings.Join(weeks, ",") != "2026-W45,2026-W46,2026-W47,2026-W48" {
		t.Fatalf("weeks posted: %v, want 2026-W45 to 2026-W48", weeks)
	}
	for _, w := range weeks {
		if strings.Join(got[w], ",") != strings.Join(want, ",") {
			t.Errorf("%s went to %v, want each of %v exactly once, in that order", w, got[w], want)
		}
	}
	c.chat.mu.Lock()
	defer c.chat.mu.Unlock()
	if victim == "" || c.chat.by["2026-W46/#gpu-showback"] == victim {
		t.Errorf("2026-W46 was posted by %q, the replica that died (%q)", c.chat.by["2026-W46/#gpu-showback"], victim)
	}
	if c.chat.by["2026-W47/dana@acme.example"] == c.chat.by["2026-W47/lee@acme.example"] {
		t.Errorf("2026-W47's DMs were all sent by one replica, %s: the death half-way did not happen", c.chat.by["2026-W47/lee@acme.example"])
	}
}

// refusingChat takes every message except those to the recipients it cannot reach, as Slack
// refuses a DM to someone who left the workspace or a budget-owner group it does not know.
type refusingChat struct {
	unreachable map[string]bool
	got         []string
}

func (c *refusingChat) Deliver(_ context.Context, r bot.Reply) error {
	if c.unreachable[r.To] {
		return fmt.Errorf("slack: cannot reach %s: users_not_found", r.To)
	}
	c.got = append(c.got, r.To)
	return nil
}

// A budget owner the chat cannot reach does not keep the week's other messages from going out:
// every other owner gets their DM in the same run, each exactly once, and only the unreachable
// one is tried again on later runs, while the week stays unposted so that it can still go out.
func TestAnUnreachableBudgetOwnerDoesNotHoldBackTheOthers(t *testing.T) {
	pol, db, w := borealisWeekOfOneLease(t)
	fc := clockwork.NewFakeClockAt(time.Date(2026, 3, 13, 17, 0, 0, 0, pol.Location)) // Friday after 2026-W10
	chat := &refusingChat{unreachable: map[string]bool{"olga@borealis.example": true}}
	pub := &showback.Publisher{Reports: &showback.Service{Policy: pol, Source: db, Clock: fc}, Ledger: db, Deliver: chat,
		Schedule: w, Owner: "a", ClaimTTL: 15 * time.Minute}
	week := showback.Week{Year: 2026, Num: 10}
	if posted, err := pub.Publish(t.Context(), week); posted || err == nil || !strings.Contains(err.Error(), "olga@borealis.example") {
		t.Fatalf("Publish with olga unreachable: posted %v, %v; want an error naming olga", posted, err)
	}
	want := "#finance,pete@borealis.example,sven@borealis.example,vera@borealis.example"
	if got := strings.Join(chat.got, ","); got != want {
		t.Fatalf("the first run delivered to %s; want every reachable recipient, %s", got, want)
	}
	// The next run sends only what is still missing; once olga is reachable the week is posted.
	fc.Advance(5 * time.Minute)
	if _, err := pub.Publish(t.Context(), week); err == nil {
		t.Fatal("the second run, olga still unreachable, reported no error")
	}
	delete(chat.unreachable, "olga@borealis.example")
	fc.Advance(5 * time.Minute)
	if posted, err := pub.Publish(t.Context(), week); !posted || err != nil {
		t.Fatalf("Publish once olga is reachable: posted %v, %v", posted, err)
	}
	if got := strings.Join(chat.got, ","); got != want+",olga@borealis.example" {
		t.Errorf("over three runs the chat got %s; want each recipient once", got)
	}
}

// borealisWeekOfOneLease is Borealis's policy (commands/testdata/other.yaml: FRI 16:00,
// #finance) with budget owners told by DM, a database on SQLite holding one 2-hour lease of team
// speech in 2026-W10, and the policy's weekly schedule.
func borealisWeekOfOneLease(t *testing.T) (*policy.Policy, *store.DB, schedule.Weekly) {
	t.Helper()
	b, err := os.ReadFile("../../commands/testdata/other.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Load([]byte(strings.Replace(string(b), "dm_budget_owners: false", "dm_budget_owners: true", 1)), "other.yaml")
	if err != nil {
		t.Fatal(err)
	}
	db := storetest.Open(t, storetest.SQLite(t))
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, pol.Location)
	if err := db.Update(t.Context(), nil, func(tx qm.Tx) error {
		return tx.CreateLease(t.Context(), &qm.Lease{User: "sam@borealis.example", Team: "speech", Class: "dev", GPUs: 1, State: qm.Expired,
			CreatedAt: start, StartedAt: start, ExpiresAt: start.Add(2 * time.Hour), EndedAt: start.Add(2 * time.Hour)})
	}); err != nil {
		t.Fatal(err)
	}
	w, err := schedule.ParseWeekly(pol.Reports.Showback.Schedule, pol.Location)
	if err != nil {
		t.Fatal(err)
	}
	return pol, db, w
}
