package qm

import (
	"context"
	"errors"
	"strings"
	"time"
)

// transition moves a lease to a new state now, with an audit event, refusing if someone else
// moved it first.
func (s *Service) transition(ctx context.Context, tx Tx, l *Lease, to State, actor, reason string) error {
	return s.transitionAt(ctx, tx, l, to, actor, reason, time.Time{})
}

// transitionAt is transition dated at the moment the change was due or happened, which may be
// before it was noticed (an expiry, a reclaim or a timeout that fell due while the service was
// down, a job that ended meanwhile): the lease ends, and is billed, then. A zero at is now.
func (s *Service) transitionAt(ctx context.Context, tx Tx, l *Lease, to State, actor, reason string, at time.Time) error {
	from := l.State
	now := s.Clock.Now()
	if at.IsZero() || at.After(now) {
		at = now
	}
	if !l.StartedAt.IsZero() && at.Before(l.StartedAt) {
		at = l.StartedAt
	}
	l.State = to
	l.Reason = reason
	if to.Ended() && l.EndedAt.IsZero() {
		l.EndedAt = at
	}
	if to.Ended() {
		endPause(l, l.EndedAt) // a pause lasts to the lease's end at most
	}
	if err := tx.UpdateLeaseWithEvent(ctx, l, from, &Event{Lease: l.ID, At: at, Actor: actor, From: from, To: to, Reason: reason}); err != nil {
		l.State = from
		return err
	}
	s.tellWaits(l, from, to)
	return nil
}

// start asks the backend to start a provisioning lease and records what it says. The owner is told
// when it becomes active, or that it failed, unless tell is false (the request's own reply says
// so, from what start returns). Where tell is true no one's command started it: the change is the
// service's own, and logged as updateIf logs one (logChange).
func (s *Service) start(ctx context.Context, l *Lease, tell bool) error {
	was := l.State
	// Until what Start says is recorded, the reconcile pass leaves this lease's job to it: this
	// process's pass by starting, every replica's by the claim in the database.
	s.starting.Store(l.ID, true)
	defer s.starting.Delete(l.ID)
	switch ok, err := s.claimSubmission(ctx, l); {
	case err != nil:
		// The record below most likely fails too; should it not, this process's pass still
		// leaves the job to it, and another replica's adopts it.
		s.log().Warn("claim the submission of a lease's job", "lease", l.ID, "err", err)
	case !ok:
		return nil // ended meanwhile, or its job recorded: nothing to submit
	}
	renewing := s.renewSubmission(ctx, l.ID)
	// A submission may take long (an overloaded scheduler): other users' commands run meanwhile.
	resume := waitOutside(ctx)
	st, err := s.Backend.Start(ctx, l)
	resume()
	renewing()
	// why is the scheduler's reason for refusing the job, one clean line; empty for any other
	// error, whose words are for the log only.
	var why string
	var refused *Refused
	if errors.As(err, &refused) {
		why = ReasonLine(refused.Reason)
	}
	var away *Unreachable
	if errors.As(err, &away) {
		if _, ok := BackendAs[InventoryRefresher](s.Backend); ok {
			s.schedulerAway.Store(true) // until a reconcile pass reads its nodes again
		}
	}
	var b batch
	uerr := s.Store.Update(ctx, nil, func(tx Tx) error {
		b = batch{}
		cur, err2 := tx.GetLease(ctx, l.ID)
		if err2 != nil {
			return err2
		}
		if cur.State != Provisioning {
			return nil // released meanwhile
		}
		cur.SubmittingUntil, cur.SubmittingBy = time.Time{}, "" // recorded now: the passes take it from here
		if away != nil {
			// Nothing reached the scheduler: the lease waits in the service's queue, keeping its
			// place, and the tick hands it over once the scheduler answers. Its owner hears when
			// it runs.
			reason := reasonUnreachable(away.Reason)
			if away.Waiting != "" {
				reason = away.Waiting
				s.log().Warn("the lease waits", "lease", l.ID, "reason", reason, "err", err)
			} else {
				s.log().Warn("the scheduler does not answer; the lease waits", "lease", l.ID, "err", err)
			}
			cur.Node, cur.GPUIndex = "", nil
			if e := s.transition(ctx, tx, cur, Queued, SystemActor, reason); e != nil {
				return e
			}
			*l = *cur
			return nil
		}
		if err != nil {
			s.log().Error("backend start failed", "lease", l.ID, "err", err)
			reason := "the workspace could not be started"
			if why != "" {
				reason = refusedWords + why
			}
			if e := s.transition(ctx, tx, cur, Failed, SystemActor, reason); e != nil {
				return e
			}
			// Where the request's own reply says it could not be started, a notice would tell
			// the owner the same failure twice.
			if tell {
				if err := s.stage(ctx, tx, &b, Notice{Kind: NoticeFailed, To: []string{cur.User}, Lease: cur, Reason: cur.Reason}); err != nil {
					return err
				}
			}
			*l = *cur
			return nil
		}
		if st.Node != "" {
			cur.Node = st.Node
		}
		if st.PicksGPUs && !cur.Exclusive {
			if len(st.GPUIndex) > 0 {
				s.adoptGPUs(cur, Job{Node: cur.Node, GPUIndex: st.GPUIndex})
			} else {
				cur.GPUIndex, cur.Connection = nil, ConnectionUnknown
			}
		}
		cur.Connect, cur.Ref = st.Connect, st.Ref
		switch st.State {
		case Active, "":
			now := s.Clock.Now()
			cur.StartedAt = now
			cur.ExpiresAt = now.Add(cur.Duration)
			if e := s.transition(ctx, tx, cur, Active, SystemActor, "workspace ready"); e != nil {
				return e
			}
			if tell {
				if err := s.stage(ctx, tx, &b, Notice{Kind: NoticeGranted, To: []string{cur.User}, Lease: cur}); err != nil {
					return err
				}
			}
		case Queued: // the scheduler holds it in its queue
			reason := "waiting in the scheduler's queue"
			if st.Reason != "" {
				reason += ": " + st.Reason
			}
			if e := s.transition(ctx, tx, cur, Queued, SystemActor, reason); e != nil {
				return e
			}
		default:
			if e := tx.UpdateLease(ctx, cur, Provisioning); e != nil {
				return e
			}
		}
		*l = *cur
		return nil
	})
	if uerr != nil {
		return uerr
	}
	if tell && l.State != was {
		s.logChange(l, was)
	}
	s.send(ctx, &b)
	if away != nil {
		return nil // it waits in the service's queue, saying why
	}
	if err != nil && why != "" {
		return Errorf(EINTERNAL, "%s could not be started: the cluster said \"%s\". It is marked failed and nothing is charged; "+
			"if asking again gets the same answer, send this message to your platform admins.", l.ID, why)
	}
	if err != nil {
		return Errorf(EINTERNAL, "%s could not be started on the cluster; it is marked failed and nothing is charged.", l.ID)
	}
	return nil
}

// submitting reports whether a replica is submitting l's job at now (start): l is provisioning,
// has recorded no job, and the submission's claim has not lapsed. Its job, which may already run,
// is left to the submission meanwhile, which records it with how to reach it.
func submitting(l *Lease, now time.Time) bool {
	return l.State == Provisioning && l.Ref == "" && now.Before(l.SubmittingUntil)
}

// claimSubmission records in the lease that this replica submits its job, for SubmitGrace from
// now (renewSubmission renews it). It reports false when there is nothing to submit: the lease
// is no longer provisioning (released meanwhile) or has recorded a job.
func (s *Service) claimSubmission(ctx context.Context, l *Lease) (bool, error) {
	ok := false
	err := s.Store.Update(ctx, nil, func(tx Tx) error {
		ok = false
		cur, err := tx.GetLease(ctx, l.ID)
		if err != nil {
			return err
		}
		if cur.State != Provisioning || cur.Ref != "" {
			return nil
		}
		cur.SubmittingUntil, cur.SubmittingBy = s.Clock.Now().Add(s.submitGrace()), s.Submitter
		if err := tx.UpdateLease(ctx, cur, Provisioning); err != nil {
			return err
		}
		ok = true
		return nil
	})
	if errors.Is(err, ErrStale) {
		return false, nil // moved on meanwhile
	}
	return ok, err
}

// renewSubmission renews this replica's claim on the submission of lease id every third of
// SubmitGrace until the returned stop is called (and has waited for a renewal in flight), so
// that a submission that takes long (sbatch waiting on an overloaded controller) keeps its job
// from the other replicas' passes, while the claim of one that died lapses within SubmitGrace.
func (s *Service) renewSubmission(ctx context.Context, id LeaseID) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(max(s.submitGrace()/3, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			err := s.Store.Update(ctx, nil, func(tx Tx) error {
				cur, err := tx.GetLease(ctx, id)
				if err != nil || cur.State != Provisioning || cur.Ref != "" {
					return err
				}
				cur.SubmittingUntil, cur.SubmittingBy = s.Clock.Now().Add(s.submitGrace()), s.Submitter
				return tx.UpdateLease(ctx, cur, Provisioning)
			})
			if err != nil && !errors.Is(err, ErrStale) && ctx.Err() == nil {
				s.log().Warn("renew the claim on a lease's submission", "lease", id, "err", err)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// owned loads a lease the user may act on: their own.
func (s *Service) owned(ctx context.Context, tx Tx, user string, id LeaseID) (*Lease, error) {
	l, err := tx.GetLease(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, NotYours(id)
	}
	if err != nil {
		return nil, err
	}
	if !SameUser(l.User, user) {
		return nil, NotYours(id)
	}
	return l, nil
}

// NotYours is the refusal of a lease that does not exist or is someone else's: the same sentence
// for both, so that nobody learns who holds which lease by asking.
func NotYours(id LeaseID) *Error {
	return Errorf(ENOTFOUND, "you have no lease %s; /gpu list shows yours.", id).WithExample("/gpu list")
}

// Release ends a lease now at its owner's request, or withdraws one that still waits. An
// extension already in effect is refused: its time is part of the lease it extended, which
// runs on, so the refusal names that lease and how to end it. A quota increase in effect ends
// early, its GPUs leaving the team's quota.
func (s *Service) Release(ctx context.Context, user string, id LeaseID) (*Lease, error) {
	return s.end(ctx, user, id, func(tx Tx, l *Lease) (State, string, error) {
		switch {
		case l.State == PendingApproval || l.State == Queued:
			return Cancelled, "cancelled by " + user, nil
		case l.State.Live() && l.Kind == KindExtension:
			// Its time is already part of the lease it extended: ending it would end nothing
			// and give nothing back, so it is refused and says what does end that lease.
			return "", "", extensionInEffect(ctx, tx, l,
				"%s is an extension of %s, which has already ended (%s), so releasing it ends nothing.",
				"%s is an extension of %s already in effect, so releasing it ends nothing; to end the workspace, release %s.")
		case l.State.Running():
			return Released, "released by " + user, nil
		default:
			return "", "", Errorf(ECONFLICT, "%s has already ended (%s).", l.ID, l.State).WithExample("/gpu status " + l.ID.String())
		}
	})
}

// Cancel withdraws a lease that still waits (for a budget owner, or in the queue) at its owner's
// request: what a Cancel button does. A lease that has started since the button was shown is
// left alone and the refusal says how to end it on purpose, so that a Cancel pressed late never
// ends a running workspace; ending one is Release's. An approved extension of a lease that has
// ended since says so, and points at that lease's status rather than at releasing it.
func (s *Service) Cancel(ctx context.Context, user string, id LeaseID) (*Lease, error) {
	return s.end(ctx, user, id, func(tx Tx, l *Lease) (State, string, error) {
		switch {
		case l.State == PendingApproval || l.State == Queued:
			return Cancelled, "cancelled by " + user, nil
		case l.State.Live() && l.Kind == KindExtension:
			return "", "", extensionInEffect(ctx, tx, l,
				"%s no longer waits: it was approved and extended %s, which has already ended (%s), so there is nothing left to cancel.",
				"%s no longer waits: it was approved and has extended %s, so there is nothing left to cancel; to end %s on purpose, release it.")
		case l.State.Live() && l.Kind == KindQuota:
			return "", "", Errorf(ECONFLICT, "%s no longer waits: it was approved and the quota increase is in effect, so Cancel does not end it; to end it on purpose, release it.",
				l.ID).WithExample("/gpu release " + l.ID.String())
		case l.State.Live():
			return "", "", Errorf(ECONFLICT, "%s no longer waits: it has started and runs now (%s), so Cancel does not end it; to end it on purpose, release it.",
				l.ID, l.State).WithExample("/gpu release " + l.ID.String())
		default:
			return "", "", Errorf(ECONFLICT, "%s has already ended (%s).", l.ID, l.State).WithExample("/gpu status " + l.ID.String())
		}
	})
}

// extensionInEffect refuses ending l, an extension in effect, whose time is part of the lease it
// extended: where that lease has ended, in the words of ended (l, the lease, its state) with its
// status as the example; else in those of running (l, the lease, the lease) with how to release it.
func extensionInEffect(ctx context.Context, tx Tx, l *Lease, ended, running string) error {
	parent, err := tx.GetLease(ctx, l.Parent)
	if err != nil {
		return err
	}
	if parent.State.Ended() {
		return Errorf(ECONFLICT, ended, l.ID, l.Parent, parent.State).WithExample("/gpu status " + l.Parent.String())
	}
	return Errorf(ECONFLICT, running, l.ID, l.Parent, l.Parent).WithExample("/gpu release " + l.Parent.String())
}

func (s *Service) end(ctx context.Context, user string, id LeaseID, decide func(Tx, *Lease) (State, string, error)) (*Lease, error) {
	var l *Lease
	var wasRunning bool
	var b batch
	var due *Lease
	// Ending a lease only lowers usage and frees GPUs, so it takes none of the admission locks:
	// an admission that runs meanwhile sees the lease still held, which errs on the safe side, and
	// the conditional update keeps two enders from both succeeding.
	change := func(tx Tx) error {
		b = batch{}
		if err := checkKey(ctx, tx); err != nil {
			return err
		}
		cur, err := s.owned(ctx, tx, user, id)
		if err != nil {
			return err
		}
		if due == nil && s.dueEnd(cur, s.Clock.Now()) {
			due = cur // an end that fell due meanwhile stands, dated and billed then
			return errDue
		}
		to, reason, err := decide(tx, cur)
		if err != nil {
			return err
		}
		wasRunning = cur.State.Running()
		wasPending := cur.State == PendingApproval
		if err := s.transition(ctx, tx, cur, to, user, reason); err != nil {
			return err
		}
		if wasPending {
			// The approvers' request cards say it was withdrawn, and lose their buttons.
			if err := s.stage(ctx, tx, &b, Notice{Kind: NoticeDecided, To: s.approvalAudience(cur.Team, cur.User), Lease: cur, Actor: user, Reason: reason}); err != nil {
				return err
			}
		}
		l = cur
		return s.keepKey(ctx, tx, cur.ID)
	}
	err := s.Store.Update(ctx, nil, change)
	if errors.Is(err, errDue) {
		s.settleDue(ctx, due)
		err = s.Store.Update(ctx, nil, change)
	}
	if prev, ok := s.wasRepeated(ctx, err); ok {
		return prev, nil
	}
	if err != nil {
		return nil, err
	}
	s.send(ctx, &b)
	if l.Kind != KindWorkspace {
		return l, nil
	}
	if wasRunning || l.Ref != "" {
		resume := waitOutside(ctx)
		err := s.Backend.Stop(ctx, l)
		resume()
		if err != nil {
			s.log().Error("backend stop failed", "lease", l.ID, "err", err)
			l.StopDeferred = true
			if away := (*Unreachable)(nil); errors.As(err, &away) && away.Waiting != "" {
				l.StopDeferredWhy = away.Reason // the scheduler refuses the service's credentials
			}
		}
	}
	if wasRunning {
		s.startQueued(ctx, l.Class)
	}
	return l, nil
}

// Keep answers an idle warning: the workspace stays for another idle period.
func (s *Service) Keep(ctx context.Context, user string, id LeaseID) (*Lease, error) {
	var l, due *Lease
	keep := func(tx Tx) error {
		if err := checkKey(ctx, tx); err != nil {
			return err
		}
		cur, err := s.owned(ctx, tx, user, id)
		if err != nil {
			return err
		}
		if due == nil && s.dueEnd(cur, s.Clock.Now()) {
			due = cur // a reclaim or an expiry that fell due meanwhile stands
			return errDue
		}
		if !cur.State.Running() || cur.Kind != KindWorkspace {
			return Errorf(ECONFLICT, "%s is not a running workspace, so there is nothing to keep.", id).WithExample("/gpu status " + id.String())
		}
		if cur.State != IdleWarned {
			// No idle warning is open: keeping answers one, and there is none to answer, so
			// nothing changes (its idle clock is not reset behind the user's back).
			return noWarningToKeep(ctx, tx, cur)
		}
		cur.KeptAt = s.Clock.Now()
		cur.WarnedAt = time.Time{}
		if err := s.transition(ctx, tx, cur, Active, user, "kept by "+user); err != nil {
			return err
		}
		l = cur
		return s.keepKey(ctx, tx, cur.ID)
	}
	err := s.Store.Update(ctx, nil, keep)
	if errors.Is(err, errDue) {
		s.settleDue(ctx, due)
		err = s.Store.Update(ctx, nil, keep)
	}
	if prev, ok := s.wasRepeated(ctx, err); ok {
		return prev, nil
	}
	return l, err
}

// noWarningToKeep is the refusal of a keep of a running workspace with no idle warning open:
// one never warned has had none to answer; one warned before has had its warnings answered or
// ended (kept, or its GPUs busy again).
func noWarningToKeep(ctx context.Context, tx Tx, l *Lease) error {
	what := "has had no idle warning to answer"
	if evs, err := tx.Events(ctx, l.ID); err == nil {
		for _, e := range evs {
			if e.To == IdleWarned && e.From != IdleWarned {
				what = "has no idle warning open to answer (its last one is over)"
				break
			}
		}
	}
	return Errorf(ECONFLICT, "%s %s; /gpu keep answers one, so that a workspace whose GPUs sat idle is not reclaimed.", l.ID, what).
		WithExample("/gpu status " + l.ID.String())
}

// startQueued starts queued leases of a class that now fit, oldest first, but none of a requester
// who is away (requesterAway): it waits until they are back.
func (s *Service) startQueued(ctx context.Context, class string) {
	var queued []*Lease
	err := s.Store.View(ctx, func(tx Tx) error {
		var err error
		queued, err = tx.ListLeases(ctx, LeaseFilter{Class: class, States: []State{Queued}})
		return err
	})
	if err != nil {
		s.log().Error("list queued", "err", err)
		return
	}
	for _, q := range queued {
		if q.Ref == "" {
			// Placement needs the scheduler's nodes: read them first, where nothing has yet
			// (the first tick after a start comes before the reconcile loop's first pass).
			s.readInventory(ctx)
			break
		}
	}
	for _, q := range queued {
		if q.Ref != "" {
			continue // submitted already: it waits in the scheduler's own queue
		}
		if s.schedulerAway.Load() {
			return // the scheduler did not answer: nothing is handed to it until it does
		}
		if s.away(ctx, q.User) != present {
			// Its requester's sign-in was revoked or ended (or the directory no longer knows
			// them): as an approval of their request waits for them, no new lease starts for
			// them until they are back. It keeps its place; later leases that fit go first.
			continue
		}
		var placed bool
		var b batch
		err := s.Store.Update(ctx, s.admissionLocks(q.Team, q.Class), func(tx Tx) error {
			b = batch{}
			cur, err := tx.GetLease(ctx, q.ID)
			if err != nil || cur.State != Queued {
				return err
			}
			was := cur.Reason
			why := "GPUs became free"
			if strings.HasPrefix(was, reasonUnreachablePrefix) {
				why = "the scheduler answers again"
			} else if strings.HasPrefix(was, ReasonCredentialsPrefix) {
				why = "the scheduler accepts the service's credentials again"
			}
			placed, err = s.tryPlace(ctx, tx, cur, why)
			*q = *cur
			if err == nil && !placed && cur.Reason != was {
				// It waits on, for something else now: its status says what, without an event.
				return tx.UpdateLease(ctx, cur, Queued)
			}
			if err != nil || !placed || cur.State != Active {
				return err
			}
			return s.stage(ctx, tx, &b, Notice{Kind: NoticeGranted, To: []string{cur.User}, Lease: cur})
		})
		if err != nil {
			s.log().Error("start queued", "lease", q.ID, "err", err)
			continue
		}
		if placed {
			s.logChange(q, Queued)
		}
		s.send(ctx, &b)
		if placed && q.State == Provisioning {
			if err := s.start(ctx, q, true); err != nil {
				s.log().Error("start", "lease", q.ID, "err", err)
			}
			if s.schedulerAway.Load() {
				return // the scheduler does not answer: tried again once it does, in order
			}
		}
	}
}

func (s *Service) create(ctx context.Context, tx Tx, l *Lease, actor, reason string) error {
	return tx.CreateLeaseWithEvents(ctx, l, []*Event{{At: l.CreatedAt, Actor: actor, To: l.State, Reason: reason}})
}
