package qm

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/policy"
)

// Usage is what a team holds and has used.
type Usage struct {
	GPUs         map[string]int // live GPUs per class
	GPUHoursWeek float64        // used and committed this week
	// Waiting is the part of GPUs, per class, of leases whose job does not hold its GPUs now: not
	// started yet, or back in the scheduler's queue (a Kubernetes Job suspended too). They count
	// in the concurrent quota, since the job takes its GPUs when it runs, and are not billed
	// until it does.
	Waiting map[string]int

	// at is when the usage was read from team's leases (zero where it was not), and leases and
	// grants are those leases and approved quota increases, open at or after the start of the
	// week: what a later week holds is counted from them (WeekRooms).
	at             time.Time
	team           string
	leases, grants []*Lease
}

// At is when u was read from its team's leases; zero where it was not.
func (u Usage) At() time.Time { return u.at }

// WeekRoom is one week that a lease reaches, from Start to End (zero: the week of the usage,
// where the usage was not read from the team's leases): Used of its Limit GPU-hours used or
// committed by the team's leases there, as the quota counts them (Limit 0: no weekly limit).
type WeekRoom struct {
	Start, End  time.Time
	Used, Limit float64
}

// hoursIn is the GPU-hours that gpus GPUs from from for d put in week r.
func (r WeekRoom) hoursIn(from time.Time, gpus int, d time.Duration) float64 {
	if r.Start.IsZero() {
		return GPUHours(gpus, d)
	}
	return overlapHours(from, from.Add(d), r.Start, r.End) * float64(gpus)
}

// WeekRooms are the weeks that a lease from from for d reaches, in order: the week of u's reading
// with u's numbers and q's limit, and each later one with the hours that the team's leases commit
// in it (a running lease up to its end, one waiting to run from now for its length) and its
// weekly limit with the approved increases that last into it. Where u was not read from the
// leases, one week, which takes all of the lease.
func (s *Service) WeekRooms(u Usage, q policy.Quota, from time.Time, d time.Duration) []WeekRoom {
	if u.at.IsZero() {
		return []WeekRoom{{Used: u.GPUHoursWeek, Limit: q.GPUHoursPerWeek}}
	}
	if from.Before(u.at) {
		from = u.at
	}
	cur := s.WeekStart(u.at)
	end := from.Add(d)
	var out []WeekRoom
	for ws := s.WeekStart(from); ws.Before(end); ws = s.WeekEnd(ws) {
		r := WeekRoom{Start: ws, End: s.WeekEnd(ws)}
		if !ws.After(cur) {
			r.Used, r.Limit = u.GPUHoursWeek, q.GPUHoursPerWeek
		} else {
			for _, l := range u.leases {
				if l.Kind == KindWorkspace {
					r.Used += committedHours(l, r.Start, r.End, u.at)
				}
			}
			r.Limit = s.withGrantsIn(u.team, u.grants, u.at, ws).GPUHoursPerWeek
		}
		out = append(out, r)
	}
	return out
}

// WeeksAhead are the weeks after the week of u's reading that the team's running and granted
// leases already reach, in order, each as WeekRooms counts it for a request (the GPU-hours the
// leases commit in it, and its limit with the approved increases that last into it); none where
// u was not read from the leases. The leases commit from now on without a gap, so the first week
// they commit nothing to ends them.
func (s *Service) WeeksAhead(u Usage, q policy.Quota) []WeekRoom {
	if u.at.IsZero() {
		return nil
	}
	var out []WeekRoom
	// Ten years of weeks: a bound, should a lease's end be far off.
	for ws, n := s.WeekEnd(s.WeekStart(u.at)), 0; n < 520; ws, n = s.WeekEnd(ws), n+1 {
		rs := s.WeekRooms(u, q, ws, time.Nanosecond)
		if len(rs) != 1 || rs[0].Used <= 1e-9 {
			break
		}
		out = append(out, rs[0])
	}
	return out
}

// WeekName names the week starting at ws to whoever reads u (Usage.At): "this week", "next week
// (from Mon 14 Dec)", "the week from Mon 21 Dec".
func (s *Service) WeekName(ws time.Time, u Usage) string {
	name, _ := s.weekName(ws, u)
	return name
}

// WeekPast is a week that a request would take past its team's weekly GPU-hours: Used of its
// Limit used or committed, Asked more of the request's Total there; Name says which week ("this
// week", "next week (from Mon 14 Dec)").
type WeekPast struct {
	WeekRoom
	Name         string
	Asked, Total float64
	Current      bool
	// Increase is how many more GPUs a quota increase asked now needs for the request to fit
	// every week it passes.
	Increase int
}

// pastWeeks is the first week that gpus GPUs from from for d take past the team's weekly
// GPU-hours, counted in each week they reach (WeekRooms); nil where they take none past it.
func (s *Service) pastWeeks(u Usage, q policy.Quota, from time.Time, gpus int, d time.Duration) *WeekPast {
	if gpus <= 0 || d <= 0 {
		return nil
	}
	var first *WeekPast
	for _, r := range s.WeekRooms(u, q, from, d) {
		asked := r.hoursIn(from, gpus, d)
		if r.Limit <= 0 || asked <= 0 || r.Used+asked <= r.Limit+1e-9 {
			continue
		}
		if first == nil {
			name, current := s.weekName(r.Start, u)
			first = &WeekPast{WeekRoom: r, Name: name, Asked: asked, Total: GPUHours(gpus, d), Current: current}
		}
		first.Increase = max(first.Increase, s.increaseFor(r, r.Used+asked-r.Limit))
	}
	return first
}

// increaseFor is how many more GPUs a quota increase asked now, for its usual length, needs to
// add lack GPU-hours to week r: its GPUs for the part of the week it lasts (late in this week
// fewer hours than the request lacks, so as many GPUs as those hours take).
func (s *Service) increaseFor(r WeekRoom, lack float64) int {
	now := s.Clock.Now()
	ws, we := r.Start, r.End
	if ws.IsZero() {
		ws = s.WeekStart(now)
		we = s.WeekEnd(ws)
	}
	if covered := overlapHours(now, now.Add(DefaultQuotaIncrease), ws, we); covered > 0 {
		return min(MaxRequestGPUs, max(1, int(math.Ceil(lack/covered-1e-9))))
	}
	return 1
}

// weekName names the week starting at ws to whoever asks in the week of u: "this week", "next
// week (from Mon 14 Dec)", "the week from Mon 21 Dec".
func (s *Service) weekName(ws time.Time, u Usage) (string, bool) {
	if ws.IsZero() || u.at.IsZero() || !ws.After(s.WeekStart(u.at)) {
		return "this week", true
	}
	day := ws.In(s.Policy.Location).Format("Mon 2 Jan")
	if ws.Equal(s.WeekEnd(s.WeekStart(u.at))) {
		return "next week (from " + day + ")", false
	}
	return "the week from " + day, false
}

// fitWeeks is the longest of d, in whole minutes from from, that gpus GPUs fit in every week of
// rooms (WeekRooms of from and d): each week's hours of it within what the week has left.
func fitWeeks(rooms []WeekRoom, from time.Time, gpus int, d time.Duration) time.Duration {
	if gpus <= 0 {
		return d
	}
	most := d
	for _, r := range rooms {
		if r.Limit <= 0 {
			continue
		}
		var off time.Duration // from from to the week's start
		if !r.Start.IsZero() && r.Start.After(from) {
			off = r.Start.Sub(from)
		}
		if off >= most {
			break
		}
		left := r.Limit - r.Used
		if r.hoursIn(from, gpus, most) <= left+1e-9 {
			continue
		}
		// Whole minutes, as the quota counts them (a hair of float left over is none).
		m := time.Duration(math.Floor(off.Minutes()+max(0, left)*60/float64(gpus)+1e-6)) * time.Minute
		if m < most {
			most = m
		}
	}
	return most
}

// WeekStart is the start (Monday 00:00, policy time zone) of the week holding t: the first
// 00:00 where the clocks go back over it, the jump where they skip it (policy.LocalTime), as the
// showback's week starts.
func (s *Service) WeekStart(t time.Time) time.Time {
	t = t.In(s.Policy.Location)
	d := (int(t.Weekday()) + 6) % 7
	y, m, day := t.Date()
	return policy.LocalTime(y, m, day-d, 0, 0, s.Policy.Location)
}

// WeekEnd is the end of the week that starts at ws (a WeekStart): the next week's start, 167 to
// 169 hours later where the clocks change in the week.
func (s *Service) WeekEnd(ws time.Time) time.Time { return s.WeekStart(ws.Add(170 * time.Hour)) }

// usage computes a team's usage inside a transaction, and its quota with approved increases.
// One query reads both: the team's leases of every kind that were open this week.
func (s *Service) usage(ctx context.Context, tx Tx, team string, now time.Time) (Usage, policy.Quota, error) {
	ws := s.WeekStart(now)
	leases, err := tx.ListLeases(ctx, LeaseFilter{Kind: AnyKind, Team: team, EndedAfter: ws, Slim: true})
	if err != nil {
		return Usage{}, policy.Quota{}, err
	}
	u, q := s.usageFrom(team, leases, now)
	return u, q, nil
}

// usageFrom is usage from the team's leases open at or after the start of the week.
func (s *Service) usageFrom(team string, leases []*Lease, now time.Time) (Usage, policy.Quota) {
	ws := s.WeekStart(now)
	u := Usage{GPUs: map[string]int{}, Waiting: map[string]int{}, at: now, team: team, leases: leases}
	var grants []*Lease
	for _, l := range leases {
		switch l.Kind {
		case KindWorkspace:
			if l.State.Live() {
				u.GPUs[l.Class] += l.GPUs
				if l.StartedAt.IsZero() || Requeued(l) {
					u.Waiting[l.Class] += l.GPUs
				}
			}
			u.GPUHoursWeek += committedHours(l, ws, s.WeekEnd(ws), now)
		case KindQuota:
			grants = append(grants, l)
		}
	}
	u.grants = grants
	return u, s.withGrants(team, grants, now)
}

// committedHours is the GPU-hours a lease used or holds inside the week from ws to we (this
// week, or a later one). The time its job waited in the scheduler's queue after a requeue is not
// counted: up to now for a lease still running, whose rest up to its end is counted as held. A
// lease whose job has not started yet holds its length from now, split at Monday 00:00 as a
// running one is.
func committedHours(l *Lease, ws, we, now time.Time) float64 {
	switch {
	case l.State == PendingApproval, l.State == Denied, l.State == Cancelled && l.StartedAt.IsZero():
		return 0
	case l.State.Ended():
		if l.StartedAt.IsZero() {
			return 0
		}
		return GPUHours(l.GPUs, HeldFor(l, ws, we))
	case l.StartedAt.IsZero():
		return overlapHours(now, now.Add(l.Duration), ws, we) * float64(l.GPUs)
	default:
		upTo := now
		if we.Before(upTo) {
			upTo = we
		}
		if !l.ExpiresAt.IsZero() && l.ExpiresAt.Before(upTo) {
			upTo = l.ExpiresAt
		}
		unbilled := UnbilledFor(l, ws, upTo)
		return max(0, overlapHours(l.StartedAt, l.ExpiresAt, ws, we)-unbilled.Hours()) * float64(l.GPUs)
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

// QuotaHolders are the leases among leases that a team's concurrent quota of class counts: its
// live workspaces of the class that take GPUs, whether they run, wait or are paused.
func QuotaHolders(leases []*Lease, class string) []*Lease {
	var out []*Lease
	for _, l := range leases {
		if l.Kind == KindWorkspace && l.State.Live() && l.Class == class && l.GPUs > 0 {
			out = append(out, l)
		}
	}
	return out
}

// quotaHolders are QuotaHolders of the team's leases (read slim, for admission), the ones
// HoldersText names read whole: what each does is in its reason (a Kubernetes Job suspended is
// paused as a requeued job is).
func quotaHolders(ctx context.Context, tx Tx, leases []*Lease, class string) ([]*Lease, error) {
	hs := QuotaHolders(leases, class)
	for i := range hs[:min(len(hs), maxHoldersShown)] {
		l, err := tx.GetLease(ctx, hs[i].ID)
		if err != nil {
			return nil, err
		}
		hs[i] = l
	}
	return hs, nil
}

// HeldNow is what l's team holds now of its concurrent quota of l's class, and by which leases,
// for l's approval card each time it is rendered (asked, handed over, edited at a decision or
// at the timeout), so that it says what holds then. Nil where it tells the approver nothing: a
// quota increase says it always (more GPUs of the class is what is decided), an extension where
// its lease holds GPUs (it keeps them longer), a new lease where it and what the team holds
// besides pass the quota of GPUs at once, as when it was asked. A lease or an extension that
// passes the team's weekly GPU-hours says that too, with the numbers (QuotaHeld.Week), in the
// past where it will not happen (QuotaHeld.Undone).
func (s *Service) HeldNow(ctx context.Context, l *Lease) (*QuotaHeld, error) {
	var out *QuotaHeld
	err := s.Store.View(ctx, func(tx Tx) error {
		out = nil
		now := s.Clock.Now()
		// What l adds: gpus GPUs from from for d.
		var gpus int
		var d time.Duration
		from := now
		switch l.Kind {
		case KindQuota:
		case KindExtension:
			p, err := tx.GetLease(ctx, l.Parent)
			if ErrorCode(err) == ENOTFOUND {
				return nil
			}
			if err != nil {
				return err
			}
			if p.GPUs == 0 {
				return nil // a CPU-only lease holds nothing of the quota
			}
			gpus, d, from = p.GPUs, l.Duration, extendsFrom(p, now)
		case KindWorkspace:
			if l.GPUs == 0 {
				return nil
			}
			gpus, d = l.GPUs, l.Duration
		default:
			return nil
		}
		leases, err := tx.ListLeases(ctx, LeaseFilter{Kind: AnyKind, Team: l.Team, EndedAfter: s.WeekStart(now), Slim: true})
		if err != nil {
			return err
		}
		u, q := s.usageFrom(l.Team, leases, now)
		held := &QuotaHeld{Team: l.Team, Class: l.Class, Held: u.GPUs[l.Class], Limit: q.GPUs[l.Class],
			Undone: l.State == Denied || l.State == Cancelled}
		if l.State != PendingApproval && l.State != Denied && l.State != Cancelled {
			gpus = 0 // approved: the week counts it already
		}
		if wp := s.pastWeeks(u, q, from, gpus, d); wp != nil {
			held.setWeek(wp, s.WeekRooms(u, q, from, d), from)
		} else if gpus == 0 && l.Kind != KindQuota && pastWeek(u, q, 0) {
			held.Week, held.WeekLimit = u.GPUHoursWeek, q.GPUHoursPerWeek
		}
		if l.Kind == KindWorkspace {
			others := u.GPUs[l.Class]
			for _, o := range leases {
				if o.ID == l.ID && o.State.Live() {
					others -= o.GPUs // approved meanwhile: it holds its own GPUs
				}
			}
			if others+l.GPUs <= q.GPUs[l.Class] {
				if held.WeekLimit == 0 {
					return nil
				}
				held.WeekOnly = true
				out = held
				return nil
			}
		}
		if held.Holders, err = quotaHolders(ctx, tx, leases, l.Class); err != nil {
			return err
		}
		out = held
		return nil
	})
	return out, err
}

// maxHoldersShown is how many leases HoldersText names before it counts the rest.
const maxHoldersShown = 3

// HoldersText says briefly which leases hold a team's GPUs, how many each and in what state:
// "L-1 (2, suspended), L-4 (1, running)"; past three, "and 2 more".
func HoldersText(ls []*Lease) string {
	parts := make([]string, 0, min(len(ls), maxHoldersShown)+1)
	for i, l := range ls {
		if i == maxHoldersShown {
			parts = append(parts, fmt.Sprintf("and %d more", len(ls)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%d, %s)", l.ID, l.GPUs, holdingState(l)))
	}
	return strings.Join(parts, ", ")
}

// holdingState says in a word or two what a lease that counts against the quota is doing.
func holdingState(l *Lease) string {
	switch {
	case Suspended(l), Requeued(l) && strings.HasPrefix(l.Reason, reasonSuspendedFree):
		return "suspended"
	case Requeued(l):
		return "back in the scheduler's queue"
	case l.State == Active || l.State == IdleWarned:
		return "running"
	case l.State == Provisioning:
		return "starting"
	default:
		return "waiting to run"
	}
}
