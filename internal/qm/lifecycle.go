package qm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/policy"
)

// Tick does everything that is due now: approval timeouts, expiries, idle warnings and reclaims,
// and starting queued leases that fit. The service runs it on an interval; the console runs it
// whenever the simulated clock moves.
func (s *Service) Tick(ctx context.Context) error {
	open, err := s.List(ctx, LeaseFilter{Kind: AnyKind, States: OpenStates})
	if err != nil {
		return err
	}
	now := s.Clock.Now()
	for _, l := range open {
		switch {
		case l.State == PendingApproval:
			if !now.Before(l.CreatedAt.Add(s.Policy.Approvals.Timeout.Duration)) {
				if err := s.timeoutApproval(ctx, l); err != nil {
					s.log().Error("approval timeout", "lease", l.ID, "err", err)
				}
			}
		case l.State.Running() && !l.ExpiresAt.IsZero() && !now.Before(l.ExpiresAt):
			s.systemEnd(ctx, l, Expired, "the lease reached its end time", NoticeExpired)
		case l.Kind != KindWorkspace:
		case l.State == Active || l.State == IdleWarned:
			s.checkIdle(ctx, l, now)
		}
	}
	// Whatever ended may have made room; and capacity may have grown since the last tick.
	for _, c := range s.Policy.Classes {
		s.startQueued(ctx, c.Name)
	}
	return nil
}

// idleClock is when a lease's idle period started, and whether telemetry is fresh enough to judge.
func (s *Service) idleClock(ctx context.Context, l *Lease, now time.Time) (since time.Time, observed bool) {
	if s.Telemetry == nil {
		return time.Time{}, false
	}
	a, ok := s.Telemetry.Activity(ctx, l)
	if !ok || a.Seen.IsZero() || now.Sub(a.Seen) > TelemetryStale {
		return time.Time{}, false
	}
	since = l.StartedAt
	for _, t := range []time.Time{a.LastActive, l.KeptAt} {
		if t.After(since) {
			since = t
		}
	}
	return since, true
}

// checkIdle warns about or reclaims an idle lease.
func (s *Service) checkIdle(ctx context.Context, l *Lease, now time.Time) {
	c, ok := s.Policy.Class(l.Class)
	if !ok || c.IdleTimeout.Duration <= 0 {
		return
	}
	since, observed := s.idleClock(ctx, l, now)
	if !observed {
		if l.State == Active && now.Sub(l.StartedAt) >= c.IdleTimeout.Duration && l.WarnedAt.IsZero() {
			s.flagUnobserved(ctx, l)
		}
		return
	}
	idleFor := now.Sub(since)
	switch l.State {
	case Active:
		if idleFor >= c.IdleTimeout.Duration {
			s.warnIdle(ctx, l, idleFor)
		}
	case IdleWarned:
		if since.After(l.WarnedAt) { // busy again since the warning
			_, _ = s.updateIf(ctx, l.ID, IdleWarned, func(tx Tx, cur *Lease) error {
				cur.WarnedAt = time.Time{}
				return s.transition(ctx, tx, cur, Active, SystemActor, "GPUs busy again")
			})
			return
		}
		if !now.Before(l.WarnedAt.Add(c.IdleGrace.Duration)) {
			s.systemEnd(ctx, l, Reclaimed, fmt.Sprintf("idle for %s with no answer to the warning", policy.FormatDuration(idleFor)), NoticeReclaimed)
		}
	}
}

// flagUnobserved tells the platform channel, once per lease, that a lease cannot be judged idle.
func (s *Service) flagUnobserved(ctx context.Context, l *Lease) {
	ok, _ := s.updateIf(ctx, l.ID, Active, func(tx Tx, cur *Lease) error {
		if cur.Reason == "no telemetry" {
			return errSkip
		}
		cur.Reason = "no telemetry"
		return tx.UpdateLease(ctx, cur, Active)
	})
	if ok {
		s.notify(ctx, []Notice{{Kind: NoticeTelemetryMissing, To: []string{s.platformChannel()}, Lease: l}})
	}
}

func (s *Service) platformChannel() string {
	if ch := s.Policy.Reports.Showback.PlatformChannel; ch != "" {
		return ch
	}
	if ch := s.Policy.Reports.Showback.Channel; ch != "" {
		return ch
	}
	return "#gpu-platform"
}

var errSkip = errors.New("skip")

// updateIf applies fn to a lease still in state from, under its admission locks; it reports whether
// fn ran and committed.
func (s *Service) updateIf(ctx context.Context, id LeaseID, from State, fn func(Tx, *Lease) error) (bool, error) {
	l, err := s.Get(ctx, id)
	if err != nil {
		return false, err
	}
	done := false
	err = s.Store.Update(ctx, s.admissionLocks(l.Team, l.Class), func(tx Tx) error {
		done = false
		cur, err := tx.GetLease(ctx, id)
		if err != nil {
			return err
		}
		if cur.State != from {
			return errSkip
		}
		if err := fn(tx, cur); err != nil {
			return err
		}
		*l = *cur
		done = true
		return nil
	})
	if errors.Is(err, errSkip) || errors.Is(err, ErrStale) {
		return false, nil
	}
	return done && err == nil, err
}

func (s *Service) warnIdle(ctx context.Context, l *Lease, idleFor time.Duration) {
	ok, err := s.updateIf(ctx, l.ID, Active, func(tx Tx, cur *Lease) error {
		cur.WarnedAt = s.Clock.Now()
		return s.transition(ctx, tx, cur, IdleWarned, SystemActor, fmt.Sprintf("no GPU activity for %s", policy.FormatDuration(idleFor)))
	})
	if err != nil {
		s.log().Error("idle warning", "lease", l.ID, "err", err)
	}
	if ok {
		cur, _ := s.Get(ctx, l.ID)
		s.notify(ctx, []Notice{{Kind: NoticeIdleWarning, To: []string{l.User}, Lease: cur}})
	}
}

// systemEnd ends a running lease for a system reason and tells its owner.
func (s *Service) systemEnd(ctx context.Context, l *Lease, to State, reason string, kind NoticeKind) {
	from := l.State
	var ended *Lease
	ok, err := s.updateIf(ctx, l.ID, from, func(tx Tx, cur *Lease) error {
		now := s.Clock.Now()
		if to == Reclaimed && !cur.ExpiresAt.IsZero() && cur.ExpiresAt.After(now) {
			cur.Reclaimed = GPUHours(cur.GPUs, cur.ExpiresAt.Sub(now))
		}
		if err := s.transition(ctx, tx, cur, to, SystemActor, reason); err != nil {
			return err
		}
		ended = cur
		return nil
	})
	if err != nil {
		s.log().Error("end lease", "lease", l.ID, "to", to, "err", err)
	}
	if !ok {
		return
	}
	if ended.Kind != KindWorkspace {
		s.notify(ctx, []Notice{{Kind: kind, To: []string{ended.User}, Lease: ended, Reason: reason}})
		return
	}
	if err := s.Backend.Stop(ctx, ended); err != nil {
		s.log().Error("backend stop failed", "lease", l.ID, "err", err)
	}
	s.notify(ctx, []Notice{{Kind: kind, To: []string{ended.User}, Lease: ended, Reason: reason}})
}

func (s *Service) timeoutApproval(ctx context.Context, l *Lease) error {
	var cur *Lease
	ok, err := s.updateIf(ctx, l.ID, PendingApproval, func(tx Tx, c *Lease) error {
		c.DecidedBy, c.DecidedAt = SystemActor, s.Clock.Now()
		cur = c
		return s.transition(ctx, tx, c, Denied, SystemActor, fmt.Sprintf("no decision within %s", policy.FormatDuration(s.Policy.Approvals.Timeout.Duration)))
	})
	if err != nil || !ok {
		return err
	}
	s.notify(ctx, []Notice{
		{Kind: NoticeDenied, To: []string{cur.User}, Lease: cur, Actor: SystemActor, Reason: cur.Reason},
		{Kind: NoticeDecided, To: s.approvalAudience(cur.Team), Lease: cur, Actor: SystemActor, Reason: cur.Reason},
	})
	return nil
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
			if l.Kind != KindWorkspace {
				continue
			}
			c, ok := s.Policy.Class(l.Class)
			if !ok || c.IdleTimeout.Duration <= 0 {
				continue
			}
			since, observed := s.idleClock(ctx, l, now)
			if !observed {
				consider(l.StartedAt.Add(c.IdleTimeout.Duration))
				continue
			}
			if l.State == IdleWarned {
				consider(l.WarnedAt.Add(c.IdleGrace.Duration))
			} else if s.Telemetry != nil {
				if a, ok := s.Telemetry.Activity(ctx, l); ok && (a.LastActive.Before(now) || a.Utilization < s.Policy.Idle.UtilizationBelow) {
					consider(since.Add(c.IdleTimeout.Duration))
				}
			}
		}
	}
	return next, nil
}

// Decide is a budget owner's approve or deny of a pending exception. Exactly one decision stands:
// a second approver is told who decided first.
func (s *Service) Decide(ctx context.Context, approver string, id LeaseID, approve bool, reason string) (*Lease, error) {
	l, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if !s.mayApprove(ctx, approver, l.Team) {
		return nil, Errorf(EFORBIDDEN, "only %s can decide %s, a request of team %s.", strings.Join(s.Policy.Approvers(l.Team), " or "), id, l.Team)
	}
	if strings.EqualFold(approver, l.User) && !s.Policy.Approvals.SelfApproval {
		return nil, Errorf(EFORBIDDEN, "you cannot decide your own request %s; another approver of team %s must.", id, l.Team)
	}
	if approve && l.State == PendingApproval {
		s.rememberWait(ctx, l) // an approved lease waits from the decision on
	}
	var notices []Notice
	var placed bool
	err = s.Store.Update(ctx, s.admissionLocks(l.Team, l.Class), func(tx Tx) error {
		notices = nil
		cur, err := tx.GetLease(ctx, id)
		if err != nil {
			return err
		}
		if cur.State != PendingApproval {
			if cur.DecidedBy == SystemActor {
				return Errorf(ECONFLICT, "%s expired undecided at %s and was denied; the requester can ask again.", id, cur.DecidedAt.In(s.Policy.Location).Format("Mon 15:04"))
			}
			if cur.DecidedBy != "" {
				return Errorf(ECONFLICT, "%s was already decided by %s at %s: it is %s.", id, cur.DecidedBy, cur.DecidedAt.In(s.Policy.Location).Format("Mon 15:04"), cur.State)
			}
			return Errorf(ECONFLICT, "%s is %s and no longer waits for a decision.", id, cur.State)
		}
		cur.DecidedBy, cur.DecidedAt = approver, s.Clock.Now()
		if !approve {
			if reason == "" {
				reason = "no reason given"
			}
			if err := s.transition(ctx, tx, cur, Denied, approver, "denied by "+approver+": "+reason); err != nil {
				return err
			}
			notices = append(notices, Notice{Kind: NoticeDenied, To: []string{cur.User}, Lease: cur, Actor: approver, Reason: reason})
		} else if placed, err = s.applyApproval(ctx, tx, cur, approver); err != nil {
			return err
		}
		notices = append(notices, Notice{Kind: NoticeDecided, To: s.approvalAudience(cur.Team), Lease: cur, Actor: approver, Reason: reason})
		l = cur
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.notify(ctx, notices)
	var err2 error
	if placed && l.State == Provisioning {
		err2 = s.start(ctx, l, false)
	}
	if approve && l.State != Failed {
		// The requester hears of the approval once the lease has moved on, with where it landed.
		s.notify(ctx, []Notice{{Kind: NoticeApproved, To: []string{l.User}, Lease: l, Actor: approver}})
	}
	return l, err2
}

// Pending lists the exceptions an approver may decide.
func (s *Service) Pending(ctx context.Context, approver string) ([]*Lease, error) {
	all, err := s.List(ctx, LeaseFilter{Kind: AnyKind, States: []State{PendingApproval}})
	if err != nil {
		return nil, err
	}
	var out []*Lease
	for _, l := range all {
		if s.mayApprove(ctx, approver, l.Team) && (!strings.EqualFold(approver, l.User) || s.Policy.Approvals.SelfApproval) {
			out = append(out, l)
		}
	}
	return out, nil
}
