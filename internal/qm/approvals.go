package qm

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/policy"
)

func (s *Service) timeoutApproval(ctx context.Context, l *Lease) error {
	due := l.CreatedAt.Add(s.Policy.Approvals.Timeout.Duration)
	_, err := s.updateIf(ctx, l, func(tx Tx, c *Lease) ([]Notice, error) {
		c.DecidedBy, c.DecidedAt = SystemActor, due
		if err := s.transitionAt(ctx, tx, c, Denied, SystemActor, fmt.Sprintf("no decision within %s", policy.FormatDuration(s.Policy.Approvals.Timeout.Duration)), due); err != nil {
			return nil, err
		}
		return []Notice{
			{Kind: NoticeDenied, To: []string{c.User}, Lease: c, Actor: SystemActor, Reason: c.Reason},
			{Kind: NoticeDecided, To: s.approvalAudience(c.Team, c.User), Lease: c, Actor: SystemActor, Reason: c.Reason},
		}, nil
	})
	return err
}

// endedWords says how a lease in an end state ended: "expired", "was released".
func endedWords(st State) string {
	switch st {
	case Expired, Failed:
		return string(st)
	case Released, Reclaimed, Cancelled, Denied:
		return "was " + string(st)
	}
	return "ended"
}

// withdrawOrphan withdraws a pending extension whose lease has ended meanwhile (it expired, was
// released, reclaimed or failed): there is nothing left to extend. The approvers' cards say so,
// and so does a message to the requester. It reports whether it did.
func (s *Service) withdrawOrphan(ctx context.Context, l *Lease) bool {
	parent, err := s.Get(ctx, l.Parent)
	if err != nil || !parent.State.Ended() {
		return false
	}
	out, err := s.updateIf(ctx, l, func(tx Tx, c *Lease) ([]Notice, error) {
		reason := fmt.Sprintf("%s %s before a budget owner decided", parent.ID, endedWords(parent.State))
		if err := s.transitionAt(ctx, tx, c, Cancelled, SystemActor, reason, parent.EndedAt); err != nil {
			return nil, err
		}
		return []Notice{
			{Kind: NoticeDecided, To: s.approvalAudience(c.Team, c.User), Lease: c, Actor: SystemActor, Reason: reason},
			{Kind: NoticeWithdrawn, To: []string{c.User}, Lease: c, Actor: SystemActor, Reason: reason},
		}, nil
	})
	if err != nil {
		s.log().Error("withdraw extension", "lease", l.ID, "err", err)
	}
	return out != nil
}

// Withdraw withdraws l, a request that still waits for a budget owner or a lease queued and not
// yet started, as the system, for reason (its requester left the team it is for): it is
// cancelled. A request's approval cards say so and lose their buttons; a queued lease whose job
// the scheduler holds in its queue has that job removed as a release removes it (Backend.Stop).
// It reports whether it did; a request decided, or a lease started, ended or withdrawn
// meanwhile is left as it is.
func (s *Service) Withdraw(ctx context.Context, l *Lease, reason string) (bool, error) {
	if l.State != PendingApproval && l.State != Queued {
		return false, nil
	}
	out, err := s.updateIf(ctx, l, func(tx Tx, c *Lease) ([]Notice, error) {
		wasPending := c.State == PendingApproval
		if err := s.transition(ctx, tx, c, Cancelled, SystemActor, reason); err != nil {
			return nil, err
		}
		if !wasPending {
			return nil, nil
		}
		return []Notice{{Kind: NoticeDecided, To: s.approvalAudience(c.Team, c.User), Lease: c, Actor: SystemActor, Reason: reason}}, nil
	})
	if out != nil && out.Kind == KindWorkspace && out.Ref != "" {
		// Its job waits in the scheduler's queue: removed there, or it would start later.
		resume := waitOutside(ctx)
		serr := s.Backend.Stop(ctx, out)
		resume()
		if serr != nil {
			s.log().Error("backend stop failed", "lease", out.ID, "err", serr)
		}
	}
	return out != nil, err
}

// CheckDecide says, deciding nothing, why approver could not decide the pending exception id
// now, as Decide would refuse it (they may not decide it, or it no longer waits; with approve,
// also its requester is not signed in), or nil when they could. A form that asks for more before the decision (the reason for a denial) asks it
// only of someone who could decide.
func (s *Service) CheckDecide(ctx context.Context, approver string, id LeaseID, approve bool) error {
	l, err := s.Get(ctx, id)
	if ErrorCode(err) == ENOTFOUND {
		return noDecision(id)
	}
	if err != nil {
		return err
	}
	if err := s.mayDecideLease(ctx, CanonicalUser(approver), l); err != nil {
		return err
	}
	if err := s.undecidable(l); err != nil || !approve {
		return err
	}
	return s.requesterAway(ctx, l)
}

// WaitsForDecision says whether request id waits for a decision, for someone not known yet (not signed in):
// nil when it does, else that no such request waits, which names neither who decided nor what
// the lease is now.
func (s *Service) WaitsForDecision(ctx context.Context, id LeaseID) error {
	l, err := s.Get(ctx, id)
	switch {
	case ErrorCode(err) == ENOTFOUND:
		return noDecision(id)
	case err != nil:
		return err
	case s.undecidable(l) != nil:
		return noDecision(id)
	}
	return nil
}

// undecidable says why l no longer waits for a decision (or, granted at once, never did), or nil
// when it does: what the lease is now is what a second approver wants next, not another decision.
func (s *Service) undecidable(l *Lease) error {
	if l.State == PendingApproval {
		return nil
	}
	id := l.ID
	status := "/gpu status " + id.String()
	if l.DecidedBy == SystemActor {
		return Errorf(ECONFLICT, "%s expired undecided at %s and was denied; the requester can ask again.", id, l.DecidedAt.In(s.Policy.Location).Format("Mon 2 Jan 15:04 MST")).WithExample(status)
	}
	if l.DecidedBy != "" {
		return Errorf(ECONFLICT, "%s was already decided by %s at %s: it is %s.", id, l.DecidedBy, l.DecidedAt.In(s.Policy.Location).Format("Mon 2 Jan 15:04 MST"), l.State).WithExample(status)
	}
	if l.State == Cancelled {
		return Errorf(ECONFLICT, "%s was withdrawn (%s) and no longer waits for a decision.", id, l.Reason).WithExample(status)
	}
	if l.Rules == "" {
		// No rule stopped it: it was granted (or queued) at once, and never waited.
		return Errorf(ECONFLICT, "%s is %s; it did not need a decision.", id, l.State).WithExample(status)
	}
	return Errorf(ECONFLICT, "%s is %s and no longer waits for a decision.", id, l.State).WithExample(status)
}

// mayDecideLease is mayDecide for the lease l: where approver may not decide it and nothing
// about it waits for a decision (a lease granted at once, a request withdrawn or decided), that
// is what they are told rather than who could decide it; someone who is told nothing of the
// team's requests is still told only that none waits for them.
func (s *Service) mayDecideLease(ctx context.Context, approver string, l *Lease) error {
	err := s.mayDecide(ctx, approver, l.Team, l.User, l.ID)
	if err == nil || s.undecidable(l) == nil || err.Error() == noDecision(l.ID).Error() {
		return err
	}
	return Errorf(ECONFLICT, "nothing about %s waits for a decision; /gpu approvals lists the requests that wait for yours.", l.ID).WithExample("/gpu approvals")
}

// Decide is a budget owner's approve or deny of a pending exception. Exactly one decision stands:
// a second approver is told who decided first. An approval that takes the team past its quota,
// when the request did not (the team's other leases grew while it waited), still stands, and
// the outcome's Matches hold the QuotaLimit note that says so, for the approver.
func (s *Service) Decide(ctx context.Context, approver string, id LeaseID, approve bool, reason string) (*Outcome, error) {
	l, err := s.Get(ctx, id)
	if ErrorCode(err) == ENOTFOUND {
		return nil, noDecision(id)
	}
	if err != nil {
		return nil, err
	}
	approver = CanonicalUser(approver)
	if err := s.mayDecideLease(ctx, approver, l); err != nil {
		return nil, err
	}
	if l.Kind == KindExtension && l.State == PendingApproval {
		// Its lease's end may have passed unseen (the service was down over it): the lease
		// expired then, and an approval now would bring it back.
		if parent, err := s.Get(ctx, l.Parent); err == nil && parent.State.Running() && s.dueEnd(parent, s.Clock.Now()) {
			s.settleDue(ctx, parent)
		}
	}
	if l.Kind == KindExtension && l.State == PendingApproval && s.withdrawOrphan(ctx, l) {
		// Its lease ended before the tick that withdraws it: nothing is left to decide.
		if l, err = s.Get(ctx, id); err != nil {
			return nil, err
		}
	}
	if l.State == PendingApproval && s.dueEnd(l, s.Clock.Now()) {
		// Its timeout passed before the tick that settles it: it is denied as of then, and
		// nothing is left to decide.
		s.settleDue(ctx, l)
		if l, err = s.Get(ctx, id); err != nil {
			return nil, err
		}
	}
	if approve && l.State == PendingApproval {
		if err := s.requesterAway(ctx, l); err != nil {
			return nil, err
		}
		s.rememberWait(ctx, l) // an approved lease waits from the decision on
		s.readInventory(ctx)   // it is placed on the scheduler's nodes, read first after a start
	}
	var b batch
	var placed bool
	var note string
	err = s.Store.Update(ctx, s.admissionLocks(l.Team, l.Class), func(tx Tx) error {
		b, note = batch{}, ""
		if err := checkKey(ctx, tx); err != nil {
			return err
		}
		cur, err := tx.GetLease(ctx, id)
		if err != nil {
			return err
		}
		if err := s.undecidable(cur); err != nil {
			return err
		}
		cur.DecidedBy, cur.DecidedAt = approver, s.Clock.Now()
		if !approve {
			if reason == "" {
				reason = "no reason given"
			}
			if err := s.transition(ctx, tx, cur, Denied, approver, "denied by "+approver+": "+reason); err != nil {
				return err
			}
			if err := s.stage(ctx, tx, &b, Notice{Kind: NoticeDenied, To: []string{cur.User}, Lease: cur, Actor: approver, Reason: reason}); err != nil {
				return err
			}
		} else {
			if note, err = s.quotaAtApproval(ctx, tx, cur); err != nil {
				return err
			}
			if placed, err = s.applyApproval(ctx, tx, cur, approver, note); err != nil {
				return err
			}
			reason = note
			if cur.State != Failed && !(placed && cur.State == Provisioning) {
				// The requester hears of the approval with the lease as it stands; a lease that
				// still has to start is announced again when it runs. One handed to the
				// scheduler now is told of once the scheduler answered (approvedStarted), as
				// it stands then, as the approver reads it.
				if err := s.stage(ctx, tx, &b, Notice{Kind: NoticeApproved, To: []string{cur.User}, Lease: cur, Actor: approver}); err != nil {
					return err
				}
			}
		}
		if err := s.stage(ctx, tx, &b, Notice{Kind: NoticeDecided, To: s.approvalAudience(cur.Team, cur.User), Lease: cur, Actor: approver, Reason: reason}); err != nil {
			return err
		}
		l = cur
		return s.keepKey(ctx, tx, cur.ID)
	})
	if prev, ok := s.wasRepeated(ctx, err); ok {
		return &Outcome{Lease: prev, Duplicate: true}, nil
	}
	if err != nil {
		return nil, err
	}
	out := &Outcome{Lease: l}
	if note != "" {
		out.Matches = []policy.Match{{Rule: QuotaLimit, Why: note}}
	}
	var err2 error
	if placed && l.State == Provisioning {
		// Handed to the scheduler now: the approvers' card goes out once it has answered, so
		// that it says what the approver's reply and the requester are told (running, waiting
		// in its queue), not that it is being started. It is in the outbox already, so a crash
		// meanwhile loses nothing: the sender loop delivers it, as the lease stands then.
		err2 = s.start(ctx, l, false)
		s.send(ctx, &b)
		s.approvedStarted(ctx, l, approver)
		return out, err2
	}
	s.send(ctx, &b)
	return out, err2
}

// approvedStarted tells the requester of l, just approved by approver and handed to the
// scheduler, of the approval with the lease as it stands now (running, waiting in the
// scheduler's queue, still being started), in one message, or that it failed to start.
func (s *Service) approvedStarted(ctx context.Context, l *Lease, approver string) {
	var b batch
	err := s.Store.Update(ctx, nil, func(tx Tx) error {
		b = batch{}
		cur, err := tx.GetLease(ctx, l.ID)
		if err != nil {
			return err
		}
		n := Notice{Kind: NoticeApproved, To: []string{cur.User}, Lease: cur, Actor: approver}
		switch {
		case cur.State == Failed:
			n = Notice{Kind: NoticeFailed, To: []string{cur.User}, Lease: cur, Reason: cur.Reason}
		case cur.State.Ended():
			return nil // released meanwhile: its owner did that
		}
		return s.stage(ctx, tx, &b, n)
	})
	if err != nil {
		s.log().Error("tell the requester of an approval", "lease", l.ID, "err", err)
		return
	}
	s.send(ctx, &b)
}

// quotaAtApproval says how approving l now takes its team past its quota, when the rules the
// request met said nothing of the quota ("This approval takes team vision past its quota, to 5
// of its 4 train GPUs at once"): the team's other leases may have grown while it waited. It
// adds the QuotaLimit note to l's rules when it does; empty when the approval stays within.
func (s *Service) quotaAtApproval(ctx context.Context, tx Tx, l *Lease) (string, error) {
	if _, listed := s.Policy.Team(l.Team); !listed && s.waitedForATeamNowGone(ctx, tx, l) {
		// Its team was renamed or removed while it waited: the quota of the old name (the
		// default quota) is no team's, so no numbers of it are given.
		return fmt.Sprintf("Team %s is not in the policy (%s), so no quota of its own was checked.", l.Team, renamedOrRemoved), nil
	}
	for _, r := range strings.Split(l.Rules, ",") {
		if s.aboutQuota(r) {
			return "", nil
		}
	}
	past, err := s.pastQuotaNow(ctx, tx, l)
	if past == "" || err != nil {
		return "", err
	}
	if l.Rules == "" {
		l.Rules = QuotaLimit
	} else {
		l.Rules += "," + QuotaLimit
	}
	return "This approval takes " + past + ".", nil
}

// pastQuotaNow says how approving l now would take its team past its quota, as pastQuota says
// it; empty when it would not, or l takes nothing of the quota.
func (s *Service) pastQuotaNow(ctx context.Context, tx Tx, l *Lease) (string, error) {
	if l.Kind != KindWorkspace && l.Kind != KindExtension {
		return "", nil
	}
	now := s.Clock.Now()
	u, q, err := s.usage(ctx, tx, l.Team, now)
	if err != nil {
		return "", err
	}
	switch l.Kind {
	case KindWorkspace:
		return pastQuota(l.Team, l.Class, u, q, l.GPUs, s.pastWeeks(u, q, now, l.GPUs, l.Duration)), nil
	case KindExtension:
		parent, err := tx.GetLease(ctx, l.Parent)
		if err != nil {
			return "", err
		}
		if !parent.State.Live() {
			return "", nil
		}
		return pastQuota(l.Team, l.Class, u, q, 0, s.pastWeeks(u, q, extendsFrom(parent, now), parent.GPUs, l.Duration)), nil
	}
	return "", nil
}

// QuotaNote is the QuotaLimit note of l, a request that waits for a decision, as its approval
// message gave it, with the team's usage now: "It would also take team vision past its quota,
// to 5 of its 4 train GPUs at once"; or, where the team's other leases shrank since, that it no
// longer would.
func (s *Service) QuotaNote(ctx context.Context, l *Lease) (string, error) {
	var past string
	err := s.Store.View(ctx, func(tx Tx) error {
		var err error
		past, err = s.pastQuotaNow(ctx, tx, l)
		return err
	})
	if err != nil {
		return "", err
	}
	if past == "" {
		return fmt.Sprintf("It would have taken team %s past its quota when it was asked; now it would not", l.Team), nil
	}
	return "It would also take " + past, nil
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

// UnlistedWaiting are the requests waiting for approval whose team the policy does not list
// (renamed or removed while they waited): their budget owners are no longer known, so the
// fallback approvers decide them (Deciders).
func (s *Service) UnlistedWaiting(ctx context.Context) ([]*Lease, error) {
	all, err := s.List(ctx, LeaseFilter{Kind: AnyKind, States: []State{PendingApproval}})
	if err != nil {
		return nil, err
	}
	var out []*Lease
	for _, l := range all {
		if _, listed := s.Policy.Team(l.Team); !listed {
			out = append(out, l)
		}
	}
	return out, nil
}

// renamedOrRemoved says why a team of a waiting request is not in the policy.
const renamedOrRemoved = "renamed or removed since it was asked"

// handOverReason is the line of a waiting request's history that says the fallback approvers
// were sent it because the policy no longer lists its team.
func handOverReason(team string) string {
	return fmt.Sprintf("the policy does not list team %s (%s), so the fallback approvers decide it", team, renamedOrRemoved)
}

// waitedForATeamNowGone reports whether l, whose team the policy does not list, was asked for a
// team that is gone: it was handed over to the fallback approvers for that reason
// (HandOverUnlistedWaiting), or its requester is no longer in that team.
func (s *Service) waitedForATeamNowGone(ctx context.Context, tx Tx, l *Lease) bool {
	ev, err := tx.Events(ctx, l.ID)
	if err == nil {
		for _, e := range ev {
			if e.Actor == SystemActor && e.Reason == handOverReason(l.Team) {
				return true
			}
		}
	}
	return s.teamGone(ctx, l)
}

// teamGone reports whether l's team, which the policy does not list, is no longer its
// requester's: renamed or removed since it was asked. A team the policy never listed (named after
// its people's group, with the default quota) is still its requester's team, and its fallback
// approvers heard of the request when it was made.
func (s *Service) teamGone(ctx context.Context, l *Lease) bool {
	id, err := s.Resolve(ctx, l.User)
	return err == nil && !policy.Contains(id.Teams, l.Team)
}

// HandOverUnlistedWaiting sends the approval message of each request waiting for approval whose
// team the policy does not list (renamed or removed while it waited) to those who decide it now,
// the fallback approvers, with why they are sent it. Each request is handed over once: the
// hand-over is a line of its history, so a later start (or another replica's) sends nothing. It
// returns the requests handed over now.
func (s *Service) HandOverUnlistedWaiting(ctx context.Context) ([]*Lease, error) {
	ls, err := s.UnlistedWaiting(ctx)
	if err != nil {
		return nil, err
	}
	var out []*Lease
	for _, l := range ls {
		who := s.Deciders(l.Team, l.User)
		if len(who) == 0 || !s.teamGone(ctx, l) {
			continue // nobody to hand it to (serve logs it), or they were told when it was asked
		}
		reason := handOverReason(l.Team)
		handed, err := s.sendWaiting(ctx, l, func(cur *Lease, ev []*Event) ([]string, []string, string) {
			for _, e := range ev {
				if e.Actor == SystemActor && e.Reason == reason {
					return nil, nil, "" // handed over at an earlier start
				}
			}
			return s.approvalAudience(cur.Team, cur.User), who, reason
		})
		if err != nil {
			return out, err
		}
		if handed != nil {
			out = append(out, handed)
		}
	}
	return out, nil
}

// unreachedTail ends every reason a waiting request is handed to the fallback approvers for
// because nobody of its team's approvers can be told of it: each request is handed over once,
// whichever way that came about.
const unreachedTail = ", so it comes to the fallback approvers"

// unreachedReason is why the fallback approvers are sent a request that waits when nobody of its
// team's approvers can be told of it any more: the last of them signed in left or signed out
// (changed false), or the policy now names approvers nobody signed in is among (changed).
func unreachedReason(team string, owners []string, changed bool) string {
	if changed {
		return fmt.Sprintf("the policy now names %s to decide the requests of team %s, and nobody signed in is among them%s", policy.JoinList(owners, "or"), team, unreachedTail)
	}
	return fmt.Sprintf("nobody signed in is left in %s, who decide the requests of team %s%s", policy.JoinList(owners, "or"), team, unreachedTail)
}

// HandOverUnreached sends the approval message of request id, which waits for approval, to the
// fallback approvers (less those in skip, who hold a copy already) when none of its team's
// approvers reaches anyone now: budget owners named by a group whose members signed in have all
// left it, or whose groups no longer make them deciders. The message says why. Each request is
// handed over once (a line of its history). It reports whether it handed id over now.
func (s *Service) HandOverUnreached(ctx context.Context, id LeaseID, skip []string) (bool, error) {
	return s.handOverUnreached(ctx, id, skip, false)
}

// HandOverChangedApprovers is HandOverUnreached for a request whose team's approvers the policy
// changed while it waited (the service started on a new policy): where none of the approvers
// it names now reaches anyone, the fallback approvers are sent it, told that the policy changed.
// Once per request, whether it was handed over for this or for HandOverUnreached's reasons.
func (s *Service) HandOverChangedApprovers(ctx context.Context, id LeaseID, skip []string) (bool, error) {
	return s.handOverUnreached(ctx, id, skip, true)
}

func (s *Service) handOverUnreached(ctx context.Context, id LeaseID, skip []string, changed bool) (bool, error) {
	l, err := s.Get(ctx, id)
	if err != nil || l.State != PendingApproval || s.DecidersReach(l.Team, l.User) {
		return false, err
	}
	owners := s.Deciders(l.Team, l.User)
	fallback := s.deciding(s.Policy.Approvals.FallbackApprovers, l.User)
	var others []string
	for _, f := range fallback {
		if !policy.Contains(owners, f) {
			others = append(others, f)
		}
	}
	to := s.approvalRecipients(others, skip, l.User)
	if len(to) == 0 {
		return false, nil
	}
	// Handed over already, for this reason or another: not again.
	return s.sendApprovalOnce(ctx, l, to, fallback, unreachedReason(l.Team, owners, changed),
		func(reason string) bool { return strings.HasSuffix(reason, unreachedTail) })
}

// approvalRecipients are the people who, as approvers names them, are sent a request of user's:
// those in skip (who hold a copy already) and channels left out, and the requester too unless the
// policy allows self-approval.
func (s *Service) approvalRecipients(approvers, skip []string, user string) []string {
	var to []string
	for _, a := range approvers {
		for _, p := range s.People(a) {
			if !strings.HasPrefix(p, "#") && !policy.Contains(skip, p) && !policy.Contains(to, p) &&
				(s.Policy.Approvals.SelfApproval || !SameUser(p, user)) {
				to = append(to, p)
			}
		}
	}
	return to
}

// sendApprovalOnce sends the approval message of l, which waits for approval, to to, naming
// approvers as those who decide and reason as why they are sent it, and writes reason as a line of
// its history in the same transaction; unless a line of its history already says it was sent (done
// reads each line's reason), as at an earlier start or by another replica. It reports whether it
// sent it now.
func (s *Service) sendApprovalOnce(ctx context.Context, l *Lease, to, approvers []string, reason string, done func(reason string) bool) (bool, error) {
	sent, err := s.sendWaiting(ctx, l, func(_ *Lease, ev []*Event) ([]string, []string, string) {
		for _, e := range ev {
			if e.Actor == SystemActor && done(e.Reason) {
				return nil, nil, ""
			}
		}
		return to, approvers, reason
	})
	return sent != nil, err
}

// sendWaiting sends the approval message of l, while it waits for approval, to whom pick says
// from the request as it is now and its history (to, naming approvers as those who decide and
// reason as why they are sent it), and writes reason as a line of its history in the same
// transaction; pick returns no reason where it is not to be sent (as its history says it was, at
// an earlier start or by another replica). It returns the request as sent, or nil.
func (s *Service) sendWaiting(ctx context.Context, l *Lease, pick func(cur *Lease, ev []*Event) (to, approvers []string, reason string)) (*Lease, error) {
	var b batch
	var sent *Lease
	err := s.Store.Update(ctx, []string{"team:" + l.Team}, func(tx Tx) error {
		b, sent = batch{}, nil
		cur, err := tx.GetLease(ctx, l.ID)
		if err != nil || cur.State != PendingApproval {
			return err
		}
		ev, err := tx.Events(ctx, cur.ID)
		if err != nil {
			return err
		}
		to, approvers, reason := pick(cur, ev)
		if reason == "" {
			return nil
		}
		sent = cur
		return s.stageApprovalSent(ctx, tx, &b, cur, to, approvers, reason)
	})
	if err != nil {
		return nil, err
	}
	s.send(ctx, &b)
	return sent, nil
}

// stageApprovalSent writes reason as a line of waiting request l's history and stages its approval
// message to to, naming approvers as those who decide and reason as why they are sent it.
func (s *Service) stageApprovalSent(ctx context.Context, tx Tx, b *batch, l *Lease, to, approvers []string, reason string) error {
	if err := tx.AddEvent(ctx, &Event{Lease: l.ID, At: s.Clock.Now(), Actor: SystemActor, From: l.State, To: l.State, Reason: reason}); err != nil {
		return err
	}
	return s.stage(ctx, tx, b, Notice{Kind: NoticeApprovalRequest, To: to, Lease: l,
		Matches: s.waitingMatches(l), Approvers: approvers, Reason: reason})
}

// newApproversReason is why those who decide a waiting request now are sent it after the policy
// changed its team's approvers: who are the approver entries sent it now, also set where others
// who decide it held a copy already. It is a line of its history too, so that each is sent it
// once (newApproversNamed reads it back).
func (s *Service) newApproversReason(team string, who []string, also bool) string {
	if t, ok := s.Policy.Team(team); !ok || len(t.BudgetOwners) == 0 {
		return fmt.Sprintf("%s%s, so the fallback approvers (%s) decide its requests", noOwnerHead, team, policy.JoinList(who, "or"))
	}
	head := namesHead
	if also {
		head = alsoNamesHead
	}
	return fmt.Sprintf("%s%s%s%s", head, policy.JoinList(who, "or"), decideTail, team)
}

const (
	namesHead     = "the policy now names "
	alsoNamesHead = "the policy now also names "
	decideTail    = " to decide the requests of team "
	noOwnerHead   = "the policy now names no budget owner of team "
	// undeliveredHead begins the reason of SendUndelivered.
	undeliveredHead = "no chat had delivered this request to its approvers (it was made in the console, or while no chat was on), so it is sent now to "
)

// newApproversNamed are the approver entries a line of a request's history of team says were sent
// it as new approvers (newApproversReason), or named as its approvers when it was handed over to
// the fallback approvers (unreachedReason): someone of theirs who signs in later is not news of a
// policy change. None for any other line.
func newApproversNamed(reason, team string) []string {
	var list string
	switch {
	case strings.HasPrefix(reason, noOwnerHead+team+", so the fallback approvers (") && strings.HasSuffix(reason, ") decide its requests"):
		list = strings.TrimSuffix(strings.TrimPrefix(reason, noOwnerHead+team+", so the fallback approvers ("), ") decide its requests")
	case strings.HasSuffix(reason, decideTail+team) && strings.HasPrefix(reason, undeliveredHead):
		list = strings.TrimSuffix(strings.TrimPrefix(reason, undeliveredHead), decideTail+team)
	case strings.HasSuffix(reason, decideTail+team) && strings.HasPrefix(reason, alsoNamesHead):
		list = strings.TrimSuffix(strings.TrimPrefix(reason, alsoNamesHead), decideTail+team)
	case strings.HasSuffix(reason, decideTail+team) && strings.HasPrefix(reason, namesHead):
		list = strings.TrimSuffix(strings.TrimPrefix(reason, namesHead), decideTail+team)
	case strings.HasSuffix(reason, decideTail+team+", and nobody signed in is among them"+unreachedTail) && strings.HasPrefix(reason, namesHead):
		// Named when it was handed over to the fallback approvers (unreachedReason): not new since.
		list = strings.TrimSuffix(strings.TrimPrefix(reason, namesHead), decideTail+team+", and nobody signed in is among them"+unreachedTail)
	case strings.HasPrefix(reason, "nobody signed in is left in ") && strings.HasSuffix(reason, ", who decide the requests of team "+team+unreachedTail):
		list = strings.TrimSuffix(strings.TrimPrefix(reason, "nobody signed in is left in "), ", who decide the requests of team "+team+unreachedTail)
	default:
		return nil
	}
	// "a, b or c" (policy.JoinList), and "a or b or c" as lines written before read too.
	return strings.Split(strings.ReplaceAll(list, ", ", " or "), " or ")
}

// SendToNewApprovers sends the approval message of request id, which waits for approval, to
// those who decide it now and were never sent it (SendToNewApproversOf).
func (s *Service) SendToNewApprovers(ctx context.Context, id LeaseID, skip []string) (bool, error) {
	l, err := s.Get(ctx, id)
	if err != nil {
		return false, err
	}
	return s.SendToNewApproversOf(ctx, l, skip)
}

// SendToNewApproversOf sends the approval message of l, which waits for approval, to each person
// who decides it now and was never sent it: the policy changed its team's approvers while it
// waited (another budget owner, one more, or none, so that the fallback approvers decide). Those
// in skip (who hold a copy already) and the requester (unless the policy allows self-approval) are
// not sent it, nor an approver entry any of whose people holds a copy; where none of those who
// decide reaches anyone, HandOverChangedApprovers hands it over instead. The message says why,
// naming the approvers sent it now, and so does a line of its history, so that a later start, or
// another replica, sends nobody it names again. Where everyone who decides holds a copy it reads
// nothing from the store. It reports whether it sent it now.
func (s *Service) SendToNewApproversOf(ctx context.Context, l *Lease, skip []string) (bool, error) {
	return s.sendToDecidersOf(ctx, l, skip, false)
}

// SendUndelivered sends the approval message of request l, which waits for approval and of which
// no chat ever posted a copy (it was made in the console, whose output reaches no one, or while
// no chat was on), to everyone who decides it now, once, as SendToNewApproversOf does: the message
// and a line of its history say why, so that a later start, or another replica, sends nobody it
// names again. It reports whether it sent it now.
func (s *Service) SendUndelivered(ctx context.Context, l *Lease) (bool, error) {
	return s.sendToDecidersOf(ctx, l, nil, true)
}

func (s *Service) sendToDecidersOf(ctx context.Context, l *Lease, skip []string, undelivered bool) (bool, error) {
	if l.State != PendingApproval || !s.DecidersReach(l.Team, l.User) {
		return false, nil
	}
	who := s.Deciders(l.Team, l.User)
	order, fresh := s.deciderEntriesWithoutCopy(l, who, skip)
	if len(order) == 0 {
		return false, nil
	}
	sent, err := s.sendWaiting(ctx, l, func(cur *Lease, ev []*Event) ([]string, []string, string) {
		told := map[string]bool{}
		for _, e := range ev {
			if e.Actor == SystemActor {
				for _, a := range newApproversNamed(e.Reason, cur.Team) {
					told[a] = true
				}
			}
		}
		var names, to []string
		for _, a := range order {
			if told[a] {
				continue // sent at an earlier start, or by another replica
			}
			names = append(names, a)
			for _, p := range fresh[a] {
				if !policy.Contains(to, p) {
					to = append(to, p)
				}
			}
		}
		if len(to) == 0 {
			return nil, nil, ""
		}
		if undelivered {
			return to, who, undeliveredHead + policy.JoinList(names, "or") + decideTail + cur.Team
		}
		return to, who, s.newApproversReason(cur.Team, names, len(names) < len(who))
	})
	return sent != nil, err
}

// DecidersWithoutCopy reports whether someone who decides l now holds no copy of its approval
// message (skip, canonical, hold one): SendToNewApproversOf would look whether to send it. It
// reads nothing from the store.
func (s *Service) DecidersWithoutCopy(l *Lease, skip []string) bool {
	if l.State != PendingApproval || !s.DecidersReach(l.Team, l.User) {
		return false
	}
	order, _ := s.deciderEntriesWithoutCopy(l, s.Deciders(l.Team, l.User), skip)
	return len(order) > 0
}

// deciderEntriesWithoutCopy are the approver entries of who none of whose people holds a copy
// (skip), in order, with the people of each to send it to.
func (s *Service) deciderEntriesWithoutCopy(l *Lease, who, skip []string) ([]string, map[string][]string) {
	fresh := map[string][]string{}
	var order []string
	for _, a := range who {
		holds := false
		for _, p := range s.People(a) {
			holds = holds || policy.Contains(skip, CanonicalUser(p)) || policy.Contains(skip, p)
		}
		if to := s.approvalRecipients([]string{a}, skip, l.User); !holds && len(to) > 0 {
			fresh[a] = to
			order = append(order, a)
		}
	}
	return order, fresh
}

// waitingMatches are the rules a waiting request met, as its approval message names them: the
// first with the reason kept with it, the others with the policy's.
func (s *Service) waitingMatches(l *Lease) []policy.Match {
	var out []policy.Match
	for i, n := range strings.Split(l.Rules, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		m := policy.Match{Rule: n}
		if n == QuotaRule && l.Kind == KindQuota {
			m.Why = QuotaRuleWhy // one wording, whatever a request of before kept with it
		} else if i == 0 {
			m.Why = l.Reason
		} else {
			for _, r := range s.Policy.Exceptions {
				if r.Name == n {
					m.Why = r.Why
				}
			}
		}
		out = append(out, m)
	}
	return out
}

// applyApproval moves an approved exception on, by kind, with note (quotaAtApproval's) in its
// audit. It runs inside Decide's transaction.
func (s *Service) applyApproval(ctx context.Context, tx Tx, l *Lease, approver, note string) (placed bool, err error) {
	now := s.Clock.Now()
	reason := "approved by " + approver
	if note != "" {
		reason += "; " + strings.ToLower(note[:1]) + note[1:]
	}
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
		placed, err := s.tryPlace(ctx, tx, l, reason)
		if err != nil || placed {
			return placed, err
		}
		// It waits: its status, and the requester's message, say what for, as a request's
		// that waits from the start does.
		if l.Reason == reason {
			l.Reason = reasonWaitingFree
		}
		return false, tx.UpdateLease(ctx, l, Queued)
	}
}

// Touches counts human decisions on requests made in [from, to), the requests themselves (of
// every kind: GPUs, quota increases, extensions) and the leases that ran in [from, to) (the
// workspace leases that held GPUs at some time in it, CPU-only jobs' included, as the weekly
// showback counts its leases), for the "human touches per 100 leases" figure: of the given teams,
// or of all where teams is nil.
func (s *Service) Touches(ctx context.Context, from, to time.Time, teams []string) (touches, requests, leases int, err error) {
	ls, err := s.List(ctx, LeaseFilter{Kind: AnyKind, EndedAfter: from})
	if err != nil {
		return 0, 0, 0, err
	}
	now := s.Clock.Now()
	for _, l := range ls {
		if teams != nil && !policy.Contains(teams, l.Team) {
			continue
		}
		if ranIn(l, from, to, now) {
			leases++
		}
		if l.CreatedAt.Before(from) || !l.CreatedAt.Before(to) {
			continue
		}
		requests++
		if l.DecidedBy != "" && l.DecidedBy != SystemActor {
			touches++
		}
	}
	return touches, requests, leases, nil
}

// ranIn is whether workspace lease l held its GPUs at some time in [from, to): from its start to
// its end, or for a lease still running, to now but never past its expiry; a lease that started
// now holds them now.
func ranIn(l *Lease, from, to, now time.Time) bool {
	if l.Kind != KindWorkspace || l.StartedAt.IsZero() {
		return false
	}
	end := l.EndedAt
	if end.IsZero() {
		end = now
		if !l.ExpiresAt.IsZero() && l.ExpiresAt.Before(end) {
			end = l.ExpiresAt
		}
		if end.Equal(now) && l.StartedAt.Equal(now) {
			return !now.Before(from) && now.Before(to)
		}
	}
	start := l.StartedAt
	if start.Before(from) {
		start = from
	}
	if end.After(to) {
		end = to
	}
	return end.After(start)
}
