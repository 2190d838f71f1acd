package qm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/policy"
)

// Defaults applied when a request leaves something out.
const (
	DefaultGPUs     = 1
	DefaultDuration = 4 * time.Hour
	// MaxRequestGPUs bounds any request; larger numbers are typos, not exceptions.
	MaxRequestGPUs = 4096
	// MaxRequestDuration bounds any request.
	MaxRequestDuration = 30 * 24 * time.Hour
	// TelemetryStale is how old a telemetry report may be before the lease counts as unobserved.
	TelemetryStale = 10 * time.Minute
)

// Service is the lease service: admission, lifecycle and approvals.
type Service struct {
	Policy    *policy.Policy
	Store     Store
	Backend   Backend
	Clock     Clock
	Notifier  Notifier
	Telemetry Telemetry
	Directory Directory
	Logger    *slog.Logger
	// Waits predicts queue waits; nil falls back to the known expiries of running leases.
	Waits WaitPredictor
}

func (s *Service) log() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

func (s *Service) notify(ctx context.Context, ns []Notice) {
	if s.Notifier == nil {
		return
	}
	for _, n := range ns {
		s.Notifier.Notify(ctx, n)
	}
}

// LeaseRequest is what a user asks for.
type LeaseRequest struct {
	User      string
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
}

// Outcome is what became of a request.
type Outcome struct {
	Lease     *Lease
	Matches   []policy.Match // exception rules that stopped it
	Approvers []string       // who will decide
	Duplicate bool           // an earlier delivery of the same request made this lease
	Wait      WaitEstimate   // when queued
}

// WaitEstimate is a predicted queue wait.
type WaitEstimate struct {
	Median time.Duration
	P90    time.Duration
	// Unknown is set when the service cannot tell: the scheduler places leases and reports no capacity.
	Unknown bool
	// MayNotStart is set when too many similar requests never started for a bound to be worth
	// giving; Horizon is then the longest wait the predictor has seen.
	MayNotStart bool
	Horizon     time.Duration
}

// Identity is a user resolved against the directory and the policy.
type Identity struct {
	User   string
	Groups []string
	Teams  []string
}

// Resolve looks a user up; a user who is not in the directory is refused with a sentence saying so.
func (s *Service) Resolve(ctx context.Context, user string) (Identity, error) {
	groups, ok := s.Directory.Groups(ctx, user)
	if !ok {
		return Identity{}, Errorf(EFORBIDDEN, "%s is not in the directory, so Quartermaster does not know your team; ask a platform admin to add you (or use /gpu login where SSO is set up).", user)
	}
	id := Identity{User: user, Groups: groups}
	for _, t := range s.Policy.TeamsOf(groups) {
		id.Teams = append(id.Teams, t.Name)
	}
	if len(id.Teams) == 0 && len(groups) > 0 {
		// A team not listed in the policy gets the default quota; it is named after the first group,
		// unless a listed team has that name: a group is never taken for another team's name.
		if name := strings.ToLower(groups[0]); !s.listedTeam(name) {
			id.Teams = []string{name}
		}
	}
	return id, nil
}

// teamFor picks the team a request is charged to.
func (s *Service) teamFor(id Identity, asked string) (string, error) {
	if asked == "" {
		if len(id.Teams) == 0 {
			return "", Errorf(EFORBIDDEN, "%s belongs to no team; ask a platform admin to add your group to a team in the policy.", id.User)
		}
		return id.Teams[0], nil
	}
	for _, t := range id.Teams {
		if strings.EqualFold(t, asked) {
			return t, nil
		}
	}
	if _, ok := s.Policy.Team(asked); !ok {
		return "", Errorf(EINVALID, "there is no team %q; your teams: %s.", asked, strings.Join(id.Teams, ", "))
	}
	return "", Errorf(EFORBIDDEN, "you are not a member of team %s; your teams: %s.", asked, strings.Join(id.Teams, ", "))
}

// dataClassesOf is a team's cleared data classes; a team the policy does not list is cleared for public data.
func (s *Service) dataClassesOf(team string) []string {
	if t, ok := s.Policy.Team(team); ok {
		return t.DataClasses
	}
	return []string{"public"}
}

// Normalize fills a request's defaults and checks what can be checked without the database.
func (s *Service) Normalize(ctx context.Context, req *LeaseRequest) (Identity, *policy.Class, error) {
	id, err := s.Resolve(ctx, req.User)
	if err != nil {
		return id, nil, err
	}
	if req.Class == "" {
		req.Class = s.Policy.Classes[0].Name
	}
	c, ok := s.Policy.Class(req.Class)
	if !ok {
		return id, nil, Errorf(EINVALID, "there is no class %q; the catalog has %s.", req.Class, strings.Join(s.Policy.ClassNames(), ", "))
	}
	req.Class = c.Name
	if req.GPUs == 0 {
		req.GPUs = DefaultGPUs
	}
	if req.GPUs < 0 || req.GPUs > MaxRequestGPUs {
		return id, nil, Errorf(EINVALID, "%d is not a number of GPUs you can ask for.", req.GPUs)
	}
	if capa := s.capacityOf(c.Name); capa > 0 && req.GPUs > capa {
		return id, nil, Errorf(EINVALID, "the cluster has only %d %s GPUs, so %d cannot be granted.", capa, c.Name, req.GPUs)
	}
	if req.Duration == 0 {
		req.Duration = min(DefaultDuration, c.MaxDuration.Duration)
	}
	if req.Duration < time.Minute || req.Duration > MaxRequestDuration {
		return id, nil, Errorf(EINVALID, "a lease lasts between 1 minute and 30 days, not %s.", policy.FormatDuration(req.Duration))
	}
	team, err := s.teamFor(id, req.Team)
	if err != nil {
		return id, nil, err
	}
	req.Team = team
	if req.DataClass == "" {
		if dc := s.dataClassesOf(team); len(dc) > 0 {
			req.DataClass = dc[0]
		}
	}
	req.DataClass = strings.ToLower(req.DataClass)
	return id, c, nil
}

// capacityOf is how many GPUs of a class the cluster has, or 0 when the backend does not say.
func (s *Service) capacityOf(class string) int {
	n := 0
	for _, nd := range s.Backend.Inventory() {
		if nd.Class == class {
			n += nd.GPUs
		}
	}
	return n
}

func (s *Service) totalCapacity() int {
	n := 0
	for _, nd := range s.Backend.Inventory() {
		n += nd.GPUs
	}
	return n
}

// admissionLocks are the locks every admission that touches a class and team takes.
func (s *Service) admissionLocks(team, class string) []string {
	locks := []string{"class:" + class, "team:" + team}
	if c, ok := s.Policy.Class(class); ok && c.CapacityShare > 0 {
		locks = append(locks, "shared-capacity")
	}
	return locks
}

// Usage is what a team holds and has used.
type Usage struct {
	GPUs         map[string]int // live GPUs per class
	GPUHoursWeek float64        // used and committed this week
}

// WeekStart is the start (Monday 00:00, policy time zone) of the week holding t.
func (s *Service) WeekStart(t time.Time) time.Time {
	t = t.In(s.Policy.Location)
	d := (int(t.Weekday()) + 6) % 7
	y, m, day := t.Date()
	return time.Date(y, m, day-d, 0, 0, 0, 0, s.Policy.Location)
}

// usage computes a team's usage inside a transaction, and its quota with approved increases.
// One query reads both: the team's leases of every kind that were open this week.
func (s *Service) usage(ctx context.Context, tx Tx, team string, now time.Time) (Usage, policy.Quota, error) {
	ws := s.WeekStart(now)
	leases, err := tx.ListLeases(ctx, LeaseFilter{Kind: AnyKind, Team: team, EndedAfter: ws, Slim: true})
	if err != nil {
		return Usage{}, policy.Quota{}, err
	}
	u := Usage{GPUs: map[string]int{}}
	var grants []*Lease
	for _, l := range leases {
		switch l.Kind {
		case KindWorkspace:
			if l.State.Live() {
				u.GPUs[l.Class] += l.GPUs
			}
			u.GPUHoursWeek += committedHours(l, ws, now)
		case KindQuota:
			if l.State == Active {
				grants = append(grants, l)
			}
		}
	}
	return u, s.withGrants(team, grants, now), nil
}

// committedHours is the GPU-hours a lease used or holds inside the week starting ws.
func committedHours(l *Lease, ws, now time.Time) float64 {
	we := ws.AddDate(0, 0, 7)
	switch {
	case l.State == PendingApproval, l.State == Denied, l.State == Cancelled && l.StartedAt.IsZero():
		return 0
	case l.State.Ended():
		if l.StartedAt.IsZero() {
			return 0
		}
		return overlapHours(l.StartedAt, l.EndedAt, ws, we) * float64(l.GPUs)
	case l.StartedAt.IsZero():
		return GPUHours(l.GPUs, l.Duration)
	default:
		return overlapHours(l.StartedAt, l.ExpiresAt, ws, we) * float64(l.GPUs)
	}
}

func overlapHours(a, b, ws, we time.Time) float64 {
	if a.Before(ws) {
		a = ws
	}
	if b.After(we) {
		b = we
	}
	if !b.After(a) {
		return 0
	}
	return b.Sub(a).Hours()
}

// Request admits, queues or routes a lease request. Admission is atomic: the quota and capacity
// checks and the insert happen under the class, team and shared-capacity locks.
func (s *Service) Request(ctx context.Context, req LeaseRequest) (*Outcome, error) {
	id, c, err := s.Normalize(ctx, &req)
	if err != nil {
		return nil, err
	}
	if req.RequestKey != "" {
		if prev, err := s.leaseByKey(ctx, req.RequestKey); err == nil {
			return &Outcome{Lease: prev, Duplicate: true}, nil
		}
	}
	var out *Outcome
	var notices []Notice
	err = s.Store.Update(ctx, s.admissionLocks(req.Team, req.Class), func(tx Tx) error {
		notices = nil
		now := s.Clock.Now()
		u, q, err := s.usage(ctx, tx, req.Team, now)
		if err != nil {
			return err
		}
		l := &Lease{User: req.User, Team: req.Team, Class: req.Class, GPUs: req.GPUs, Duration: req.Duration,
			Template: req.Template, Params: req.Params, DataClass: req.DataClass, Exclusive: req.Exclusive, RequestKey: req.RequestKey, CreatedAt: now}
		in := s.ruleInput(id, c, u, q, l, "lease", req.Duration)
		matches := s.Policy.Evaluate(in)
		out = &Outcome{Lease: l, Matches: matches}
		if len(matches) > 0 {
			l.State = PendingApproval
			l.Rules = ruleNames(matches)
			l.Reason = matches[0].Why
			if err := s.create(ctx, tx, l, req.User, l.Reason); err != nil {
				return err
			}
			out.Approvers = s.Policy.Approvers(l.Team)
			notices = append(notices, Notice{Kind: NoticeApprovalRequest, To: s.approvalAudience(l.Team), Lease: l, Matches: matches, Approvers: out.Approvers})
			return nil
		}
		// No published rule stopped it; the quota still binds.
		if u.GPUs[l.Class]+l.GPUs > q.GPUs[l.Class] {
			return Errorf(EFORBIDDEN, "team %s may hold %d %s GPUs at once and holds %d, so %d more would go over its quota; ask your budget owner with /gpu quota request.", l.Team, q.GPUs[l.Class], l.Class, u.GPUs[l.Class], l.GPUs)
		}
		if q.GPUHoursPerWeek > 0 && u.GPUHoursWeek+in.Request.GPUHours > q.GPUHoursPerWeek {
			return Errorf(EFORBIDDEN, "team %s has %.0f of its %.0f GPU-hours left this week, and this request needs %.1f.", l.Team, math.Max(0, q.GPUHoursPerWeek-u.GPUHoursWeek), q.GPUHoursPerWeek, in.Request.GPUHours)
		}
		// Plan first, then write the lease once in the state it reaches, with every step audited.
		l.State = Queued
		l.Reason = "waiting for free GPUs"
		path, err := s.plan(ctx, tx, l)
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
		if len(path) == 2 { // an instant backend: started before it is written, so one insert holds it all
			if err := s.startInstantly(ctx, l); err != nil {
				return err
			}
		}
		if err := tx.CreateLease(ctx, l); err != nil {
			return err
		}
		for _, e := range events {
			e.Lease = l.ID
		}
		if err := tx.AddEvents(ctx, events); err != nil {
			return err
		}
		if len(path) == 0 {
			notices = append(notices, Notice{Kind: NoticeQueued, To: []string{l.User}, Lease: l})
		}
		return nil
	})
	if err != nil {
		var de *Error
		if errors.As(err, &de) && de.Code == ECONFLICT && req.RequestKey != "" {
			if prev, err2 := s.leaseByKey(ctx, req.RequestKey); err2 == nil {
				return &Outcome{Lease: prev, Duplicate: true}, nil
			}
		}
		return nil, err
	}
	s.notify(ctx, notices)
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
		out.Wait = s.predictWait(ctx, out.Lease.Class, out.Lease.GPUs, out.Lease.ID)
	}
	return out, nil
}

func sumHeld(hs []Holding) int {
	n := 0
	for _, h := range hs {
		n += h.GPUs
	}
	return n
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
	rt.Quota.GPUHoursPerWeek = q.GPUHoursPerWeek
	if _, listed := s.Policy.Team(l.Team); !listed {
		rt.DataClasses = s.dataClassesOf(l.Team)
	}
	groups := id.Groups
	if groups == nil {
		groups = []string{}
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

func (s *Service) approvalAudience(team string) []string {
	to := s.Policy.Approvers(team)
	if t, ok := s.Policy.Team(team); ok && t.Channel != "" {
		to = append(to, t.Channel)
	}
	return to
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

func (s *Service) create(ctx context.Context, tx Tx, l *Lease, actor, reason string) error {
	if err := tx.CreateLease(ctx, l); err != nil {
		return err
	}
	return tx.AddEvent(ctx, &Event{Lease: l.ID, At: l.CreatedAt, Actor: actor, To: l.State, Reason: reason})
}

// transition moves a lease to a new state with an audit event, refusing if someone else moved it first.
func (s *Service) transition(ctx context.Context, tx Tx, l *Lease, to State, actor, reason string) error {
	from := l.State
	now := s.Clock.Now()
	l.State = to
	l.Reason = reason
	if to.Ended() && l.EndedAt.IsZero() {
		l.EndedAt = now
	}
	if err := tx.UpdateLease(ctx, l, from); err != nil {
		l.State = from
		return err
	}
	s.tellWaits(l, from, to)
	return tx.AddEvent(ctx, &Event{Lease: l.ID, At: now, Actor: actor, From: from, To: to, Reason: reason})
}

// rememberWait has the wait predictor estimate a workspace lease's wait before it starts, as if
// it were queued, and keep the estimate with the lease: when the lease starts, the predictor
// learns from its wait, however short. Without it the predictor would learn only from leases
// that queued, and expect a wait on a free cluster. Call it outside any transaction.
func (s *Service) rememberWait(ctx context.Context, l *Lease) {
	if s.Waits == nil || l.Kind != KindWorkspace {
		return
	}
	s.predictWithModel(ctx, WaitRequest{Lease: l.ID, Class: l.Class, User: l.User, Team: l.Team, GPUs: l.GPUs, Duration: l.Duration})
}

// tellWaits tells the wait predictor what a transition means for it: a start after waiting, the
// end of a run, or a request that left the queue.
func (s *Service) tellWaits(l *Lease, from, to State) {
	if s.Waits == nil || l.Kind != KindWorkspace {
		return
	}
	queuedAt := l.CreatedAt
	if !l.DecidedAt.IsZero() {
		queuedAt = l.DecidedAt
	}
	switch {
	case to == Active && (from == Queued || from == Provisioning || from == ""):
		s.Waits.Started(l, queuedAt)
	case from.Running() && to.Ended():
		s.Waits.Ended(l)
	case from == Queued && to.Ended():
		s.Waits.Left(l, queuedAt)
	}
}

// warmHistory is how far back WarmWaits reads ended leases.
const warmHistory = 30 * 24 * time.Hour

// WarmWaits, after a start, tells the wait predictor how long the leases that ended in the last
// 30 days ran (so that it expects running leases to end as early as their owners' used to) and
// which leases are running now. Leases that failed are left out: their run time says nothing
// of when their owners let go.
func (s *Service) WarmWaits(ctx context.Context) error {
	if s.Waits == nil {
		return nil
	}
	ended, err := s.List(ctx, LeaseFilter{States: []State{Released, Expired, Reclaimed},
		EndedAfter: s.Clock.Now().Add(-warmHistory), Slim: true})
	if err != nil {
		return err
	}
	slices.SortStableFunc(ended, func(a, b *Lease) int { return a.EndedAt.Compare(b.EndedAt) })
	for _, l := range ended {
		if !l.StartedAt.IsZero() && !l.EndedAt.IsZero() {
			s.Waits.Ended(l)
		}
	}
	running, err := s.List(ctx, LeaseFilter{States: []State{Active, IdleWarned}, Slim: true})
	if err != nil {
		return err
	}
	for _, l := range running {
		s.Waits.Started(l, time.Time{})
	}
	return nil
}

// tryPlace moves a queued lease on when its GPUs are free now: to provisioning, or straight to
// active on an instant backend. It must run under the lease's admission locks.
func (s *Service) tryPlace(ctx context.Context, tx Tx, l *Lease, reason string) (bool, error) {
	path, err := s.plan(ctx, tx, l)
	if err == nil && len(path) == 2 {
		err = s.startInstantly(ctx, l)
	}
	if err != nil || len(path) == 0 {
		return false, err
	}
	for _, st := range path {
		r := reason
		if st == Active {
			r = "workspace ready"
		}
		if err := s.transition(ctx, tx, l, st, SystemActor, r); err != nil {
			return true, err
		}
	}
	return true, nil
}

// plan chooses GPUs for a lease that waits. It changes l in memory only and returns the states l
// moves through: none when it must wait on, provisioning, or provisioning and active when the
// backend starts instantly (the caller then calls startInstantly, which needs no lease id).
func (s *Service) plan(ctx context.Context, tx Tx, l *Lease) ([]State, error) {
	inv := s.Backend.Inventory()
	if inv == nil { // the scheduler places: hand it over
		return []State{Provisioning}, nil
	}
	classes := []string{l.Class}
	c, _ := s.Policy.Class(l.Class)
	shared := c != nil && c.CapacityShare > 0
	if shared {
		for _, name := range s.Policy.SharedClasses() {
			if name != l.Class {
				classes = append(classes, name)
			}
		}
	}
	held, err := tx.Held(ctx, classes)
	if err != nil {
		return nil, err
	}
	var running []Holding
	for _, h := range held {
		if h.Class == l.Class {
			running = append(running, h)
		}
	}
	if shared {
		limit := int(math.Floor(s.Policy.CapacityShare() * float64(s.totalCapacity())))
		limit = max(limit, 1)
		inUse := sumHeld(held)
		if inUse+l.GPUs > limit {
			l.Reason = fmt.Sprintf("waiting: shared classes may hold %d GPUs together and hold %d", limit, inUse)
			return nil, nil
		}
	}
	p, ok := place(inv, running, l.Class, l.GPUs)
	if !ok {
		return nil, nil
	}
	l.Node = strings.Join(p.Nodes, ",")
	l.GPUIndex = p.GPUs
	if ib, ok := s.Backend.(InstantBackend); ok && ib.StartsInstantly() {
		return []State{Provisioning, Active}, nil
	}
	return []State{Provisioning}, nil
}

// startInstantly starts a placed lease on an instant backend, in memory.
func (s *Service) startInstantly(ctx context.Context, l *Lease) error {
	st, err := s.Backend.Start(ctx, l)
	if err != nil {
		return err
	}
	now := s.Clock.Now()
	l.Connect, l.Ref = st.Connect, st.Ref
	l.StartedAt, l.ExpiresAt = now, now.Add(l.Duration)
	return nil
}

// start asks the backend to start a provisioning lease and records what it says. The owner is told
// when it becomes active unless tell is false (the request's own reply says so).
func (s *Service) start(ctx context.Context, l *Lease, tell bool) error {
	st, err := s.Backend.Start(ctx, l)
	var notices []Notice
	uerr := s.Store.Update(ctx, nil, func(tx Tx) error {
		notices = nil
		cur, err2 := tx.GetLease(ctx, l.ID)
		if err2 != nil {
			return err2
		}
		if cur.State != Provisioning {
			return nil // released meanwhile
		}
		if err != nil {
			s.log().Error("backend start failed", "lease", l.ID, "err", err)
			if e := s.transition(ctx, tx, cur, Failed, SystemActor, "the workspace could not be started"); e != nil {
				return e
			}
			notices = append(notices, Notice{Kind: NoticeFailed, To: []string{cur.User}, Lease: cur, Reason: cur.Reason})
			*l = *cur
			return nil
		}
		if st.Node != "" {
			cur.Node = st.Node
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
				notices = append(notices, Notice{Kind: NoticeGranted, To: []string{cur.User}, Lease: cur})
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
	s.notify(ctx, notices)
	if err != nil {
		return Errorf(EINTERNAL, "%s could not be started on the cluster; it is marked failed and nothing is charged.", l.ID)
	}
	return nil
}

// Get returns a lease.
func (s *Service) Get(ctx context.Context, id LeaseID) (*Lease, error) {
	var l *Lease
	err := s.Store.View(ctx, func(tx Tx) error {
		var err error
		l, err = tx.GetLease(ctx, id)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(ENOTFOUND, "there is no lease %s.", id)
	}
	return l, err
}

// History is a lease's audit trail.
func (s *Service) History(ctx context.Context, id LeaseID) ([]*Event, error) {
	var ev []*Event
	err := s.Store.View(ctx, func(tx Tx) error {
		var err error
		ev, err = tx.Events(ctx, id)
		return err
	})
	return ev, err
}

// List returns leases matching f.
func (s *Service) List(ctx context.Context, f LeaseFilter) ([]*Lease, error) {
	var ls []*Lease
	err := s.Store.View(ctx, func(tx Tx) error {
		var err error
		ls, err = tx.ListLeases(ctx, f)
		return err
	})
	return ls, err
}

// owned loads a lease the user may act on: their own.
func (s *Service) owned(ctx context.Context, tx Tx, user string, id LeaseID) (*Lease, error) {
	l, err := tx.GetLease(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(ENOTFOUND, "there is no lease %s; /gpu list shows yours.", id)
	}
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(l.User, user) {
		return nil, Errorf(EFORBIDDEN, "%s belongs to %s, not to you; /gpu list shows yours.", id, l.User)
	}
	return l, nil
}

// Release ends a lease now at its owner's request.
func (s *Service) Release(ctx context.Context, user string, id LeaseID) (*Lease, error) {
	return s.end(ctx, user, id, func(l *Lease) (State, string, error) {
		switch {
		case l.State == PendingApproval || l.State == Queued:
			return Cancelled, "cancelled by " + user, nil
		case l.State.Running():
			return Released, "released by " + user, nil
		default:
			return "", "", Errorf(ECONFLICT, "%s has already ended (%s).", l.ID, l.State)
		}
	})
}

func (s *Service) end(ctx context.Context, user string, id LeaseID, decide func(*Lease) (State, string, error)) (*Lease, error) {
	var l *Lease
	var wasRunning bool
	// Ending a lease only lowers usage and frees GPUs, so it takes none of the admission locks:
	// an admission that runs meanwhile sees the lease still held, which errs on the safe side, and
	// the conditional update keeps two enders from both succeeding.
	err := s.Store.Update(ctx, nil, func(tx Tx) error {
		cur, err := s.owned(ctx, tx, user, id)
		if err != nil {
			return err
		}
		to, reason, err := decide(cur)
		if err != nil {
			return err
		}
		wasRunning = cur.State.Running()
		if err := s.transition(ctx, tx, cur, to, user, reason); err != nil {
			return err
		}
		l = cur
		return nil
	})
	if err != nil {
		return nil, err
	}
	if l.Kind != KindWorkspace {
		return l, nil
	}
	if wasRunning || l.Ref != "" {
		if err := s.Backend.Stop(ctx, l); err != nil {
			s.log().Error("backend stop failed", "lease", l.ID, "err", err)
		}
	}
	if wasRunning {
		s.startQueued(ctx, l.Class)
	}
	return l, nil
}

// Keep answers an idle warning: the workspace stays for another idle period.
func (s *Service) Keep(ctx context.Context, user string, id LeaseID) (*Lease, error) {
	var l *Lease
	err := s.Store.Update(ctx, nil, func(tx Tx) error {
		cur, err := s.owned(ctx, tx, user, id)
		if err != nil {
			return err
		}
		if !cur.State.Running() || cur.Kind != KindWorkspace {
			return Errorf(ECONFLICT, "%s is not a running workspace, so there is nothing to keep.", id)
		}
		cur.KeptAt = s.Clock.Now()
		cur.WarnedAt = time.Time{}
		if cur.State == IdleWarned {
			if err := s.transition(ctx, tx, cur, Active, user, "kept by "+user); err != nil {
				return err
			}
		} else if err := tx.UpdateLease(ctx, cur, cur.State); err != nil {
			return err
		}
		l = cur
		return nil
	})
	return l, err
}

// startQueued starts queued leases of a class that now fit, oldest first.
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
		if q.Ref != "" && s.Backend.Inventory() == nil {
			continue // submitted already: it waits in the scheduler's own queue
		}
		var placed bool
		err := s.Store.Update(ctx, s.admissionLocks(q.Team, q.Class), func(tx Tx) error {
			cur, err := tx.GetLease(ctx, q.ID)
			if err != nil || cur.State != Queued {
				return err
			}
			placed, err = s.tryPlace(ctx, tx, cur, "GPUs became free")
			*q = *cur
			return err
		})
		if err != nil {
			s.log().Error("start queued", "lease", q.ID, "err", err)
			continue
		}
		switch {
		case placed && q.State == Provisioning:
			if err := s.start(ctx, q, true); err != nil {
				s.log().Error("start", "lease", q.ID, "err", err)
			}
		case placed && q.State == Active:
			s.notify(ctx, []Notice{{Kind: NoticeGranted, To: []string{q.User}, Lease: q}})
		}
	}
}

// ClassStatus is a catalog line's live figures.
type ClassStatus struct {
	Class    *policy.Class
	Capacity int
	Free     int
	Wait     WaitEstimate
}

// Catalog lists the classes with free GPUs now and the predicted wait for one GPU.
func (s *Service) Catalog(ctx context.Context) ([]ClassStatus, error) {
	running, err := s.List(ctx, LeaseFilter{States: []State{Provisioning, Active, IdleWarned}, Slim: true})
	if err != nil {
		return nil, err
	}
	var out []ClassStatus
	for _, c := range s.Policy.Classes {
		cs := ClassStatus{Class: c, Capacity: s.capacityOf(c.Name)}
		used := 0
		for _, l := range running {
			if l.Class == c.Name {
				used += l.GPUs
			}
		}
		cs.Free = max(0, cs.Capacity-used)
		cs.Wait = s.PredictWait(ctx, c.Name, 1)
		out = append(out, cs)
	}
	return out, nil
}

// Estimate is a request's cost and predicted wait.
type Estimate struct {
	Class *policy.Class
	GPUs  int
	For   time.Duration
	Cost  float64
	Wait  WaitEstimate
}

// EstimateRequest prices a request and predicts its wait, with no side effects.
func (s *Service) EstimateRequest(ctx context.Context, class string, gpus int, d time.Duration) (Estimate, error) {
	c, ok := s.Policy.Class(class)
	if !ok {
		return Estimate{}, Errorf(EINVALID, "there is no class %q; the catalog has %s.", class, strings.Join(s.Policy.ClassNames(), ", "))
	}
	if gpus < 1 || gpus > MaxRequestGPUs {
		return Estimate{}, Errorf(EINVALID, "%d is not a number of GPUs you can ask for.", gpus)
	}
	if d < time.Minute || d > MaxRequestDuration {
		return Estimate{}, Errorf(EINVALID, "a lease lasts between 1 minute and 30 days, not %s.", policy.FormatDuration(d))
	}
	wait := s.PredictWait(ctx, c.Name, gpus)
	if s.Waits != nil {
		wait = s.predictWithModel(ctx, WaitRequest{Class: c.Name, GPUs: gpus, Duration: d})
	}
	return Estimate{Class: c, GPUs: gpus, For: d, Cost: Cost(c, gpus, d), Wait: wait}, nil
}

// Cost is price × GPUs × duration.
func Cost(c *policy.Class, gpus int, d time.Duration) float64 {
	return c.PricePerGPUHour * GPUHours(gpus, d)
}

// PredictWait estimates how long n GPUs of a class would wait now: zero when they are free, else the
// time until enough running leases expire (their known expiries), with the queue ahead served first.
func (s *Service) PredictWait(ctx context.Context, class string, n int) WaitEstimate {
	return s.predictWait(ctx, class, n, 0)
}

// predictWait is PredictWait for a lease already in the queue: only leases queued before it are ahead.
func (s *Service) predictWait(ctx context.Context, class string, n int, self LeaseID) WaitEstimate {
	if s.Waits != nil {
		return s.predictWithModel(ctx, WaitRequest{Lease: self, Class: class, GPUs: n, Duration: DefaultDuration})
	}
	capa := s.capacityOf(class)
	if capa == 0 {
		return WaitEstimate{Unknown: true}
	}
	var live []*Lease
	if err := s.Store.View(ctx, func(tx Tx) error {
		var err error
		live, err = tx.ListLeases(ctx, LeaseFilter{Class: class, States: LiveStates, Slim: true})
		return err
	}); err != nil {
		return WaitEstimate{}
	}
	now := s.Clock.Now()
	free := capa
	type rel struct {
		at time.Time
		n  int
	}
	var rels []rel
	need := n
	for _, l := range live {
		if l.State.Running() {
			free -= l.GPUs
			end := l.ExpiresAt
			if end.IsZero() {
				end = now.Add(l.Duration)
			}
			rels = append(rels, rel{end, l.GPUs})
		} else if self == 0 || l.ID < self {
			need += l.GPUs // the queue ahead
		}
	}
	if free >= need {
		return WaitEstimate{}
	}
	sort.Slice(rels, func(i, j int) bool { return rels[i].at.Before(rels[j].at) })
	for _, r := range rels {
		free += r.n
		if free >= need {
			w := max(0, r.at.Sub(now))
			return WaitEstimate{Median: w, P90: w + w/4}
		}
	}
	w := 24 * time.Hour
	return WaitEstimate{Median: w, P90: 2 * w}
}

// predictWithModel asks the wait predictor, with the queue ahead of the request.
func (s *Service) predictWithModel(ctx context.Context, req WaitRequest) WaitEstimate {
	var queued []*Lease
	if err := s.Store.View(ctx, func(tx Tx) error {
		var err error
		queued, err = tx.ListLeases(ctx, LeaseFilter{Class: req.Class, States: []State{Queued}, Slim: true})
		return err
	}); err != nil {
		return WaitEstimate{Unknown: true}
	}
	var ahead []*Lease
	for _, l := range queued {
		if req.Lease == 0 || l.ID < req.Lease {
			ahead = append(ahead, l)
		} else if l.ID == req.Lease {
			req.User, req.Team, req.GPUs, req.Duration = l.User, l.Team, l.GPUs, l.Duration
		}
	}
	return s.Waits.Predict(s.Clock.Now(), req, ahead, s.capacityOf(req.Class))
}

// TeamUsage is a team's usage now and its quota with approved increases.
func (s *Service) TeamUsage(ctx context.Context, team string) (Usage, policy.Quota, error) {
	var u Usage
	var q policy.Quota
	err := s.Store.View(ctx, func(tx Tx) error {
		var err error
		u, q, err = s.usage(ctx, tx, team, s.Clock.Now())
		return err
	})
	return u, q, err
}
