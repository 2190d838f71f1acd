package qm

import (
	"context"
	"fmt"
	"time"

	"github.com/acme/quartermaster/internal/policy"
)

func (s *Service) timeoutApproval(ctx context.Context, l *Lease) error {
	due := l.CreatedAt.Add(s.Policy.Approvals.Timeout.Duration)
	cur, err := s.updateIf(ctx, l, func(tx Tx, c *Lease) error {
		c.DecidedBy, c.DecidedAt = SystemActor, due
		return s.transitionAt(ctx, tx, c, Denied, SystemActor, fmt.Sprintf("no decision within %s", policy.FormatDuration(s.Policy.Approvals.Timeout.Duration)), due)
	})
	if err != nil || cur == nil {
		return err
	}
	s.notify(ctx, []Notice{
		{Kind: NoticeDenied, To: []string{cur.User}, Lease: cur, Actor: SystemActor, Reason: cur.Reason},
		{Kind: NoticeDecided, To: s.approvalAudience(cur.Team, cur.User), Lease: cur, Actor: SystemActor, Reason: cur.Reason},
	})
	return nil
}

// Decide is a budget owner's approve or deny of a pending exception. Exactly one decision stands:
// a second approver is told who decided first.
func (s *Service) Decide(ctx context.Context, approver string, id LeaseID, approve bool, reason string) (*Lease, error) {
	l, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	approver = CanonicalUser(approver)
	if err := s.mayDecide(ctx, approver, l.Team, l.User, id); err != nil {
		return nil, err
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
		notices = append(notices, Notice{Kind: NoticeDecided, To: s.approvalAudience(cur.Team, cur.User), Lease: cur, Actor: approver, Reason: reason})
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
		if s.mayDecide(ctx, approver, l.Team, l.User, l.ID) == nil {
			out = append(out, l)
		}
	}
	return out, nil
}

// applyApproval moves an approved exception on, by kind. It runs inside Decide's transaction.
func (s *Service) applyApproval(ctx context.Context, tx Tx, l *Lease, approver string) (placed bool, err error) {
	now := s.Clock.Now()
	reason := "approved by " + approver
	switch l.Kind {
	case KindQuota:
		l.StartedAt, l.ExpiresAt = now, now.Add(l.Duration)
		return false, s.transition(ctx, tx, l, Active, approver, reason)
	case KindExtension:
		parent, err := tx.GetLease(ctx, l.Parent)
		if err != nil {
			return false, err
		}
		if !parent.State.Live() {
			return false, s.transition(ctx, tx, l, Cancelled, approver, fmt.Sprintf("approved by %s, but %s had already ended", approver, parent.ID))
		}
		if err := s.extendLease(ctx, tx, parent, l.Duration, approver, fmt.Sprintf("extended by %s (%s approved by %s)", policy.FormatDuration(l.Duration), l.ID, approver)); err != nil {
			return false, err
		}
		l.StartedAt, l.ExpiresAt = now, parent.ExpiresAt
		if l.ExpiresAt.IsZero() {
			l.ExpiresAt = now.Add(parent.Duration)
		}
		return false, s.transition(ctx, tx, l, Active, approver, reason+"; applied to "+parent.ID.String())
	default:
		if err := s.transition(ctx, tx, l, Queued, approver, reason); err != nil {
			return false, err
		}
		return s.tryPlace(ctx, tx, l, reason)
	}
}

// Touches counts human decisions on requests made in [from, to) and the requests themselves, for
// the "human touches per 100 leases" figure.
func (s *Service) Touches(ctx context.Context, from, to time.Time) (touches, requests int, err error) {
	ls, err := s.List(ctx, LeaseFilter{Kind: AnyKind, EndedAfter: from})
	if err != nil {
		return 0, 0, err
	}
	for _, l := range ls {
		if l.CreatedAt.Before(from) || !l.CreatedAt.Before(to) {
			continue
		}
		requests++
		if l.DecidedBy != "" && l.DecidedBy != SystemActor {
			touches++
		}
	}
	return touches, requests, nil
}
