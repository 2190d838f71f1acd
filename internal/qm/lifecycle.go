package qm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/acme/quartermaster/internal/policy"
)

// Tick does everything that is due now: approval timeouts, expiries and the warnings before them,
// idle warnings and reclaims, and starting queued leases that fit. The service runs it on an
// interval; the console runs it whenever the simulated clock moves.
func (s *Service) Tick(ctx context.Context) error {
	open, err := s.List(ctx, LeaseFilter{Kind: AnyKind, States: OpenStates})
	if err != nil {
		return err
	}
	now := s.Clock.Now()
	for _, l := range open {
		switch {
		case l.State == PendingApproval:
			if l.Kind == KindExtension && s.withdrawOrphan(ctx, l) {
				continue
			}
			if !now.Before(l.CreatedAt.Add(s.Policy.Approvals.Timeout.Duration)) {
				if err := s.timeoutApproval(ctx, l); err != nil {
					s.log().Error("approval timeout", "lease", l.ID, "err", err)
				}
			}
		case l.State.Running():
			// A reclaim that fell due before the lease's end wins over the expiry; each is dated
			// when it was due, however late it is noticed.
			if l.Kind == KindWorkspace && (l.State == Active || l.State == IdleWarned) && s.checkIdle(ctx, l, now) {
				continue
			}
			if !l.ExpiresAt.IsZero() && !now.Before(l.ExpiresAt) {
				s.systemEnd(ctx, l, Expired, "the lease reached its end time", NoticeExpired, l.ExpiresAt)
				continue
			}
			if due, ok := s.expiryWarning(l, now); ok && !now.Before(due) {
				s.warnExpiry(ctx, l)
			}
		}
	}
	// Whatever ended may have made room; and capacity may have grown since the last tick.
	for _, c := range s.Policy.Classes {
		s.startQueued(ctx, c.Name)
	}
	return nil
}

// dueEnd reports whether an end of l may have fallen due by now that no tick has carried out yet
// (the service was down over it, or the tick has not come round): an expiry, an idle reclaim
// whose grace ran out, an approval timeout.
func (s *Service) dueEnd(l *Lease, now time.Time) bool {
	switch {
	case l.State == PendingApproval:
		return !now.Before(l.CreatedAt.Add(s.Policy.Approvals.Timeout.Duration))
	case l.State.Running():
		if !l.ExpiresAt.IsZero() && !now.Before(l.ExpiresAt) {
			return true
		}
		if l.Kind == KindWorkspace && l.State == IdleWarned {
			if c, ok := s.Policy.Class(l.Class); ok && !now.Before(l.WarnedAt.Add(IdleGrace(c))) {
				return true
			}
		}
	}
	return false
}

// settleDue carries out what dueEnd found due for l, dated when it was due, as the tick would,
// so that a user's release, keep, extension or decision that comes first finds the lease ended:
// it is not billed, kept, extended or granted past that end. Warnings are left to the tick.
func (s *Service) settleDue(ctx context.Context, l *Lease) {
	now := s.Clock.Now()
	switch {
	case l.State == PendingApproval:
		if !now.Before(l.CreatedAt.Add(s.Policy.Approvals.Timeout.Duration)) {
			if err := s.timeoutApproval(ctx, l); err != nil {
				s.log().Error("approval timeout", "lease", l.ID, "err", err)
			}
		}
	case l.State.Running():
		if l.Kind == KindWorkspace && l.State == IdleWarned && s.checkIdle(ctx, l, now) {
			return
		}
		if !l.ExpiresAt.IsZero() && !now.Before(l.ExpiresAt) {
			s.systemEnd(ctx, l, Expired, "the lease reached its end time", NoticeExpired, l.ExpiresAt)
		}
	}
}

// errDue stops a user's change to a lease whose end fell due unseen, so that it is settled first.
var errDue = errors.New("qm: an end fell due")

// idleClock is when a lease's idle period started, when telemetry last saw the lease's GPUs (the
// idle period is known only up to then: a node agent that stopped reporting proves nothing), and
// whether telemetry is fresh enough to judge. The idle period starts at the latest of the lease's
// start, its last activity, its owner's last Keep and the moment its telemetry came back after
// going missing (watched, the time nobody saw is not idle); busy is the latest of the first three
// but the start: when the lease was last seen busy or kept.
func (s *Service) idleClock(ctx context.Context, l *Lease, now time.Time) (since, busy, seen time.Time, observed bool) {
	since, busy, seen, observed, _ = s.idleClockOf(ctx, l, now)
	return since, busy, seen, observed
}

// idleClockOf is idleClock, with why a lease not observed is not: where its node reports but its
// newest report could not judge it, the reason of that (unjudgedReason), else reasonNoTelemetry.
func (s *Service) idleClockOf(ctx context.Context, l *Lease, now time.Time) (since, busy, seen time.Time, observed bool, why string) {
	if s.Telemetry == nil {
		return time.Time{}, time.Time{}, time.Time{}, false, reasonNoTelemetry
	}
	a, ok := s.Telemetry.Activity(ctx, l)
	if !ok || a.Seen.IsZero() || now.Sub(a.Seen) > TelemetryStaleAfter(a) {
		why = reasonNoTelemetry
		if r, known := unjudgedReason[a.Unjudged]; known && now.Sub(a.UnjudgedAt) <= TelemetryStaleAfter(a) {
			why = r
		}
		return time.Time{}, time.Time{}, time.Time{}, false, why
	}
	busy = a.LastActive
	if l.KeptAt.After(busy) {
		busy = l.KeptAt
	}
	since = l.StartedAt
	back := a.ObservedSince
	if back.Sub(l.StartedAt) <= TelemetryStaleAfter(a) {
		back = time.Time{} // its first report came within an interval or so of the start: no gap
	}
	for _, t := range []time.Time{busy, back} {
		if t.After(since) {
			since = t
		}
	}
	seen = a.Seen
	if seen.After(now) {
		seen = now
	}
	return since, busy, seen, true, ""
}

// DefaultIdleGrace is the time a warned owner has to keep an idle lease of a class without an
// idle_grace: a warning is never answered by a reclaim at the same instant.
const DefaultIdleGrace = time.Minute

// IdleGrace is how long after the idle warning a lease of class c is reclaimed: its idle_grace,
// or DefaultIdleGrace when it has none.
func IdleGrace(c *policy.Class) time.Duration {
	if c.IdleGrace.Duration > 0 {
		return c.IdleGrace.Duration
	}
	return DefaultIdleGrace
}

// checkIdle warns about or reclaims an idle lease, and reports whether it ended it. A reclaim is
// dated when it fell due (the warning plus the grace), unless the lease's own end came first.
func (s *Service) checkIdle(ctx context.Context, l *Lease, now time.Time) bool {
	c, ok := s.Policy.Class(l.Class)
	if !ok || c.IdleTimeout.Duration <= 0 || Halted(l) || l.CPUOnly() {
		// A requeued or suspended lease's job does not run: nothing to judge until it does. A
		// CPU-only lease holds no GPU whose utilization could say it is idle.
		return false
	}
	expired := !l.ExpiresAt.IsZero() && !now.Before(l.ExpiresAt)
	since, busy, seen, observed, why := s.idleClockOf(ctx, l, now)
	if !observed {
		if !expired && (l.State == IdleWarned || now.Sub(l.StartedAt) >= c.IdleTimeout.Duration) {
			s.flagUnobserved(ctx, l, why)
		}
		return false
	}
	if unobserved(l.Reason) {
		s.telemetryBack(ctx, l) // a later outage is told again
	}
	switch l.State {
	case Active:
		// Idle as far as telemetry has seen: a node agent that stopped reporting proves nothing.
		// A lease that ends before it could be reclaimed is not warned: keeping it would not
		// keep it longer.
		endsFirst := !l.ExpiresAt.IsZero() && !now.Add(IdleGrace(c)).Before(l.ExpiresAt)
		if !expired && !endsFirst && seen.Sub(since) >= c.IdleTimeout.Duration {
			s.warnIdle(ctx, l, seen.Sub(since))
		}
	case IdleWarned:
		if busy.After(l.WarnedAt) { // busy again since the warning
			_, _ = s.updateIf(ctx, l, func(tx Tx, cur *Lease) ([]Notice, error) {
				cur.WarnedAt = time.Time{}
				if err := s.transition(ctx, tx, cur, Active, SystemActor, "GPUs busy again"); err != nil {
					return nil, err
				}
				// The warning named a time of reclaim: its owner hears that it no longer holds.
				return []Notice{{Kind: NoticeBusyAgain, To: []string{cur.User}, Lease: cur}}, nil
			})
			return false
		}
		due := reclaimDue(l, since, busy, c)
		if since.After(l.WarnedAt) && seen.Before(due) {
			// Telemetry went missing in the grace and is back: the reclaim its owner was told
			// of moves to the whole grace after its return. The owner hears the new time now.
			s.moveReclaim(ctx, l, since)
			return false
		}
		if seen.Before(due) || (!l.ExpiresAt.IsZero() && !due.Before(l.ExpiresAt)) {
			return false
		}
		return s.systemEnd(ctx, l, Reclaimed, fmt.Sprintf("idle for %s with no answer to the warning", policy.FormatDuration(due.Sub(since))), NoticeReclaimed, due)
	}
	return false
}

// reclaimDue is when a lease warned as idle is reclaimed: the grace after the warning, watched
// whole: where telemetry went missing after the warning and came back (since, the idle period's
// start, is after the warning while busy, the last activity or Keep, is not), the grace runs
// again from then.
func reclaimDue(l *Lease, since, busy time.Time, c *policy.Class) time.Time {
	from := l.WarnedAt
	if since.After(from) && !busy.After(from) {
		from = since
	}
	return from.Add(IdleGrace(c))
}

// moveReclaim restarts the grace of a warned lease whose telemetry went missing after the warning
// and came back at back: the warning now counts from then (so the reclaim, a restart and an
// expiry warning all see the new time), the lease's history says so, and its owner is told the
// new time once, with the warning's Keep and Release: a later outage moves it again and is told
// again.
func (s *Service) moveReclaim(ctx context.Context, l *Lease, back time.Time) {
	_, err := s.updateIf(ctx, l, func(tx Tx, cur *Lease) ([]Notice, error) {
		if !back.After(cur.WarnedAt) {
			return nil, errSkip // moved already
		}
		c, ok := s.Policy.Class(cur.Class)
		if !ok {
			return nil, errSkip
		}
		was := cur.WarnedAt.Add(IdleGrace(c))
		cur.WarnedAt = back
		ev := &Event{Lease: cur.ID, At: s.Clock.Now(), Actor: SystemActor, From: cur.State, To: cur.State,
			Reason: fmt.Sprintf("its telemetry went missing after the idle warning: its reclaim moved %s later, and its owner was told",
				policy.FormatDuration(back.Add(IdleGrace(c)).Sub(was).Round(time.Second)))}
		if err := tx.UpdateLeaseWithEvent(ctx, cur, cur.State, ev); err != nil {
			return nil, err
		}
		return []Notice{{Kind: NoticeReclaimMoved, To: []string{cur.User}, Lease: cur}}, nil
	})
	if err != nil {
		s.log().Error("moving an idle reclaim", "lease", l.ID, "err", err)
	}
}

// reasonNoTelemetry marks a lease whose missing telemetry the platform channel was told of;
// the others one whose node reports, but whose newest report could not judge it: a GPU it works
// on gives no utilization (reasonNoUtilization), a GPU it holds is missing from the report
// (reasonGPUMissing), a GPU of its node it may work on is (reasonNodeGPUMissing), or a GPU of its
// node is busy with no job's process while it has none (reasonUnplacedBusy), or its node reports
// a GPU the node's topology lacks, on which it may work (reasonUnknownGPU).
const (
	reasonNoTelemetry    = "no telemetry"
	reasonNoUtilization  = "no GPU utilization"
	reasonGPUMissing     = "GPU missing from reports"
	reasonNodeGPUMissing = "a GPU of its node missing from reports"
	reasonUnplacedBusy   = "a GPU of its node busy with no job's process"
	reasonUnknownGPU     = "a GPU of its node not in its topology"
)

// unjudgedReason is the reason a lease is marked with for each Activity.Unjudged, and
// unjudgedOf the other way.
var (
	unjudgedReason = map[string]string{
		UnjudgedNoUtilization:  reasonNoUtilization,
		UnjudgedGPUMissing:     reasonGPUMissing,
		UnjudgedNodeGPUMissing: reasonNodeGPUMissing,
		UnjudgedUnplacedBusy:   reasonUnplacedBusy,
		UnjudgedUnknownGPU:     reasonUnknownGPU,
	}
	unjudgedOf = map[string]string{
		reasonNoUtilization:  UnjudgedNoUtilization,
		reasonGPUMissing:     UnjudgedGPUMissing,
		reasonNodeGPUMissing: UnjudgedNodeGPUMissing,
		reasonUnplacedBusy:   UnjudgedUnplacedBusy,
		reasonUnknownGPU:     UnjudgedUnknownGPU,
	}
)

// unobserved is whether reason marks a lease the platform channel was told cannot be judged idle.
func unobserved(reason string) bool {
	_, ok := unjudgedOf[reason]
	return ok || reason == reasonNoTelemetry
}

// flagUnobserved tells the platform channel, once per outage, that a lease cannot be judged idle,
// and why (reasonNoTelemetry, or a reason of unjudgedReason): a notice of kind
// NoticeTelemetryMissing whose Reason is the Activity.Unjudged where its node reports but its
// newest report could not judge it, else empty. A lease told of one is told again when it turns
// to another.
func (s *Service) flagUnobserved(ctx context.Context, l *Lease, why string) {
	_, _ = s.updateIf(ctx, l, func(tx Tx, cur *Lease) ([]Notice, error) {
		if cur.Reason == why || Halted(cur) {
			return nil, errSkip
		}
		cur.Reason = why
		if err := tx.UpdateLease(ctx, cur, cur.State); err != nil {
			return nil, err
		}
		to := s.platformRecipients()
		if len(to) == 0 {
			s.log().Warn("a lease cannot be judged idle, and the policy names nobody to tell (reports.showback.platform_channel, reports.showback.channel or approvals.fallback_approvers)", "lease", cur.ID, "why", why)
			return nil, nil
		}
		n := Notice{Kind: NoticeTelemetryMissing, To: to, Lease: cur}
		n.Reason = unjudgedOf[why]
		return []Notice{n}, nil
	})
}

// telemetryBack takes the mark of flagUnobserved off a lease whose telemetry is back, so that the
// platform channel hears of its next outage.
func (s *Service) telemetryBack(ctx context.Context, l *Lease) {
	_, _ = s.updateIf(ctx, l, func(tx Tx, cur *Lease) ([]Notice, error) {
		if !unobserved(cur.Reason) {
			return nil, errSkip
		}
		cur.Reason = ""
		return nil, tx.UpdateLease(ctx, cur, cur.State)
	})
	l.Reason = ""
}

// platformRecipients is who hears of what the platform must look at (a lease that cannot be
// judged idle): the policy's reports.showback.platform_channel, else its showback channel, else
// the platform admins (approvals.fallback_approvers; a group through the members the directory
// knows) in their DMs. None when the policy names none of them.
func (s *Service) platformRecipients() []string {
	if ch := s.Policy.Reports.Showback.PlatformChannel; ch != "" {
		return []string{ch}
	}
	if ch := s.Policy.Reports.Showback.Channel; ch != "" {
		return []string{ch}
	}
	var to []string
	for _, a := range s.Policy.Approvals.FallbackApprovers {
		people := s.People(a)
		if len(people) == 0 {
			s.unreachable(a, "")
		}
		for _, p := range people {
			if !slices.ContainsFunc(to, func(t string) bool { return SameUser(t, p) }) {
				to = append(to, p)
			}
		}
	}
	return to
}

var errSkip = errors.New("skip")

// updateIf applies fn to lease l inside a transaction under its admission locks, if the lease is
// still in the state l was loaded in, writes the notices fn returns with the change, sends them
// after the commit, and returns the lease as fn left it; nil (and no error) when the lease moved
// on meanwhile or fn returned errSkip.
func (s *Service) updateIf(ctx context.Context, l *Lease, fn func(Tx, *Lease) ([]Notice, error)) (*Lease, error) {
	var out *Lease
	var b batch
	err := s.Store.Update(ctx, s.admissionLocks(l.Team, l.Class), func(tx Tx) error {
		out, b = nil, batch{}
		cur, err := tx.GetLease(ctx, l.ID)
		if err != nil {
			return err
		}
		if cur.State != l.State {
			return errSkip
		}
		ns, err := fn(tx, cur)
		if err != nil {
			return err
		}
		out = cur
		return s.stage(ctx, tx, &b, ns...)
	})
	if errors.Is(err, errSkip) || errors.Is(err, ErrStale) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if out.State != l.State {
		s.logChange(out, l.State)
	}
	s.send(ctx, &b)
	return out, nil
}

// logChange says in the log, once it is committed, that the service itself moved lease l from
// one state to another (an expiry, an idle reclaim, an approval timeout, a queued lease started
// and what its start came to, the scheduler's word on its job): names and the service's own
// reason only, nothing a user wrote.
func (s *Service) logChange(l *Lease, from State) {
	s.log().Info("lease state changed", "lease", l.ID.String(), "team", l.Team, "class", l.Class,
		"from", string(from), "to", string(l.State), "reason", l.Reason)
}

func (s *Service) warnIdle(ctx context.Context, l *Lease, idleFor time.Duration) {
	_, err := s.updateIf(ctx, l, func(tx Tx, cur *Lease) ([]Notice, error) {
		if Halted(cur) {
			return nil, errSkip // its job stopped running since the pass looked: nothing to judge
		}
		cur.WarnedAt = s.Clock.Now()
		if err := s.transition(ctx, tx, cur, IdleWarned, SystemActor, fmt.Sprintf("no GPU activity for %s", policy.FormatDuration(idleFor))); err != nil {
			return nil, err
		}
		return []Notice{{Kind: NoticeIdleWarning, To: []string{cur.User}, Lease: cur}}, nil
	})
	if err != nil {
		s.log().Error("idle warning", "lease", l.ID, "err", err)
	}
}

// expiryWarning is when the owner of l is to be warned that it ends, and whether they are: a running
// workspace lease (or template job) of a class with an expiry_warning, granted for at least twice
// the warning, whose end now is not yet warned of and not yet reached. A lease warned as idle whose
// reclaim comes before its end is not: the idle warning is the one that matters.
func (s *Service) expiryWarning(l *Lease, now time.Time) (time.Time, bool) {
	if l.Kind != KindWorkspace || (l.State != Active && l.State != IdleWarned) || l.ExpiresAt.IsZero() ||
		!now.Before(l.ExpiresAt) || l.ExpiryWarnedFor.Equal(l.ExpiresAt) {
		return time.Time{}, false
	}
	c, ok := s.Policy.Class(l.Class)
	if !ok {
		return time.Time{}, false
	}
	w := c.ExpiryWarning.Duration
	if w <= 0 || l.Duration < 2*w {
		return time.Time{}, false
	}
	if l.State == IdleWarned && l.WarnedAt.Add(IdleGrace(c)).Before(l.ExpiresAt) {
		return time.Time{}, false
	}
	return l.ExpiresAt.Add(-w), true
}

// warnExpiry tells the owner of l that it ends soon, once per end: the end warned of is kept with
// the lease in the same transaction, so a restart or another replica does not warn of it again,
// and an extension, which moves the end, is warned of in its turn.
func (s *Service) warnExpiry(ctx context.Context, l *Lease) {
	_, err := s.updateIf(ctx, l, func(tx Tx, cur *Lease) ([]Notice, error) {
		if _, ok := s.expiryWarning(cur, s.Clock.Now()); !ok {
			return nil, errSkip
		}
		cur.ExpiryWarnedFor = cur.ExpiresAt
		// Recorded as the idle warning is: an event in the lease's history, with the change.
		now := s.Clock.Now()
		ev := &Event{Lease: cur.ID, At: now, Actor: SystemActor, From: cur.State, To: cur.State,
			Reason: "its owner was warned that it ends in " + policy.FormatDuration(cur.ExpiresAt.Sub(now).Round(time.Minute))}
		if err := tx.UpdateLeaseWithEvent(ctx, cur, cur.State, ev); err != nil {
			return nil, err
		}
		return []Notice{{Kind: NoticeExpiringSoon, To: []string{cur.User}, Lease: cur}}, nil
	})
	if err != nil {
		s.log().Error("expiry warning", "lease", l.ID, "err", err)
	}
}

// systemEnd ends a running lease for a system reason, dated at (when it fell due), and tells its
// owner. It reports whether it ended the lease.
func (s *Service) systemEnd(ctx context.Context, l *Lease, to State, reason string, kind NoticeKind, at time.Time) bool {
	ended, err := s.updateIf(ctx, l, func(tx Tx, cur *Lease) ([]Notice, error) {
		if to == Reclaimed && !cur.ExpiresAt.IsZero() && cur.ExpiresAt.After(at) {
			cur.Reclaimed = GPUHours(cur.GPUs, cur.ExpiresAt.Sub(at))
		}
		if err := s.transitionAt(ctx, tx, cur, to, SystemActor, reason, at); err != nil {
			return nil, err
		}
		return []Notice{{Kind: kind, To: []string{cur.User}, Lease: cur, Reason: reason}}, nil
	})
	if err != nil {
		s.log().Error("end lease", "lease", l.ID, "to", to, "err", err)
	}
	if ended == nil {
		return false
	}
	if ended.Kind == KindWorkspace {
		if err := s.Backend.Stop(ctx, ended); err != nil {
			s.log().Error("backend stop failed", "lease", l.ID, "err", err)
		}
	}
	return true
}

// NextDue is the earliest instant after now at which Tick has something to do, or zero when nothing
// is scheduled. The console uses it to move the simulated clock event by event.
func (s *Service) NextDue(ctx context.Context) (time.Time, error) {
	open, err := s.List(ctx, LeaseFilter{Kind: AnyKind, States: OpenStates})
	if err != nil {
		return time.Time{}, err
	}
	now := s.Clock.Now()
	var next time.Time
	consider := func(t time.Time) {
		if t.IsZero() || !t.After(now) {
			return
		}
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	for _, l := range open {
		switch {
		case l.State == PendingApproval:
			consider(l.CreatedAt.Add(s.Policy.Approvals.Timeout.Duration))
		case l.State.Running():
			consider(l.ExpiresAt)
			if due, ok := s.expiryWarning(l, now); ok {
				if !due.After(now) { // due already: a lease kept or extended inside its warning time
					due = now.Add(time.Second)
				}
				consider(due)
			}
			if l.Kind != KindWorkspace || l.CPUOnly() {
				continue
			}
			c, ok := s.Policy.Class(l.Class)
			if !ok || c.IdleTimeout.Duration <= 0 {
				continue
			}
			since, busy, _, observed := s.idleClock(ctx, l, now)
			if !observed {
				consider(l.StartedAt.Add(c.IdleTimeout.Duration))
				continue
			}
			if l.State == IdleWarned {
				consider(reclaimDue(l, since, busy, c))
			} else if s.Telemetry != nil {
				if a, ok := s.Telemetry.Activity(ctx, l); ok && (a.LastActive.Before(now) || a.Utilization < s.Policy.Idle.UtilizationBelow) {
					consider(since.Add(c.IdleTimeout.Duration))
				}
			}
		}
	}
	return next, nil
}
