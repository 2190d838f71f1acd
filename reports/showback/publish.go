package showback

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/schedule"
)

// Publishing defaults.
const (
	// DefaultClaimTTL is how long a replica holds a week it claimed before another may take it over:
	// long enough to post to every budget owner at Slack's pace, short enough that a week claimed by
	// a replica that died goes out the same morning.
	DefaultClaimTTL = 15 * time.Minute
	// DefaultCatchUpWeeks is how many of the latest scheduled weeks a start (or a catch-up run)
	// posts when they were missed.
	DefaultCatchUpWeeks = 4
	// DefaultCatchUpEvery is how often every replica looks for a due week nobody posted: a week
	// whose replica died is posted at most ClaimTTL plus this after it was claimed.
	DefaultCatchUpEvery = 5 * time.Minute
)

// Job names, which are also the keys of their locks.
const (
	JobWeekly  = "showback"
	JobCatchUp = "showback-catch-up"
)

// Plan registers the publisher's jobs: the weekly post at the policy's schedule, and a catch-up
// at start and every `every` (DefaultCatchUpEvery when zero) that posts what is due and missing.
func (p *Publisher) Plan(s *schedule.Scheduler, every time.Duration) error {
	if every <= 0 {
		every = DefaultCatchUpEvery
	}
	if err := s.Weekly(JobWeekly, p.Schedule, p.RunDue); err != nil {
		return err
	}
	return s.Every(JobCatchUp, every, true, p.RunDue)
}

// Ledger records which weeks were claimed and posted, and which messages of a week went out. The
// claim is written with the week's row in one statement, so two replicas never hold one week.
type Ledger interface {
	// ClaimWeek claims an unposted week whose claim is free, released or ran out, until now+ttl,
	// and reports whether owner holds it now.
	ClaimWeek(ctx context.Context, week, owner string, now time.Time, ttl time.Duration) (bool, error)
	// WeekDeliveries lists the keys of the week's messages that went out.
	WeekDeliveries(ctx context.Context, week string) ([]string, error)
	// MarkDelivered records a message that went out and extends owner's claim; it fails when owner
	// no longer holds the week.
	MarkDelivered(ctx context.Context, week, owner, key string, now time.Time, ttl time.Duration) error
	// ReleaseWeek gives up owner's claim so another attempt may start at once.
	ReleaseWeek(ctx context.Context, week, owner string) error
	// FinishWeek marks the week posted; it fails when owner no longer holds it.
	FinishWeek(ctx context.Context, week, owner string, now time.Time) error
	// PostedWeek says when the week was posted; zero when it was not.
	PostedWeek(ctx context.Context, week string) (time.Time, error)
	// LastPostedWeek is the latest week posted ("2026-W48"); "" when none was.
	LastPostedWeek(ctx context.Context) (string, error)
}

// The kinds of message a week sends, as Publisher.Delivered names them.
const (
	// MessageChannel is the post in reports.showback.channel, its chart and CSV attached (a file
	// that does not upload fails the post).
	MessageChannel = "channel"
	// MessageDM is a budget owner's DM (or a platform admin's, with the teams of nobody's).
	MessageDM = "dm"
	// MessageTeamChannel is the lines of a team without budget owners, in the team's channel.
	MessageTeamChannel = "team_channel"
)

// MessageKinds are every kind of message, in the order a week sends them.
var MessageKinds = []string{MessageChannel, MessageDM, MessageTeamChannel}

// Publisher posts each week's showback exactly once on schedule: the channel post with its chart
// and CSV, and a DM to every budget owner. Every replica runs it; the Ledger lets one of them
// claim a week, and records each message as it goes out, so a replica that dies part-way leaves
// the rest to whichever replica runs next once its claim runs out.
type Publisher struct {
	Reports  *Service
	Ledger   Ledger
	Deliver  bot.Deliverer
	Schedule schedule.Weekly
	// Owner names this replica in the ledger.
	Owner string
	// ClaimTTL is DefaultClaimTTL when zero; CatchUpWeeks DefaultCatchUpWeeks.
	ClaimTTL     time.Duration
	CatchUpWeeks int
	Logger       *slog.Logger
	// People are who a budget owner's entry reaches (a group's members); nil: the entry as written.
	People func(name string) []string
	// Delivered, when set, is told of every message a run tried to send (each part of one in
	// several): its kind (MessageChannel, MessageDM, MessageTeamChannel) and the chat's error,
	// nil when the chat took it. A message recorded as sent before is not tried again, and one
	// left as the run stops (its context ends) is not told.
	Delivered func(kind string, err error)

	running sync.Mutex // one RunDue at a time in this process
}

func (p *Publisher) log() *slog.Logger {
	if p.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.Logger
}

func (p *Publisher) ttl() time.Duration {
	if p.ClaimTTL > 0 {
		return p.ClaimTTL
	}
	return DefaultClaimTTL
}

// WeekFor is the week a scheduled run at t reports on: the latest week that had ended by then.
func (p *Publisher) WeekFor(t time.Time) Week {
	return WeekOf(t, p.Reports.Policy.Location).Prev()
}

// ScheduledAt is when week w's post was due: the schedule's first instant after the week ended
// (never after now, for a week posted before its time).
func (p *Publisher) ScheduledAt(w Week, now time.Time) time.Time {
	at := p.Schedule.Next(w.End(p.Reports.Policy.Location).Add(-time.Nanosecond))
	if at.After(now) {
		return now
	}
	return at
}

// instant is a clock standing at one instant.
type instant time.Time

func (i instant) Now() time.Time { return time.Time(i) }

// DueWeeks are the weeks whose scheduled post time has come by now, the latest CatchUpWeeks of
// them, oldest first. Weeks that ended before the first lease was ever asked for are left out.
func (p *Publisher) DueWeeks(ctx context.Context, now time.Time) ([]Week, error) {
	n := p.CatchUpWeeks
	if n <= 0 {
		n = DefaultCatchUpWeeks
	}
	start, err := p.Reports.Source.HistoryStart(ctx)
	if err != nil {
		return nil, fmt.Errorf("showback: read the history's start: %w", err)
	}
	if start.IsZero() {
		return nil, nil // nothing has ever happened
	}
	loc := p.Reports.Policy.Location
	var out []Week
	at := p.Schedule.Last(now)
	for range n {
		w := p.WeekFor(at)
		if !w.End(loc).After(start) {
			break
		}
		out = append(out, w)
		at = p.Schedule.Last(at.Add(-time.Second))
	}
	slices.Reverse(out)
	return out, nil
}

// RunDue posts every due week that has not been posted, oldest first: the scheduled run, the
// catch-up after a start, and the retry after a replica died with a week claimed.
func (p *Publisher) RunDue(ctx context.Context) error {
	if !p.running.TryLock() {
		return nil // the weekly run and a catch-up fell together: one is enough
	}
	defer p.running.Unlock()
	weeks, err := p.DueWeeks(ctx, p.Reports.Clock.Now())
	if err != nil {
		return err
	}
	var errs []error
	for _, w := range weeks {
		if _, err := p.Publish(ctx, w); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// delivery is one message of a week, the key the ledger knows it by and its kind (MessageKinds).
type delivery struct {
	key, kind string
	reply     bot.Reply
}

// Messages are what week's report sends: the channel post, then one DM per budget owner (and
// platform admin with teams of nobody's), then one message per channel of a team without owners.
func (p *Publisher) Messages(r *Report) ([]delivery, error) {
	sb := p.Reports.Policy.Reports.Showback
	var out []delivery
	if sb.Channel != "" {
		png, err := r.PNG()
		if err != nil {
			return nil, err
		}
		out = append(out, parts(MessageChannel, "channel:"+strings.ToLower(sb.Channel), r.Post(sb.Channel, png), r.Title()+", continued.")...)
	}
	if sb.DMBudgetOwners {
		pol := p.Reports.Policy
		owners := map[string][]string{}
		var order []string
		// reach sends team's lines to whom entry reaches, and says whether that is anyone: a
		// group whose members are not known reaches nobody.
		reach := func(entry, team string) bool {
			people := []string{entry}
			if p.People != nil {
				people = p.People(entry)
			}
			for _, o := range people {
				k := strings.ToLower(o)
				if _, ok := owners[k]; !ok {
					order = append(order, k)
				}
				if !slices.Contains(owners[k], team) {
					owners[k] = append(owners[k], team)
				}
			}
			return len(people) > 0
		}
		// A team without budget owners (or whose budget owners are groups of nobody known) has
		// its lines sent to its channel, where the policy gives one, else to the platform admins
		// (the fallback approvers), as does a team the policy does not list: every team's week
		// reaches someone.
		channels := map[string][]string{}
		var chanOrder []string
		var ownerless []string
		for _, t := range pol.Teams {
			reached := false
			for _, entry := range t.BudgetOwners {
				reached = reach(entry, t.Name) || reached
			}
			switch {
			case reached:
			case t.Channel != "":
				k := strings.ToLower(t.Channel)
				if _, ok := channels[k]; !ok {
					chanOrder = append(chanOrder, t.Channel)
				}
				channels[k] = append(channels[k], t.Name)
			default:
				ownerless = append(ownerless, t.Name)
			}
		}
		for _, t := range r.Teams {
			if _, listed := pol.Team(t.Name); !listed {
				ownerless = append(ownerless, t.Name)
			}
		}
		for _, name := range ownerless {
			for _, a := range pol.Approvals.FallbackApprovers {
				reach(a, name)
			}
		}
		slices.Sort(order)
		for _, o := range order {
			out = append(out, parts(MessageDM, "dm:"+o, r.OwnerDM(o, owners[o]), fmt.Sprintf("Your GPU showback for %s, continued.", r.Week))...)
		}
		for _, ch := range chanOrder {
			out = append(out, parts(MessageTeamChannel, "team-channel:"+strings.ToLower(ch), r.OwnerDM(ch, channels[strings.ToLower(ch)]), fmt.Sprintf("Your GPU showback for %s, continued.", r.Week))...)
		}
	}
	return out, nil
}

// parts are the deliveries of a message of kind, in as many parts as it needs (Parts): the first
// known to the ledger by key, the later ones by key:2, key:3 and so on.
func parts(kind, key string, r bot.Reply, more string) []delivery {
	var out []delivery
	for i, p := range Parts(r, more) {
		k := key
		if i > 0 {
			k = fmt.Sprintf("%s:%d", key, i+1)
		}
		out = append(out, delivery{key: k, kind: kind, reply: p})
	}
	return out
}

// Publish posts week w unless it was posted or another replica holds it; posted says whether this
// call finished it. Each message goes out and is recorded before the next; one already recorded
// (by a replica that died part-way) is not sent again. One the chat refuses is skipped: the others
// still go out, and the week is left unposted for the next run to send what is missing.
func (p *Publisher) Publish(ctx context.Context, w Week) (posted bool, err error) {
	week := w.String()
	now := p.Reports.Clock.Now()
	ok, err := p.Ledger.ClaimWeek(ctx, week, p.Owner, now, p.ttl())
	if err != nil || !ok {
		return false, err
	}
	log := p.log().With("week", week, "owner", p.Owner)
	fail := func(err error) (bool, error) {
		// Let the next run try at once rather than after the claim runs out.
		if rerr := p.Ledger.ReleaseWeek(context.WithoutCancel(ctx), week, p.Owner); rerr != nil {
			log.Warn("could not release the week's claim", "err", rerr)
		}
		return false, fmt.Errorf("showback: post %s: %w", week, err)
	}
	// Every message of the week tells the week as of its scheduled time, whichever run sends it:
	// one a later run sends (after a replica died, or to an owner the chat could not reach) says
	// what the messages sent before it said, not what happened since.
	svc := *p.Reports
	svc.Clock = instant(p.ScheduledAt(w, now))
	r, err := svc.Report(ctx, w, Filter{})
	if err != nil {
		return fail(err)
	}
	msgs, err := p.Messages(r)
	if err != nil {
		return fail(err)
	}
	done, err := p.Ledger.WeekDeliveries(ctx, week)
	if err != nil {
		return fail(err)
	}
	// A message the chat refuses (a budget owner who left, a group it does not know) holds back
	// neither the others nor later weeks: the rest go out, and the week stays unposted so that a
	// later run tries again only what is missing.
	var failed []error
	for _, m := range msgs {
		if slices.Contains(done, m.key) {
			continue
		}
		if ctx.Err() != nil {
			failed = append(failed, ctx.Err())
			break
		}
		err := p.Deliver.Deliver(ctx, m.reply)
		if p.Delivered != nil && (err == nil || ctx.Err() == nil) {
			p.Delivered(m.kind, err) // one left as the run stops is no message the chat refused
		}
		if err != nil {
			log.Warn("a showback message was not delivered", "to", m.key, "err", err)
			failed = append(failed, fmt.Errorf("deliver %s: %w", m.key, err))
			continue
		}
		if err := p.markDelivered(ctx, week, m.key); err != nil {
			return false, fmt.Errorf("showback: post %s: record %s: %w", week, m.key, err)
		}
	}
	if len(failed) > 0 {
		return fail(errors.Join(failed...))
	}
	if err := p.Ledger.FinishWeek(ctx, week, p.Owner, p.Reports.Clock.Now()); err != nil {
		return false, fmt.Errorf("showback: post %s: %w", week, err)
	}
	log.Info("showback posted", "messages", len(msgs), "resumed_after", len(done))
	return true, nil
}

// Status is how far the weekly showback has got, as the service's metrics tell it.
type Status struct {
	// PostedThrough is the end of the latest week posted in full (Monday 00:00 in the policy's
	// time zone); zero when no week was.
	PostedThrough time.Time
	// Unposted counts the due weeks (DueWeeks: the latest CatchUpWeeks whose scheduled post time
	// has come, since the first lease) that are not posted in full yet: 0 once every due week
	// went out; a week whose every message went out but one the chat refused stays here.
	Unposted int
}

// Status reads how far the weekly showback has got, as of the publisher's clock now.
func (p *Publisher) Status(ctx context.Context) (Status, error) {
	var st Status
	weeks, err := p.DueWeeks(ctx, p.Reports.Clock.Now())
	if err != nil {
		return st, err
	}
	for _, w := range weeks {
		at, err := p.Ledger.PostedWeek(ctx, w.String())
		if err != nil {
			return st, err
		}
		if at.IsZero() {
			st.Unposted++
		}
	}
	last, err := p.Ledger.LastPostedWeek(ctx)
	if err != nil || last == "" {
		return st, err
	}
	w, err := ParseWeek(last, Week{})
	if err != nil {
		return st, fmt.Errorf("showback: the last week posted: %w", err)
	}
	st.PostedThrough = w.End(p.Reports.Policy.Location)
	return st, nil
}

// Pauses between tries to record a message that went out while the database could not take it.
const (
	firstRecordPause = 250 * time.Millisecond
	maxRecordPause   = 5 * time.Second
)

// markDelivered records a message that went out. While the database cannot take it (it is
// restarting) it tries again, with growing pauses, for up to half the claim: a message that went
// out unrecorded would be sent again by the run that takes the week over once the claim lapses,
// and its recipient would get the week twice. A claim lost to another replica is not tried again.
func (p *Publisher) markDelivered(ctx context.Context, week, key string) error {
	start := time.Now()
	pause := firstRecordPause
	for {
		err := p.Ledger.MarkDelivered(ctx, week, p.Owner, key, p.Reports.Clock.Now(), p.ttl())
		if err == nil || qm.ErrorCode(err) == qm.ECONFLICT || time.Since(start)+pause > p.ttl()/2 {
			return err // recorded, the claim lost to another replica, or no time left
		}
		p.log().Warn("could not record a showback message that went out; trying again", "week", week, "to", key, "err", err)
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		pause = min(2*pause, maxRecordPause)
	}
}
