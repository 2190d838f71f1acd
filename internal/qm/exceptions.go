package qm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/policy"
)

// DefaultQuotaIncrease is how long an approved quota increase lasts when the request names no duration.
const DefaultQuotaIncrease = 7 * 24 * time.Hour

// MaxQuotaIncrease is the longest a quota increase may last.
const MaxQuotaIncrease = 90 * 24 * time.Hour

// QuotaRule is the name shown for quota increase requests, which always go to a budget owner.
const QuotaRule = "quota-increase"

// QuotaRuleWhy is why a quota increase waits, the why of QuotaRule wherever the rule is named
// (the approval card, /gpu approvals, the requester's replies): what it asks is said beside it.
const QuotaRuleWhy = "A quota increase always needs a budget owner's approval"

// withGrants is the policy's quota for a team plus the approved increases in effect at now.
func (s *Service) withGrants(team string, grants []*Lease, now time.Time) policy.Quota {
	return s.withGrantsIn(team, grants, now, s.WeekStart(now))
}

// withGrantsIn is withGrants with the GPU-hours of the week from ws (this week or a later one)
// that the increases add: their GPUs for the hours of that week they last, or lasted.
func (s *Service) withGrantsIn(team string, grants []*Lease, now, ws time.Time) policy.Quota {
	q := s.Policy.QuotaFor(team)
	we := s.WeekEnd(ws)
	limited := q.GPUHoursPerWeek > 0
	for _, g := range grants {
		if g.Kind != KindQuota || g.StartedAt.IsZero() {
			continue
		}
		if g.State == Active && g.ExpiresAt.After(now) {
			q.GPUs[g.Class] += g.GPUs
		}
		// The extra GPUs come with the GPU-hours to use them during the week, for the part of it
		// the increase lasts (as the showback counts it), whether it lasts still or ended. A team
		// without a weekly limit (0) keeps none: the hours would become its limit.
		if !limited {
			continue
		}
		until := g.ExpiresAt
		if !g.EndedAt.IsZero() && (until.IsZero() || g.EndedAt.Before(until)) {
			until = g.EndedAt
		}
		q.GPUHoursPerWeek += overlapHours(g.StartedAt, until, ws, we) * float64(g.GPUs)
	}
	return q
}

// QuotaFor is a team's quota now, approved increases included. Should the database not answer,
// it is the policy's quota.
func (s *Service) QuotaFor(ctx context.Context, team string) policy.Quota {
	var grants []*Lease
	_ = s.Store.View(ctx, func(tx Tx) error {
		var err error
		grants, err = tx.ListLeases(ctx, LeaseFilter{Kind: KindQuota, Team: team, EndedAfter: s.WeekStart(s.Clock.Now()), Slim: true})
		return err
	})
	return s.withGrants(team, grants, s.Clock.Now())
}

// QuotaIncrease asks the team's budget owners for n more GPUs of a class for d.
func (s *Service) QuotaIncrease(ctx context.Context, user, team, class string, n int, d time.Duration, because string) (*Outcome, error) {
	id, err := s.Resolve(ctx, user)
	if err != nil {
		return nil, err
	}
	c, ok := s.Policy.Class(class)
	if !ok {
		return nil, Errorf(EINVALID, "there is no class %s; the catalog has %s.", policy.Quoted(class, 40), policy.FewNames(class, s.Policy.ClassNames(), "and"))
	}
	if team, err = s.teamFor(id, team); err != nil {
		return nil, err
	}
	if d == 0 {
		d = DefaultQuotaIncrease
	}
	if d < time.Hour || d > MaxQuotaIncrease {
		return nil, Errorf(EINVALID, "a quota increase lasts between 1 hour and 90 days, not %s.", policy.FormatDuration(d))
	}
	if n < 1 || n > MaxRequestGPUs {
		return nil, Errorf(EINVALID, "%d is not a number of extra GPUs you can ask for.", n)
	}
	if strings.TrimSpace(because) == "" {
		return nil, Errorf(EINVALID, "a quota increase needs a reason.")
	}
	l := &Lease{Kind: KindQuota, User: user, Team: team, Class: c.Name, GPUs: n, Duration: d, State: PendingApproval,
		Rules: QuotaRule, Because: because, Reason: QuotaRuleWhy, CreatedAt: s.Clock.Now()}
	match := policy.Match{Rule: QuotaRule, Why: QuotaRuleWhy}
	asked := &Outcome{Lease: l, Matches: []policy.Match{match}, Approvers: s.Deciders(team, l.User)}
	out := asked
	if len(out.Approvers) == 0 {
		// No quota request of the team could be decided either: what works is to look at
		// the quota it has.
		return nil, s.nobodyDecides(team, "a quota increase", nil).WithExample("/gpu quota " + team)
	}
	var b batch
	err = s.Store.Update(ctx, []string{"team:" + team}, func(tx Tx) error {
		b, out = batch{}, asked
		if err := checkKey(ctx, tx); err != nil {
			return err
		}
		if prev, err := waitingTwin(ctx, tx, l); err != nil {
			return err
		} else if prev != nil {
			out = &Outcome{Lease: prev, AskedBefore: true, Matches: s.waitingMatches(prev), Approvers: s.Deciders(prev.Team, prev.User)}
			return nil
		}
		if err := s.create(ctx, tx, l, user, l.Reason); err != nil {
			return err
		}
		if err := s.stage(ctx, tx, &b, Notice{Kind: NoticeApprovalRequest, To: s.approvalAudience(team, l.User), Lease: l, Matches: out.Matches, Approvers: out.Approvers}); err != nil {
			return err
		}
		return s.keepKey(ctx, tx, l.ID)
	})
	if prev, ok := s.wasRepeated(ctx, err); ok {
		return &Outcome{Lease: prev, Duplicate: true, Approvers: s.Deciders(prev.Team, prev.User)}, nil
	}
	if err != nil {
		return nil, err
	}
	s.send(ctx, &b)
	return out, nil
}

// extendLease lengthens a live lease inside a transaction.
func (s *Service) extendLease(ctx context.Context, tx Tx, l *Lease, by time.Duration, actor, reason string) error {
	// The job's time limit first: a lease whose end moved while its job's limit stayed would be
	// ended by the scheduler at the old end. When the scheduler refuses, nothing moves.
	if err := s.retime(ctx, l, l.Duration+by); err != nil {
		return err
	}
	l.Duration += by
	l.Extended += by
	l.Extensions++
	if !l.ExpiresAt.IsZero() {
		l.ExpiresAt = l.ExpiresAt.Add(by)
	}
	if l.Kind == KindWorkspace && l.State == IdleWarned {
		// An extension answers the idle warning as Keep does: its owner wants the workspace, which
		// is not reclaimed and gets another whole idle period.
		l.KeptAt = s.Clock.Now()
		l.WarnedAt = time.Time{}
		if err := s.transition(ctx, tx, l, Active, actor, reason); err != nil {
			return err
		}
	} else {
		if err := tx.UpdateLease(ctx, l, l.State); err != nil {
			return err
		}
		if err := tx.AddEvent(ctx, &Event{Lease: l.ID, At: s.Clock.Now(), Actor: actor, From: l.State, To: l.State, Reason: reason}); err != nil {
			return err
		}
	}
	if s.Waits != nil && l.Kind == KindWorkspace && l.State.Running() {
		s.Waits.Started(l, time.Time{}) // it now runs longer: requests behind it wait longer
	}
	return nil
}

// retime raises the time limit of l's running job to d, where the scheduler can change one
// (Retimer), before l's end moves. A job still waiting in the queue is left to the reconcile
// pass, which counts its wait. It fails with a sentence for the user when the scheduler refuses
// (Slurm lets only its operators and administrators raise a limit).
func (s *Service) retime(ctx context.Context, l *Lease, d time.Duration) error {
	r, ok := BackendAs[Retimer](s.Backend)
	if !ok || l.Ref == "" || (l.State != Active && l.State != IdleWarned) {
		return nil
	}
	if err := r.SetTimeLimit(ctx, Job{Lease: l.ID, Ref: l.Ref}, d); err != nil {
		s.log().Error("raise the time limit of an extended lease's job", "lease", l.ID, "job", l.Ref, "err", err)
		end := "at its old end"
		if !l.ExpiresAt.IsZero() {
			end = "at " + l.ExpiresAt.In(s.Policy.Location).Format("Mon 2 Jan 15:04 MST")
		}
		return Errorf(EUNAVAILABLE, "%s was not extended: the extension did not reach the scheduler, which kept the time limit of job %s, so %s still ends %s; try again in a few minutes, or ask a platform admin.", l.ID, l.Ref, l.ID, end)
	}
	return nil
}

// Extend lengthens a lease. Within policy it happens at once and returns the extended lease; when a
// published rule applies (e.g. beyond the class's max_duration) it returns a pending extension
// request (Kind KindExtension) for the budget owners.
func (s *Service) Extend(ctx context.Context, user string, id LeaseID, by time.Duration) (*Outcome, error) {
	if by < time.Minute || by > MaxRequestDuration {
		return nil, Errorf(EINVALID, "an extension lasts between 1 minute and 30 days, not %s.", policy.FormatDuration(by)).
			WithExample(fmt.Sprintf("/gpu extend %s 2h", id))
	}
	who, err := s.Resolve(ctx, user)
	if err != nil {
		return nil, err
	}
	var l0 *Lease
	if err := s.Store.View(ctx, func(tx Tx) error {
		var err error
		l0, err = s.owned(ctx, tx, user, id)
		return err
	}); err != nil {
		return nil, err
	}
	if s.dueEnd(l0, s.Clock.Now()) {
		s.settleDue(ctx, l0) // a lease whose end passed meanwhile has ended: it is not extended past it
	}
	if l0.Kind != KindWorkspace {
		what := "a " + string(l0.Kind) + " request"
		if l0.Kind == KindExtension {
			what = "an extension request"
		}
		return nil, Errorf(EINVALID, "%s is %s, not a workspace lease; only workspace leases can be extended.", id, what).
			WithExample("/gpu list")
	}
	var out *Outcome
	var b batch
	rc := s.newRuleCheck()
	extend := func(tx Tx) error {
		b = batch{}
		if err := checkKey(ctx, tx); err != nil {
			return err
		}
		cur, err := s.owned(ctx, tx, user, id)
		if err != nil {
			return err
		}
		if cur.State == PendingApproval {
			return Errorf(ECONFLICT, "%s still waits for approval, so it cannot be extended yet; once it is approved, /gpu extend %s works.", id, id).
				WithExample("/gpu status " + id.String())
		}
		if !cur.State.Live() {
			d := cur.AskedDuration() // what was asked, not what the extensions made it
			if c, ok := s.Policy.Class(cur.Class); ok && c.MaxDuration.Duration > 0 && d > c.MaxDuration.Duration {
				d = c.MaxDuration.Duration // as long as the class grants at once: typed, it starts
			}
			again := fmt.Sprintf("/gpu request %d %s for %s", cur.GPUs, cur.Class, policy.FormatDuration(d))
			return Errorf(ECONFLICT, "%s is %s and cannot be extended; ask for a new lease instead.", id, cur.State).WithExample(again)
		}
		j, err := s.judgeExtension(ctx, tx, rc, who, user, cur, by)
		if err != nil {
			return err
		}
		if len(j.Matches) == 0 {
			if err := s.extendLease(ctx, tx, cur, by, user, "extended by "+policy.FormatDuration(by)); err != nil {
				return err
			}
			out = &Outcome{Lease: cur}
			return s.keepKey(ctx, tx, cur.ID)
		}
		ext, matches := j.ext, j.Matches
		ext.State = PendingApproval
		ext.Rules = ruleNames(matches)
		ext.Reason = matches[0].Why
		if err := s.create(ctx, tx, ext, user, ext.Reason); err != nil {
			return err
		}
		out = &Outcome{Lease: ext, Matches: matches, Approvers: s.Deciders(cur.Team, cur.User), Quota: j.Quota}
		if err := s.stage(ctx, tx, &b, Notice{Kind: NoticeApprovalRequest, To: s.approvalAudience(cur.Team, cur.User), Lease: ext, Matches: matches, Approvers: out.Approvers}); err != nil {
			return err
		}
		return s.keepKey(ctx, tx, ext.ID)
	}
	err = s.withRules(ctx, rc, func() error { return s.Store.Update(ctx, s.admissionLocks(l0.Team, l0.Class), extend) })
	if prev, ok := s.wasRepeated(ctx, err); ok {
		return &Outcome{Lease: prev, Duplicate: true, Approvers: s.Deciders(prev.Team, prev.User)}, nil
	}
	if err != nil {
		return nil, err
	}
	s.send(ctx, &b)
	return out, nil
}

// ExtensionVerdict is how the admission rules of /gpu extend judge an extension.
type ExtensionVerdict struct {
	// Matches are the exception rules it meets, with the quota note where it also takes the team
	// past its quota, as the approvers would read them: it waits for a budget owner. None: it is
	// granted at once (unless Refused).
	Matches []policy.Match
	// PastQuota says how it takes the team past its quota ("team vision past its quota, to 605 of
	// its 600 GPU-hours this week"); empty when it does not.
	PastQuota string
	// Refused is the refusal /gpu extend would give (an extension that already waits, weekly
	// GPU-hours used up with no rule to send it to a budget owner, nobody to decide); nil when
	// it would be granted or wait.
	Refused error
	// Fits is, where Refused is for the team's weekly GPU-hours, the shorter extension that fits
	// what the week has left (the one the refusal asks for); 0 where none does.
	Fits time.Duration
	// Quota is, where it waits for a budget owner and takes the team past its weekly GPU-hours,
	// what the week holds and what the extension adds, as its requester is told; nil otherwise.
	Quota *QuotaHeld

	ext *Lease // the extension request it would make
}

// AboutQuota reports whether the exception rule named rule is about the team's quota: the
// QuotaLimit note, or a published rule whose condition reads the quota.
func (s *Service) AboutQuota(rule string) bool { return s.aboutQuota(rule) }

// JudgeExtension is how /gpu extend, asked by l's owner, would judge extending l by by now: by
// the same admission rules, without extending it or asking anyone.
func (s *Service) JudgeExtension(ctx context.Context, l *Lease, by time.Duration) (ExtensionVerdict, error) {
	who, err := s.Resolve(ctx, l.User)
	if err != nil {
		return ExtensionVerdict{Refused: err}, nil
	}
	var v ExtensionVerdict
	rc := s.newRuleCheck()
	err = s.withRules(ctx, rc, func() error {
		return s.Store.View(ctx, func(tx Tx) error {
			cur, err := tx.GetLease(ctx, l.ID)
			if err != nil {
				return err
			}
			v, err = s.judgeExtension(ctx, tx, rc, who, l.User, cur, by)
			return err
		})
	})
	var e *Error
	if errors.As(err, &e) && e.Code != EINTERNAL && e != ErrNotFound {
		return ExtensionVerdict{Refused: err, Fits: v.Fits}, nil
	}
	return v, err
}

// judgeExtension applies the admission rules of an extension of cur by by, asked by who (as user
// wrote them), inside tx: the rules it meets (then it waits for a budget owner), or none (then it is granted at
// once); a refusal is the error.
func (s *Service) judgeExtension(ctx context.Context, tx Tx, rc *ruleCheck, who Identity, user string, cur *Lease, by time.Duration) (ExtensionVerdict, error) {
	if w, err := waitingExtension(ctx, tx, cur.ID); err != nil {
		return ExtensionVerdict{}, err
	} else if w != nil {
		waits := s.ExtensionWaitsText(cur.ID, w, s.Deciders(w.Team, w.User))
		return ExtensionVerdict{}, Errorf(ECONFLICT, "%s%s, so it cannot be extended again until that is decided.",
			strings.ToUpper(waits[:1]), waits[1:]).WithExample("/gpu status " + w.ID.String())
	}
	if err := longestExtension(cur, by); err != nil {
		return ExtensionVerdict{}, err
	}
	c, ok := s.Policy.Class(cur.Class)
	if !ok {
		return ExtensionVerdict{}, Errorf(EINVALID, "class %s of %s is no longer in the catalog, so it cannot be extended.", cur.Class, cur.ID)
	}
	u, q, err := s.usage(ctx, tx, cur.Team, s.Clock.Now())
	if err != nil {
		return ExtensionVerdict{}, err
	}
	ext := &Lease{Kind: KindExtension, Parent: cur.ID, User: user, Team: cur.Team, Class: cur.Class, GPUs: 0, Duration: by,
		DataClass: cur.DataClass, Exclusive: cur.Exclusive, Template: cur.Template, CreatedAt: s.Clock.Now()}
	in := s.ruleInput(who, c, u, q, ext, "extend", cur.Duration+by)
	in.Request.GPUHours = GPUHours(cur.GPUs, by)
	matches, err := s.ruleResult(ctx, rc, in)
	if err != nil {
		return ExtensionVerdict{}, err
	}
	// The hours it adds count in each week they fall in, from the lease's end on.
	from := extendsFrom(cur, s.usageAt(u))
	wp := s.pastWeeks(u, q, from, cur.GPUs, by)
	v := ExtensionVerdict{Matches: s.withQuotaNote(matches, cur.Team, cur.Class, u, q, 0, wp),
		PastQuota: pastQuota(cur.Team, cur.Class, u, q, 0, wp), ext: ext}
	if len(v.Matches) > 0 && wp != nil {
		// Its requester reads the week's numbers, as the approvers' card gives them. An extension
		// adds no GPUs: only the week's GPU-hours are past the quota.
		v.Quota = &QuotaHeld{Team: cur.Team, Class: cur.Class, Held: u.GPUs[cur.Class], Limit: q.GPUs[cur.Class],
			NameTeam: who.otherTeam(cur.Team) != "", WeekOnly: true, Increase: weekIncrease(wp)}
		v.Quota.setWeek(wp, s.WeekRooms(u, q, from, by), from)
	}
	if len(v.Matches) == 0 {
		var fits time.Duration
		if err := s.weeklyHoursLeft(cur.Team, who.otherTeam(cur.Team), cur.Class, u, q, wp, from, by, "extending "+cur.ID.String()+" by "+policy.FormatDuration(by), func(held *QuotaHeld) (string, string, bool) {
			// A shorter extension of the GPUs the lease holds (its whole nodes, as counted).
			_, d, ok := held.Within(cur.GPUs, by)
			if !ok || cur.GPUs <= 0 {
				return "", "", false
			}
			fits = d
			return policy.FormatDuration(d), fmt.Sprintf("/gpu extend %s %s", cur.ID, policy.FormatDuration(d)), true
		}); err != nil {
			return ExtensionVerdict{Fits: fits}, err
		}
		return v, nil
	}
	if len(s.Deciders(cur.Team, cur.User)) == 0 {
		// What works instead: the extension the class still allows without approval, where
		// the rules grant it at once, else the lease as it is.
		example := "/gpu status " + cur.ID.String()
		if room := (c.MaxDuration.Duration - cur.Duration).Truncate(time.Minute); room >= time.Minute && room < by {
			// Its own rule check, evaluated here, so that this admission's is left as it is.
			if w, err := s.judgeExtension(ctx, tx, &ruleCheck{inTx: true}, who, user, cur, room); err == nil && len(w.Matches) == 0 {
				example = fmt.Sprintf("/gpu extend %s %s", cur.ID, policy.FormatDuration(room))
			}
		}
		return ExtensionVerdict{}, s.nobodyDecides(cur.Team, "", v.Matches).WithExample(example)
	}
	return v, nil
}

// ExtensionRoom is how much longer lease l may still be made: no lease lasts longer than
// MaxRequestDuration in all, approved or not. It is kept to whole minutes.
func ExtensionRoom(l *Lease) time.Duration {
	return max(0, MaxRequestDuration-l.Duration).Truncate(time.Minute)
}

// longestExtension refuses an extension of cur by by that would make it last longer than any
// lease may, with the longest extension left as the example (or a new lease where none is).
func longestExtension(cur *Lease, by time.Duration) error {
	if cur.Duration+by <= MaxRequestDuration {
		return nil
	}
	longest := policy.FormatDuration(MaxRequestDuration)
	if room := ExtensionRoom(cur); room >= time.Minute {
		return Errorf(EINVALID, "%s would last %s in all, but no lease lasts longer than %s, approved or not; extend it by %s at most.",
			cur.ID, policy.FormatDuration(cur.Duration+by), longest, policy.FormatDuration(room)).
			WithExample(fmt.Sprintf("/gpu extend %s %s", cur.ID, policy.FormatDuration(room)))
	}
	return Errorf(EINVALID, "%s already lasts %s, and no lease lasts longer than %s, approved or not; ask for a new lease when it ends.",
		cur.ID, policy.FormatDuration(cur.Duration), longest).
		WithExample(fmt.Sprintf("/gpu request %d %s for %s", cur.GPUs, cur.Class, policy.FormatDuration(min(cur.Duration, time.Hour*4))))
}

// ExtensionWaitsText says that w, an extension of lease id, waits for approval, and who decides
// it, named as WhoDecides names them (a group with its members): "an extension of L-1 (L-7, 2h
// more) is already waiting for approval by dana@acme.example". The extension is named before who
// decides, so that a group's members in brackets are not followed by another pair.
func (s *Service) ExtensionWaitsText(id LeaseID, w *Lease, deciders []string) string {
	return fmt.Sprintf("an extension of %s (%s, %s more) is already waiting for approval by %s",
		id, w.ID, policy.FormatDuration(w.Duration), s.WhoDecides(deciders, w.User))
}

// waitingExtension is the extension of lease id that waits for a budget owner; nil when none
// does. A further extension is refused meanwhile: approving both would add both, more than
// anyone meant, and one granted at once would change what the waiting one extends.
func waitingExtension(ctx context.Context, tx Tx, id LeaseID) (*Lease, error) {
	waiting, err := tx.ListLeases(ctx, LeaseFilter{Kind: KindExtension, Parent: id, States: []State{PendingApproval}, Limit: 1})
	if err != nil || len(waiting) == 0 {
		return nil, err
	}
	return waiting[0], nil
}

// WaitingExtension is the extension of lease id that waits for a budget owner, and who may
// decide it; nil when none waits. A lease's messages offer no Extend button meanwhile.
func (s *Service) WaitingExtension(ctx context.Context, id LeaseID) (*Lease, []string, error) {
	var w *Lease
	err := s.Store.View(ctx, func(tx Tx) error {
		var err error
		w, err = waitingExtension(ctx, tx, id)
		return err
	})
	if err != nil || w == nil {
		return nil, nil, err
	}
	return w, s.Deciders(w.Team, w.User), nil
}
