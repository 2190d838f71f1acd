package qm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/policy"
)

// LeaseRequest is what a user asks for.
type LeaseRequest struct {
	User string
	// Who is the requester already resolved at the door; nil resolves User.
	Who       *Identity
	GPUs      int // 0: the default
	Class     string
	Duration  time.Duration
	Template  string
	Params    map[string]string // the template's key=value parameters
	Team      string
	DataClass string
	Exclusive bool
	// RequestKey de-duplicates redelivered requests (a chat platform's retry).
	RequestKey string
	// Classes are, when Class is empty, the classes to choose from, best first; nil: the catalog's,
	// in the policy's order. The first in which the team has quota and room is taken.
	Classes []string
	// ClassGPUs are, when Class is empty, the GPUs a candidate class asks for where they are not
	// GPUs (a template sized by each class's own nodes); the class taken sets GPUs.
	ClassGPUs map[string]int

	// noRoom is, for a request that named no class, why none of its candidates had room for it:
	// the refusal when no published rule sends it to a budget owner.
	noRoom error
	// asked is how many GPUs were asked for where that was rounded up to whole nodes; 0 otherwise.
	asked int
	// CPUOnly asks for a lease that holds no GPU, for a job that runs on CPUs only: GPUs stays 0.
	CPUOnly bool
}

// Outcome is what became of a request.
type Outcome struct {
	Lease     *Lease
	Matches   []policy.Match // exception rules that stopped it
	Approvers []string       // who will decide
	Duplicate bool           // an earlier delivery of the same request made this lease
	// AskedBefore says the request waits for a decision already, asked before by the same
	// requester for the same (sameAsk) and still undecided: Lease is that one, and nothing
	// was made or sent.
	AskedBefore bool
	Wait        WaitEstimate // when queued
	// WaitErr is set when the wait could not be predicted (the lease is made all the same).
	WaitErr error
	// Quota, for a request that waits for a budget owner and would take its team past its
	// concurrent quota of the class or its weekly GPU-hours, is what the team holds of them now:
	// the requester reads what stands in the way, and what would fit.
	Quota *QuotaHeld
}

// QuotaHeld is what a team holds of its concurrent quota of a class: Held of Limit GPUs, by
// Holders (QuotaHolders).
type QuotaHeld struct {
	Team, Class string
	Held, Limit int
	Holders     []*Lease
	// NameTeam says the requester must name the team in a command for it (not their first).
	NameTeam bool
	// WeekOnly leaves the GPUs at once out of Text: only the week's GPU-hours are past the quota.
	WeekOnly bool
	// Week is the GPU-hours the team used or committed this week, and WeekLimit its weekly quota
	// of them, where a request passes it (else 0); WeekAsked is what the request adds, 0 once
	// it counts in Week (approved). Where the week the request passes is a later one, they are
	// that week's, and WeekName names it ("next week (from Mon 14 Dec)"; empty: this week).
	Week, WeekLimit, WeekAsked float64
	WeekName                   string
	// Rooms are the weeks the request reaches from WeekFrom (Service.WeekRooms), where they are
	// known: Within fits its length to what each has left.
	Rooms    []WeekRoom
	WeekFrom time.Time
	// Undone says the request will not happen (withdrawn, cancelled, denied or expired
	// undecided): what it would have added to the week is said in the past.
	Undone bool
	// Increase is how many more GPUs of the class a quota increase needs for the request to
	// fit without a decision, at once and, for the rest of the week, in GPU-hours (0 where not
	// said).
	Increase int
}

// Within is the request of gpus GPUs for d that fits the quota QuotaHeld says is passed, the
// GPUs at once and the week's GPU-hours left alike: fewer GPUs where those at once are passed,
// and a shorter time, to the minute, where the week's are. false where none fits.
func (q *QuotaHeld) Within(gpus int, d time.Duration) (int, time.Duration, bool) {
	if !q.WeekOnly {
		gpus = min(gpus, q.Limit-q.Held)
	}
	if gpus <= 0 {
		return 0, 0, false
	}
	if len(q.Rooms) > 0 {
		d = fitWeeks(q.Rooms, q.WeekFrom, gpus, d)
	} else if q.WeekLimit > 0 {
		left := q.WeekLimit - q.Week
		if left <= 0 {
			return 0, 0, false
		}
		// Whole minutes of gpus GPUs, as the quota counts them (a hair of float left over is none).
		most := time.Duration(math.Floor(left*60/float64(gpus)+1e-6)) * time.Minute
		d = min(d, most)
	}
	if d < time.Minute {
		return 0, 0, false
	}
	return gpus, d, true
}

// Text says what the team holds of its quota of the class now, and by which leases: "Team speech
// holds 2 of its 2 slice GPUs now: L-1 (2, suspended)." The requester's reply and the budget
// owners' approval card say it alike. Where a request passes the team's weekly GPU-hours, it
// says so with the numbers: "It would take team speech to 130 of its 100 GPU-hours this week:
// 95 used or committed, and 35 for this request." A request that will not happen says what it
// "would have taken" instead.
func (q *QuotaHeld) Text() string {
	var parts []string
	if !q.WeekOnly {
		s := fmt.Sprintf("Team %s holds %d of its %s now", q.Team, q.Held, GPUCount(q.Limit, q.Class))
		switch {
		case q.Limit <= 0 && q.Held <= 0:
			// No quota of the class at all: not "holds 0 of its 0".
			s = fmt.Sprintf("Team %s has no quota of %s GPUs", q.Team, q.Class)
		case q.Limit <= 0:
			s = fmt.Sprintf("Team %s holds %s now, with no quota of them", q.Team, GPUCount(q.Held, q.Class))
		}
		if len(q.Holders) > 0 {
			s += ": " + HoldersText(q.Holders)
		}
		parts = append(parts, s+".")
	}
	switch {
	case q.WeekLimit <= 0:
	case q.WeekAsked > 0:
		would := "would take"
		if q.Undone {
			would = "would have taken"
		}
		week := q.WeekName
		if week == "" {
			week = "this week"
		}
		parts = append(parts, fmt.Sprintf("It %s team %s to %s of its %s GPU-hours %s: %s used or committed, and %s for this request.",
			would, q.Team, FormatHours(q.Week+q.WeekAsked), FormatHours(q.WeekLimit), week, FormatHours(q.Week), FormatHours(q.WeekAsked)))
	default:
		parts = append(parts, fmt.Sprintf("Team %s has used or committed %s of its %s GPU-hours this week.", q.Team, FormatHours(q.Week), FormatHours(q.WeekLimit)))
	}
	return strings.Join(parts, " ")
}

// Normalize fills a request's defaults and checks what can be checked without the database.
func (s *Service) Normalize(ctx context.Context, req *LeaseRequest) (Identity, *policy.Class, error) {
	s.readInventory(ctx)
	var id Identity
	if req.Who != nil && SameUser(req.Who.User, req.User) {
		id = *req.Who
	} else {
		var err error
		if id, err = s.Resolve(ctx, req.User); err != nil {
			return id, nil, err
		}
		req.Who = &id
	}
	req.User = id.User
	if req.Class == "" {
		team, err := s.teamFor(id, req.Team)
		if err != nil {
			return id, nil, err
		}
		if req.Class, req.noRoom, err = s.classWithRoom(ctx, team, req); err != nil {
			return id, nil, err
		}
		if n, ok := req.ClassGPUs[req.Class]; ok && n > 0 {
			req.GPUs = n
		}
	}
	switch {
	case req.CPUOnly && (req.GPUs != 0 || req.Exclusive):
		return id, nil, Errorf(EINVALID, "a job that runs on CPUs only holds no GPU, so it asks for no GPUs and no whole nodes.")
	case req.GPUs == 0 && !req.CPUOnly:
		req.GPUs = DefaultGPUs
	}
	if req.Duration == 0 {
		if c, ok := s.Policy.Class(req.Class); ok {
			req.Duration = min(DefaultDuration, c.MaxDuration.Duration)
		}
	}
	shape := req.GPUs
	if req.CPUOnly {
		shape = 1 // its class and duration are checked; it has no GPUs to check
	}
	c, err := s.checkShape(req.Class, shape, req.Duration)
	if err != nil {
		return id, nil, err
	}
	req.Class = c.Name
	if whole := s.countedGPUs(c.Name, req.GPUs, req.Exclusive); whole > req.GPUs {
		req.asked, req.GPUs = req.GPUs, whole
		if _, err := s.checkShape(c.Name, req.GPUs, req.Duration); err != nil {
			return id, nil, err
		}
	}
	team, err := s.teamFor(id, req.Team)
	if err != nil {
		return id, nil, err
	}
	req.Team = team
	if req.DataClass == "" {
		if dc := s.DataClassesOf(team); len(dc) > 0 {
			req.DataClass = dc[0]
		}
	}
	req.DataClass = policy.NameKey(req.DataClass)
	return id, c, nil
}

// countedGPUs is how many GPUs a request for gpus of class holds, counts against quota and is
// billed for. An exclusive lease holds whole nodes, and so does one larger than a node where the
// service places it (it takes whole free nodes), as the scheduler allocates them: the fewest GPUs
// of whole nodes of the class that hold what was asked, which placement then takes exactly.
func (s *Service) countedGPUs(class string, gpus int, exclusive bool) int {
	if whole := s.WholeNodeGPUs(class, gpus); whole > gpus && (exclusive || gpus > s.NodeSize(class) && s.placesItself(class)) {
		return whole
	}
	return gpus
}

// CountedGPUs is how many GPUs a request for gpus of class, exclusive or not, counts against
// the quota: the whole nodes it takes where it takes them (countedGPUs).
func (s *Service) CountedGPUs(class string, gpus int, exclusive bool) int {
	return s.countedGPUs(class, gpus, exclusive)
}

// WithinQuota is the request that q's quota grants without a decision, of at most gpus GPUs of
// class as asked, exclusive or not, for at most d: each count's GPUs counted as the service
// counts them (whole nodes, CountedGPUs), a shorter length first and fewer GPUs where not even a
// minute of gpus is left. Fewer GPUs are only counts that takes (nil: any) allows. false where
// none fits.
func (s *Service) WithinQuota(q *QuotaHeld, class string, gpus int, d time.Duration, exclusive bool, takes func(int) bool) (int, time.Duration, bool) {
	for n := gpus; n >= 1; n-- {
		if n != gpus && takes != nil && !takes(n) {
			continue
		}
		counted := s.countedGPUs(class, n, exclusive)
		if g, dd, ok := q.Within(counted, d); ok && g == counted {
			return n, dd, true
		}
	}
	return 0, 0, false
}

// WholeNodesText says how many GPUs of whole nodes of class a lease holds: "2 whole nodes of 8
// GPUs = 16 GPUs", or on nodes of several sizes "whole nodes of 24 GPUs in all".
func (s *Service) WholeNodesText(class string, gpus int) string {
	var sizes []int
	for _, nd := range s.Backend.Inventory() {
		if nd.Class == class && nd.GPUs > 0 {
			sizes = append(sizes, nd.GPUs)
		}
	}
	if len(sizes) > 0 && uniform(sizes) && gpus%sizes[0] == 0 {
		nodes := "whole nodes"
		if gpus == sizes[0] {
			nodes = "whole node"
		}
		return fmt.Sprintf("%d %s of %s = %s", gpus/sizes[0], nodes, gpusWord(sizes[0]), gpusWord(gpus))
	}
	return fmt.Sprintf("whole nodes of %s in all", gpusWord(gpus))
}

// DefaultClass is the class that a request of one GPU by who naming no class would get now,
// charged to team (empty: their first team), by the rule of classWithRoom: the first class, in the
// policy's order, in which the team has quota and room. ok is false when no class has room (or
// the team has no quota in any), where such a request would be refused or wait for a budget
// owner.
func (s *Service) DefaultClass(ctx context.Context, who Identity, team string) (class string, ok bool, err error) {
	team, err = s.teamFor(who, team)
	if err != nil {
		return "", false, err
	}
	// Nothing is delivered here: no earlier delivery's class stands in for the rule.
	ctx = context.WithValue(ctx, deliveryKeyCtx{}, "")
	class, noRoom, err := s.classWithRoom(ctx, team, &LeaseRequest{User: who.User, Who: &who, Team: team})
	if err != nil {
		return "", false, err
	}
	if _, known := s.Policy.Class(class); !known {
		return "", false, nil
	}
	return class, noRoom == nil, nil
}

// classWithRoom is the class a request that names none gets: the first of its candidates
// (req.Classes, else the catalog in the policy's order) in which team has a quota with room for
// the request's GPUs. When none has, it is the first candidate the team has quota in (else the
// first), and noRoom says why, naming the classes the team may use and how to ask for more: the
// refusal unless a published rule sends the request to a budget owner.
func (s *Service) classWithRoom(ctx context.Context, team string, req *LeaseRequest) (class string, noRoom, err error) {
	key := req.RequestKey
	if key == "" {
		key = DeliveryKey(ctx)
	}
	if key != "" {
		// Delivered again: the class the first delivery got, though it may have no room now.
		if prev, err := s.leaseByKey(ctx, key); err == nil {
			return prev.Class, nil, nil
		}
	}
	gpusIn := func(class string) int {
		if req.CPUOnly {
			return 0
		}
		if n, ok := req.ClassGPUs[class]; ok && n > 0 {
			return n
		}
		if req.GPUs > 0 {
			return req.GPUs
		}
		return DefaultGPUs
	}
	cands := req.Classes
	if len(cands) == 0 {
		cands = s.Policy.ClassNames()
	}
	u, q, err := s.TeamUsage(ctx, team)
	if err != nil {
		return "", nil, err
	}
	var full []string
	more, first, gpus := 0, "", gpusIn(cands[0])
	for _, name := range cands {
		c, ok := s.Policy.Class(name)
		if !ok || q.GPUs[c.Name] <= 0 {
			continue
		}
		n := s.countedGPUs(c.Name, gpusIn(c.Name), req.Exclusive)
		if capa := s.capacityOf(c.Name); capa > 0 && n > capa {
			continue
		}
		if n == 0 || u.GPUs[c.Name]+n <= q.GPUs[c.Name] {
			return c.Name, nil, nil
		}
		full = append(full, fmt.Sprintf("%d of %s", u.GPUs[c.Name], GPUCount(q.GPUs[c.Name], c.Name)))
		if first == "" {
			first, more, gpus = c.Name, u.GPUs[c.Name]+n-q.GPUs[c.Name], gpusIn(c.Name)
		}
	}
	if first == "" {
		c, ok := s.Policy.Class(cands[0])
		if !ok {
			return cands[0], nil, nil // refused as no class of the catalog
		}
		return c.Name, Errorf(EFORBIDDEN, "team %s has no GPU quota in %s, so a request that names no class has no class to go to; ask your budget owner for some with /gpu quota request.",
			team, policy.JoinList(cands, "or")).WithExample(QuotaRequestExample(s.countedGPUs(c.Name, gpus, req.Exclusive), c.Name, req.Who.otherTeam(team))), nil
	}
	return first, Errorf(EFORBIDDEN, "team %s has no room for %s in any class it has quota in (it holds %s at once), so the request was not made; ask your budget owner for more with /gpu quota request.",
		team, gpusWord(gpus), policy.JoinList(full, "and")).WithExample(QuotaRequestExample(more, first, req.Who.otherTeam(team))), nil
}

// gpusWord is "1 GPU", "2 GPUs".
func gpusWord(n int) string { return GPUCount(n, "") }

// admissionLocks are the locks every admission that touches a class and team takes.
func (s *Service) admissionLocks(team, class string) []string {
	locks := []string{"class:" + class, "team:" + team}
	if c, ok := s.Policy.Class(class); ok && c.CapacityShare > 0 {
		locks = append(locks, "shared-capacity")
	}
	return locks
}

// Request admits, queues or routes a lease request. Admission is atomic: the quota and capacity
// checks and the insert happen under the class, team and shared-capacity locks.
func (s *Service) Request(ctx context.Context, req LeaseRequest) (*Outcome, error) {
	id, c, err := s.Normalize(ctx, &req)
	if err != nil {
		return nil, err
	}
	if req.RequestKey == "" {
		req.RequestKey = DeliveryKey(ctx)
	}
	if req.RequestKey != "" {
		if prev, err := s.leaseByKey(ctx, req.RequestKey); err == nil {
			return s.deliveredBefore(prev), nil
		}
	}
	var out *Outcome
	var b batch
	rc := s.newRuleCheck()
	admit := func(tx Tx) error {
		b = batch{}
		now := s.Clock.Now()
		// What the team holds and, when the service places the lease, what the class's running
		// leases hold: one read.
		var held []Holding
		var leases []*Lease // the team's, open this week
		classes := s.poolClasses(req.Class)
		if s.placesItself(req.Class) {
			ls, h, err := tx.TeamLeasesAndHeld(ctx, req.Team, s.WeekStart(now), s.heldClasses(req.Class, classes))
			if err != nil {
				return err
			}
			leases, held = ls, h
		} else {
			ls, err := tx.ListLeases(ctx, LeaseFilter{Kind: AnyKind, Team: req.Team, EndedAfter: s.WeekStart(now), Slim: true})
			if err != nil {
				return err
			}
			leases = ls
		}
		u, q := s.usageFrom(req.Team, leases, now)
		l := &Lease{User: req.User, Team: req.Team, Class: req.Class, GPUs: req.GPUs, Duration: req.Duration,
			Template: req.Template, Params: req.Params, DataClass: req.DataClass, Exclusive: req.Exclusive, AskedGPUs: req.asked, RequestKey: req.RequestKey, CreatedAt: now,
			Price: c.PricePerGPUHour, Priced: true}
		in := s.ruleInput(id, c, u, q, l, "lease", req.Duration)
		matches, err := s.ruleResult(ctx, rc, in)
		if err != nil {
			return err
		}
		wp := s.pastWeeks(u, q, now, l.GPUs, l.Duration)
		matches = s.withQuotaNote(matches, l.Team, l.Class, u, q, l.GPUs, wp)
		out = &Outcome{Lease: l, Matches: matches}
		atOnce := l.GPUs > 0 && u.GPUs[l.Class]+l.GPUs > q.GPUs[l.Class]
		if len(matches) > 0 && (atOnce || wp != nil) {
			held := &QuotaHeld{Team: l.Team, Class: l.Class, Held: u.GPUs[l.Class], Limit: q.GPUs[l.Class],
				NameTeam: id.otherTeam(l.Team) != "", WeekOnly: !atOnce}
			if atOnce {
				if held.Holders, err = quotaHolders(ctx, tx, leases, l.Class); err != nil {
					return err
				}
				held.Increase = u.GPUs[l.Class] + l.GPUs - q.GPUs[l.Class]
			}
			if wp != nil {
				held.setWeek(wp, s.WeekRooms(u, q, now, l.Duration), now)
				held.Increase = max(held.Increase, weekIncrease(wp))
			}
			out.Quota = held
		}
		if len(matches) > 0 {
			out.Approvers = s.Deciders(l.Team, l.User)
			if len(out.Approvers) == 0 {
				e := s.nobodyDecides(l.Team, "", matches)
				if ex := s.undecidedExample(ctx, id, c, u, q, l); ex != "" {
					e = e.WithExample(ex)
				}
				return e
			}
			if prev, err := waitingTwin(ctx, tx, l); err != nil {
				return err
			} else if prev != nil {
				out = &Outcome{Lease: prev, AskedBefore: true, Matches: s.waitingMatches(prev), Approvers: s.Deciders(prev.Team, prev.User)}
				return nil
			}
			l.State = PendingApproval
			l.Rules = ruleNames(matches)
			l.Reason = matches[0].Why
			if err := s.create(ctx, tx, l, req.User, l.Reason); err != nil {
				return err
			}
			n := Notice{Kind: NoticeApprovalRequest, To: s.approvalAudience(l.Team, l.User), Lease: l, Matches: matches, Approvers: out.Approvers}
			if out.Quota != nil {
				n.Held = out.Quota.Text() // the budget owners read what stands in the way, as the requester does
			}
			if err := s.stage(ctx, tx, &b, n); err != nil {
				return err
			}
			return nil
		}
		// No published rule stopped it; the quota still binds (a CPU-only lease takes none of it).
		over := l.GPUs > 0 && u.GPUs[l.Class]+l.GPUs > q.GPUs[l.Class]
		if over && req.noRoom != nil {
			return req.noRoom
		}
		if over {
			more := fmt.Sprintf("%d more", l.GPUs)
			rounded := req.asked > 0 && req.asked < l.GPUs
			if rounded {
				more = fmt.Sprintf("asking for %d takes %s against the quota, which", req.asked, s.WholeNodesText(l.Class, l.GPUs))
			}
			holds := fmt.Sprintf("%d", u.GPUs[l.Class])
			hs, err := quotaHolders(ctx, tx, leases, l.Class)
			if err != nil {
				return err
			}
			if len(hs) > 0 {
				holds += " — " + HoldersText(hs) + " —"
			}
			if room := q.GPUs[l.Class] - u.GPUs[l.Class]; room > 0 && !rounded && !l.Exclusive {
				// A smaller request fits now: that is the example; more takes a budget owner.
				ex := fmt.Sprintf("/gpu request %d %s for %s", room, l.Class, policy.FormatDuration(l.Duration))
				if l.Template != "" {
					ex += " template " + l.Template
				}
				if t := id.otherTeam(l.Team); t != "" {
					ex += " team " + t
				}
				return Errorf(EFORBIDDEN, "team %s may hold %s at once and holds %s, so %s would go over its quota; ask for %d at most, or ask your budget owner for more with /gpu quota request.",
					l.Team, GPUCount(q.GPUs[l.Class], l.Class), holds, more, room).WithExample(ex)
			}
			ex := QuotaRequestExample(u.GPUs[l.Class]+l.GPUs-q.GPUs[l.Class], l.Class, id.otherTeam(l.Team))
			if q.GPUs[l.Class] == 0 {
				// Not "may hold 0 … and holds 0": the team has no quota of the class at all.
				if u.GPUs[l.Class] == 0 {
					return Errorf(EFORBIDDEN, "team %s has no quota of %s GPUs; ask your budget owner for one with /gpu quota request.", l.Team, l.Class).WithExample(ex)
				}
				return Errorf(EFORBIDDEN, "team %s has no quota of %s GPUs, and holds %s approved beyond it; ask your budget owner for a quota with /gpu quota request.", l.Team, l.Class, holds).WithExample(ex)
			}
			return Errorf(EFORBIDDEN, "team %s may hold %s at once and holds %s, so %s would go over its quota; ask your budget owner with /gpu quota request.", l.Team, GPUCount(q.GPUs[l.Class], l.Class), holds, more).
				WithExample(ex)
		}
		if err := s.weeklyHoursLeft(l.Team, id.otherTeam(l.Team), l.Class, u, q, wp, now, l.Duration, "this request", func(held *QuotaHeld) (string, string, bool) {
			return s.weekFitRequest(held, l, req.asked, id.otherTeam(l.Team))
		}); err != nil {
			return err
		}
		// Plan first, then write the lease once in the state it reaches, with every step audited.
		l.State = Queued
		l.Reason = reasonWaitingFree
		path, err := s.planWith(l, func() (Pool, []Holding, error) {
			p, own := s.poolFrom(l.Class, classes, held)
			return p, own, nil
		})
		if err != nil {
			return err
		}
		events := []*Event{{At: now, Actor: req.User, To: Queued, Reason: "granted without approval"}}
		for _, st := range path {
			r := "granted without approval"
			if st == Active {
				r = "workspace ready"
			}
			events = append(events, &Event{At: now, Actor: SystemActor, From: l.State, To: st, Reason: r})
			l.State, l.Reason = st, r
		}
		instant := len(path) == 2
		if instant { // an instant backend: started before it is written, so one insert holds it all
			if err := s.startInstantly(ctx, l); err != nil {
				return err
			}
		}
		if err := tx.CreateLeaseWithEvents(ctx, l, events); err != nil {
			if instant {
				// Not written (the same request key was written first, by a second press of the
				// same button): the workspace started for it belongs to no lease. Stopped here,
				// under the admission lock, before another lease can be placed on its GPUs.
				if serr := s.Backend.Stop(ctx, l); serr != nil {
					s.log().Error("stop a workspace whose lease was not written", "err", serr)
				}
			}
			return err
		}
		if len(path) == 0 {
			if err := s.stage(ctx, tx, &b, Notice{Kind: NoticeQueued, To: []string{l.User}, Lease: l}); err != nil {
				return err
			}
		}
		return nil
	}
	err = s.withRules(ctx, rc, func() error { return s.Store.Update(ctx, s.admissionLocks(req.Team, req.Class), admit) })
	if err != nil {
		var de *Error
		if errors.As(err, &de) && de.Code == ECONFLICT && req.RequestKey != "" {
			if prev, err2 := s.leaseByKey(ctx, req.RequestKey); err2 == nil {
				return s.deliveredBefore(prev), nil
			}
		}
		return nil, err
	}
	s.send(ctx, &b)
	if out.Lease.State == Active || out.Lease.State == Provisioning {
		s.rememberWait(ctx, out.Lease)
	}
	if out.Lease.State == Active {
		s.tellWaits(out.Lease, "", Active)
	}
	if out.Lease.State == Provisioning {
		if err := s.start(ctx, out.Lease, false); err != nil {
			return out, err
		}
	}
	if out.Lease.State == Queued {
		if out.Wait, err = s.LeaseWait(ctx, out.Lease); err != nil {
			s.log().Error("predict the wait of a queued lease", "lease", out.Lease.ID, "err", err)
			out.WaitErr = err
		}
	}
	return out, nil
}

// deliveredBefore is the outcome of a request delivered again (its request key seen before): the
// lease its first delivery made, and, while that waits for a decision, the rules it met and who
// decides, as the first answer named them.
func (s *Service) deliveredBefore(prev *Lease) *Outcome {
	out := &Outcome{Lease: prev, Duplicate: true}
	if prev.State == PendingApproval {
		out.Matches, out.Approvers = s.waitingMatches(prev), s.Deciders(prev.Team, prev.User)
	}
	return out
}

func ruleNames(ms []policy.Match) string {
	n := make([]string, len(ms))
	for i, m := range ms {
		n[i] = m.Rule
	}
	return strings.Join(n, ",")
}

func (s *Service) ruleInput(id Identity, c *policy.Class, u Usage, q policy.Quota, l *Lease, kind string, d time.Duration) policy.RuleInput {
	rt, rc := s.Policy.RuleInputFor(l.Team, c.Name)
	for k, v := range q.GPUs {
		rt.Quota.GPUs[k] = int64(v)
	}
	rt.Quota.GPUHoursPerWeek = policy.WeeklyLimit(q.GPUHoursPerWeek)
	if len(rt.DataClasses) == 0 {
		rt.DataClasses = s.DataClassesOf(l.Team)
	}
	// Rules see groups with A to Z in lower case, as groups are compared everywhere else: a
	// rule's 'contractors' in user.groups holds for the IdP's Contractors too.
	groups := make([]string, len(id.Groups))
	for i, g := range id.Groups {
		groups[i] = policy.NameKey(g)
	}
	return policy.RuleInput{
		Request: policy.RuleRequest{Kind: kind, GPUs: int64(l.GPUs), Class: c.Name, Duration: d, GPUHours: GPUHours(l.GPUs, d),
			Reservation: l.Exclusive, DataClass: l.DataClass, Template: l.Template},
		User:  policy.RuleUser{Name: id.User, Groups: groups},
		Team:  rt,
		Usage: policy.RuleUsage{GPUsInUse: int64(u.GPUs[c.Name]), GPUsTotal: int64(sumMap(u.GPUs)), GPUHoursWeek: u.GPUHoursWeek},
		Class: rc,
	}
}

func sumMap(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func (s *Service) leaseByKey(ctx context.Context, key string) (*Lease, error) {
	var l *Lease
	err := s.Store.View(ctx, func(tx Tx) error {
		var err error
		l, err = tx.LeaseByRequestKey(ctx, key)
		return err
	})
	return l, err
}

// checkShape checks what any request or quote must be, whoever asks: a class of the catalog, a
// number of GPUs the cluster could ever grant, and a duration between a minute and 30 days. These
// sentences are written here once.
func (s *Service) checkShape(class string, gpus int, d time.Duration) (*policy.Class, error) {
	c, ok := s.Policy.Class(class)
	if !ok {
		return nil, Errorf(EINVALID, "there is no class %s; the catalog has %s.", policy.Quoted(class, 40), policy.FewNames(class, s.Policy.ClassNames(), "and"))
	}
	if gpus < 1 || gpus > MaxRequestGPUs {
		return nil, Errorf(EINVALID, "%d is not a number of GPUs you can ask for.", gpus)
	}
	if capa := s.capacityOf(c.Name); capa > 0 && gpus > capa {
		return nil, Errorf(EINVALID, "the cluster has only %s, so %d cannot be granted.", GPUCount(capa, c.Name), gpus)
	}
	if d < time.Minute || d > MaxRequestDuration {
		return nil, Errorf(EINVALID, "a lease lasts between 1 minute and 30 days, not %s.", DurationText(d))
	}
	return c, nil
}

// DurationText writes a duration as people read it: 45s, 30m, 4h, 2d3h.
func DurationText(d time.Duration) string {
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	return policy.FormatDuration(d)
}

// weeklyHoursLeft refuses what would take team past a week's GPU-hours (wp, the first week it
// passes, of the request's hours from from for d; nil: none) when no published rule sent it to a
// budget owner: the quota still binds. what names it ("this request"), on class. fit (nil: none)
// is what fits every week's GPU-hours left instead, said ("ask for 3h at most") and as the
// example, with the quota request as the other way; where nothing fits, the example is the
// quota request.
func (s *Service) weeklyHoursLeft(team, named, class string, u Usage, q policy.Quota, wp *WeekPast, from time.Time, d time.Duration, what string, fit func(*QuotaHeld) (ask, example string, ok bool)) error {
	if wp == nil {
		return nil
	}
	left := fmt.Sprintf("Team %s has %s of its %s GPU-hours left this week, and %s needs %s", team,
		FormatHours(math.Max(0, wp.Limit-wp.Used)), FormatHours(wp.Limit), what, FormatHours(wp.Asked))
	if !wp.Current || wp.Asked < wp.Total-1e-9 {
		// Only part of it falls in the week it passes: which part, of how much.
		left = fmt.Sprintf("Team %s has %s of its %s GPU-hours left %s, and %s of the %s GPU-hours %s needs fall in it", team,
			FormatHours(math.Max(0, wp.Limit-wp.Used)), FormatHours(wp.Limit), wp.Name, FormatHours(wp.Asked), FormatHours(wp.Total), what)
	}
	if fit != nil {
		held := &QuotaHeld{Team: team, Class: class, WeekOnly: true}
		held.setWeek(wp, s.WeekRooms(u, q, from, d), from)
		if ask, ex, ok := fit(held); ok {
			return Errorf(EFORBIDDEN, "%s; ask for %s at most, or ask your budget owner for more with /gpu quota request.", left, ask).WithExample(ex)
		}
	}
	return Errorf(EFORBIDDEN, "%s; ask your budget owner with /gpu quota request.", left).
		WithExample(QuotaRequestExample(weekIncrease(wp), class, named))
}

// setWeek sets what q says of the week wp that a request passes, and the weeks it reaches from
// from (rooms), which Within fits it to.
func (q *QuotaHeld) setWeek(wp *WeekPast, rooms []WeekRoom, from time.Time) {
	q.Week, q.WeekLimit, q.WeekAsked = wp.Used, wp.Limit, wp.Asked
	if !wp.Current {
		q.WeekName = wp.Name
	}
	q.Rooms, q.WeekFrom = rooms, from
}

// weekFitRequest is what of l (asked GPUs as typed where they were rounded up to whole nodes; 0:
// l.GPUs) fits the week's GPU-hours held leaves: said ("3h", "1 GPU for 20m") and as the request
// to type (for team named, where not ""); false where nothing does. The quota at once is not
// passed: fewer GPUs count no more.
func (s *Service) weekFitRequest(held *QuotaHeld, l *Lease, asked int, named string) (string, string, bool) {
	gpus := l.GPUs
	if asked > 0 {
		gpus = asked
	}
	n, d, ok := s.WithinQuota(held, l.Class, gpus, l.Duration, l.Exclusive, nil)
	if !ok {
		return "", "", false
	}
	ask := policy.FormatDuration(d)
	if n != gpus {
		ask = gpusWord(n) + " for " + ask
	}
	ex := fmt.Sprintf("/gpu request %d %s for %s", n, l.Class, policy.FormatDuration(d))
	if l.Template != "" {
		ex += " template " + l.Template
	}
	if named != "" {
		ex += " team " + named
	}
	if l.Exclusive {
		ex += " exclusive"
	}
	return ask, ex, true
}

// weekIncrease is how many more GPUs a quota increase needs for the request past the week wp to
// fit every week it passes (WeekPast.Increase).
func weekIncrease(wp *WeekPast) int { return max(1, wp.Increase) }

// undecidedTries bounds how many requests undecidedExample tries on the rules.
const undecidedTries = 24

// undecidedExample is, for l, a request that needs a decision nobody can make, the request
// like it that no exception rule sends to a budget owner and the team's quota (u, q) takes now,
// as typed: fewer GPUs, a shorter time, or the team's own first data class, in that order; else
// /gpu policy, which says what the rules send to a budget owner. A template's request is left to
// the command's own example ("").
func (s *Service) undecidedExample(ctx context.Context, id Identity, c *policy.Class, u Usage, q policy.Quota, l *Lease) string {
	if l.Template != "" {
		return ""
	}
	asked := l.AskedGPUs
	if asked <= 0 {
		asked = l.GPUs
	}
	durations := []time.Duration{l.Duration}
	for _, d := range []time.Duration{c.MaxDuration.Duration, 4 * time.Hour, time.Hour, 30 * time.Minute} {
		if d > 0 && d < durations[len(durations)-1] {
			durations = append(durations, d)
		}
	}
	data := []string{l.DataClass}
	if own := s.DataClassesOf(l.Team); len(own) > 0 && !slices.Contains(own, l.DataClass) {
		data = append(data, own[0])
	}
	tries := 0
	for _, dc := range data {
		for n := asked; n >= 1; n-- {
			counted := s.countedGPUs(c.Name, n, l.Exclusive)
			if u.GPUs[c.Name]+counted > q.GPUs[c.Name] {
				continue // past the GPUs at once: refused without a rule
			}
			for _, d := range durations {
				try := *l
				try.GPUs, try.Duration, try.DataClass = counted, d, dc
				in := s.ruleInput(id, c, u, q, &try, "lease", d)
				if s.pastWeeks(u, q, s.usageAt(u), counted, d) != nil {
					continue // past the week's GPU-hours: refused without a rule
				}
				if tries++; tries > undecidedTries {
					return "/gpu policy"
				}
				if len(s.Policy.Evaluate(ctx, in)) > 0 {
					continue
				}
				ex := fmt.Sprintf("/gpu request %d %s for %s", n, c.Name, policy.FormatDuration(d))
				if l.Exclusive {
					ex += " exclusive"
				}
				if t := id.otherTeam(l.Team); t != "" {
					ex += " team " + t
				}
				if dc != l.DataClass {
					ex += " data " + dc
				}
				return ex
			}
		}
	}
	return "/gpu policy"
}

// QuotaRequestExample is the quota request for n more GPUs of class, as a refusal for want of
// quota shows it; for team when that is not empty (the asker's other team: a quota request that
// names none is for their first).
func QuotaRequestExample(n int, class, team string) string {
	if team != "" {
		return fmt.Sprintf("/gpu quota request +%d %s team %s because a deadline", max(1, n), class, team)
	}
	return fmt.Sprintf("/gpu quota request +%d %s because a deadline", max(1, n), class)
}

// otherTeam is team when it is not the first of id's teams, the one a command that names no team
// is for; empty otherwise (and for no identity).
func (id *Identity) otherTeam(team string) string {
	if id == nil || len(id.Teams) == 0 || id.Teams[0] == team {
		return ""
	}
	return team
}

// QuotaLimit names the note added to the rules of an exception that would also take its team past
// its quota, so that the budget owner who approves it knows that too.
const QuotaLimit = "quota"

// withQuotaNote adds the QuotaLimit note to the rules an exception met when it would also take
// team past its quota (gpus more of class at once, or a week's GPU-hours, wp), unless one of
// those rules is about the quota already. Without rules there is nothing to add: the quota binds.
func (s *Service) withQuotaNote(ms []policy.Match, team, class string, u Usage, q policy.Quota, gpus int, wp *WeekPast) []policy.Match {
	if len(ms) == 0 {
		return ms
	}
	for _, m := range ms {
		if s.aboutQuota(m.Rule) {
			return ms
		}
	}
	past := pastQuota(team, class, u, q, gpus, wp)
	if past == "" {
		return ms
	}
	return append(slices.Clone(ms), policy.Match{Rule: QuotaLimit, Why: "It would also take " + past})
}

// pastQuota says how gpus more of class at once, or a week's GPU-hours (wp, the first week
// passed; nil: none), take team past its quota, naming each limit passed ("team vision past its
// quota, to 5 of its 4 train GPUs at once and to 130 of its 100 GPU-hours this week"); empty when
// they do not.
func pastQuota(team, class string, u Usage, q policy.Quota, gpus int, wp *WeekPast) string {
	var past []string
	if gpus > 0 && u.GPUs[class]+gpus > q.GPUs[class] {
		past = append(past, fmt.Sprintf("to %d of its %s at once", u.GPUs[class]+gpus, GPUCount(q.GPUs[class], class)))
	}
	if wp != nil {
		past = append(past, fmt.Sprintf("to %s of its %s GPU-hours %s", FormatHours(wp.Used+wp.Asked), FormatHours(wp.Limit), wp.Name))
	}
	if len(past) == 0 {
		return ""
	}
	return fmt.Sprintf("team %s past its quota, %s", team, strings.Join(past, " and "))
}

// pastWeek reports whether hours more GPU-hours take a team that has used or committed
// u.GPUHoursWeek past its weekly quota q this week (never where it has no weekly limit).
func pastWeek(u Usage, q policy.Quota, hours float64) bool {
	return q.GPUHoursPerWeek > 0 && u.GPUHoursWeek+hours > q.GPUHoursPerWeek
}

// usageAt is when u was read, else now: where a new lease's hours start.
func (s *Service) usageAt(u Usage) time.Time {
	if !u.at.IsZero() {
		return u.at
	}
	return s.Clock.Now()
}

// extendsFrom is when an extension of l would start, as the quota counts it: at l's end, for a
// lease whose job has not started, its length from now.
func extendsFrom(l *Lease, now time.Time) time.Time {
	switch {
	case l.StartedAt.IsZero():
		return now.Add(l.Duration)
	case l.ExpiresAt.After(now):
		return l.ExpiresAt
	}
	return now
}

// aboutQuota reports whether the exception rule named rule is about the quota: the QuotaLimit
// note, or a published rule whose condition reads the quota.
func (s *Service) aboutQuota(rule string) bool {
	if rule == QuotaLimit {
		return true
	}
	for _, r := range s.Policy.Exceptions {
		if r.Name == rule && strings.Contains(r.When, "quota") {
			return true
		}
	}
	return false
}
