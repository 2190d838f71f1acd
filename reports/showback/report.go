// Package showback is the weekly showback: for one ISO week in the policy's time zone, per team and
// class, the GPU-hours used, what they cost, how much of it sat idle or was reclaimed, how the team
// used its quota, and the KPIs of self-service (approvals and their latency, queue waits predicted
// and actual, time-to-first-GPU, human touches per 100 leases), with the change from the week
// before. Build is pure: it computes a Report from leases, usage rollups and the policy, and the
// renderers turn a Report into text, CSV, JSON, a PNG chart and chat messages. Service loads a
// week's input through a Source; Publisher posts each week exactly once, however many replicas run.
package showback

import (
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// Input is everything a report is computed from; Build reads nothing else.
type Input struct {
	Policy *policy.Policy
	Week   Week
	// Now is when the report is made: a week that has not ended yet bills running leases up to now.
	Now time.Time
	// Leases holds leases of every kind: at least those created before the week's end that had not
	// ended before the previous week's start (the change from the week before is computed too).
	Leases []*qm.Lease
	// Usage holds the hourly usage rollups of the week and of the week before.
	Usage []qm.UsageRollup
	// Firsts says when each team first asked for GPUs and first got them.
	Firsts []qm.TeamFirst
	// Predictions are the waits predicted for leases when they were asked for.
	Predictions []qm.WaitPrediction
	// Filter narrows the report.
	Filter Filter
}

// Filter narrows a report to one team, or to one person's own leases.
type Filter struct {
	Team string `json:"team,omitempty"`
	User string `json:"user,omitempty"`
}

func (f Filter) lease(l *qm.Lease) bool {
	return (f.Team == "" || policy.SameName(l.Team, f.Team)) && (f.User == "" || policy.SameName(l.User, f.User))
}

// Report is one week's showback.
type Report struct {
	Organization string    `json:"organization"`
	Week         string    `json:"week"`
	From         time.Time `json:"from"`
	To           time.Time `json:"to"`
	TimeZone     string    `json:"time_zone"`
	Currency     string    `json:"currency"`
	GeneratedAt  time.Time `json:"generated_at"`
	// Complete is false for a week that had not ended when the report was made.
	Complete bool   `json:"complete"`
	Scope    Filter `json:"scope"`
	// Rows has one line per team and class, teams in name order, classes in catalog order (then
	// the classes no longer in the catalog that the week's leases used, by name).
	Rows  []Row   `json:"rows"`
	Teams []*Team `json:"teams"`
	Total Summary `json:"total"`
	// PreviousFrom and PreviousTo are the span of the week before that the change is computed
	// against: the whole week before, or for a week in progress the same span of it (from its
	// start to the same weekday and time of day as when the report was made).
	PreviousFrom time.Time `json:"previous_from"`
	PreviousTo   time.Time `json:"previous_to"`
	// QuotaIncreases are the approved quota increases in effect at some time in the week.
	QuotaIncreases []QuotaIncrease `json:"quota_increases"`
}

// Figures are what rows, teams and the total share.
type Figures struct {
	// GPUHours is GPUs × hours held, each lease from its start to its end (a running one up to
	// now, never past its expiry), clipped to the week.
	GPUHours float64 `json:"gpu_hours"`
	// Cost is GPUHours at the class's price per GPU-hour.
	Cost float64 `json:"cost"`
	// IdleGPUHours is what telemetry saw idle, from the hourly usage rollups; nil when GPUs were
	// held and telemetry saw none of them (no agent reported on its leases): idle is not measured.
	IdleGPUHours *float64 `json:"idle_gpu_hours"`
	// ObservedGPUHours is how many GPU-hours telemetry saw at all (idle or busy).
	ObservedGPUHours float64 `json:"observed_gpu_hours"`
	// ReclaimedGPUHours is what idle reclaim handed back: the GPU-hours between a reclaimed
	// lease's end and its expiry, counted in the week of the reclaim.
	ReclaimedGPUHours float64 `json:"reclaimed_gpu_hours"`
	// Leases counts the workspace leases that ran at some time in the week, CPU-only ones (which
	// add no GPU-hours or cost) included.
	Leases int `json:"leases"`
	// MeanUtilization is the mean GPU utilization telemetry reported, percent; nil without samples.
	MeanUtilization *float64 `json:"mean_utilization_pct"`
	utilSum         float64
	samples         int64
}

// IdleShare is idle GPU-hours as a share of GPU-hours; nil when nothing was used or idle was
// not measured.
func (f Figures) IdleShare() *float64 {
	if f.IdleGPUHours == nil {
		return nil
	}
	return ratio(*f.IdleGPUHours, f.GPUHours)
}

// IdleMeasured reports whether telemetry saw any of the GPU-hours held (or none were held).
func (f Figures) IdleMeasured() bool { return f.IdleGPUHours != nil }

// Idle is the idle GPU-hours measured, 0 when not measured.
func (f Figures) Idle() float64 {
	if f.IdleGPUHours == nil {
		return 0
	}
	return *f.IdleGPUHours
}

// nothingHeld reports whether f holds no GPU-hours and no idle time: it changes no sum of idle
// time, measured or not.
func (f Figures) nothingHeld() bool { return f.GPUHours == 0 && f.Idle() == 0 }

func (f *Figures) add(o Figures) {
	// Idle adds up what was measured; it stays unmeasured only where nothing added was measured.
	switch {
	case o.nothingHeld():
		if f.nothingHeld() && f.IdleGPUHours == nil && o.IdleGPUHours != nil {
			f.IdleGPUHours = ptr(0)
		}
	case f.nothingHeld() || f.IdleGPUHours == nil:
		f.IdleGPUHours = nil
		if o.IdleGPUHours != nil {
			f.IdleGPUHours = ptr(*o.IdleGPUHours)
		}
	case o.IdleGPUHours != nil:
		f.IdleGPUHours = ptr(*f.IdleGPUHours + *o.IdleGPUHours)
	}
	f.GPUHours += o.GPUHours
	f.Cost += o.Cost
	f.ObservedGPUHours += o.ObservedGPUHours
	f.ReclaimedGPUHours += o.ReclaimedGPUHours
	f.Leases += o.Leases
	f.utilSum += o.utilSum
	f.samples += o.samples
	f.MeanUtilization = nil
	if f.samples > 0 {
		f.MeanUtilization = ptr(f.utilSum / float64(f.samples))
	}
}

// Row is one team's use of one class.
type Row struct {
	Team  string `json:"team"`
	Class string `json:"class"`
	Figures
	// PeakGPUs is the most GPUs of the class the team held at once.
	PeakGPUs int `json:"peak_gpus"`
	// QuotaGPUs is the team's concurrent GPU quota of the class at the week's start (the policy's,
	// approved increases included).
	QuotaGPUs int `json:"quota_gpus"`
	// QuotaMostGPUs is the most that quota was at once during the week: QuotaGPUs, plus what
	// increases that began during the week raised it by at most (the text's "4 of 2 (+2)").
	QuotaMostGPUs int `json:"quota_gpus_most"`
	// PeakQuotaShare is the largest share of its GPU quota (increases included) the team held at
	// once; MeanQuotaShare the time-weighted mean share. Nil when the team had no quota of the class.
	PeakQuotaShare *float64 `json:"peak_quota_share"`
	MeanQuotaShare *float64 `json:"mean_quota_share"`
}

// Summary is a team's or everyone's week: figures and KPIs, with the week before.
type Summary struct {
	Figures
	Approvals Approvals `json:"approvals"`
	QueueWait QueueWait `json:"queue_wait"`
	// Requests counts requests of every kind made in the week (GPUs, quota increases, extensions);
	// HumanTouches counts the decisions people made on them. TouchesPer100 is HumanTouches per 100
	// of the week's leases (Figures.Leases, the workspace leases that held GPUs in the week); nil
	// when there were none.
	Requests      int      `json:"requests"`
	HumanTouches  int      `json:"human_touches"`
	TouchesPer100 *float64 `json:"human_touches_per_100_leases"`
	// Connectivity is how well connected the GPUs of the multi-GPU leases that started in the
	// week were.
	Connectivity Connectivity `json:"connectivity"`
	// Previous are the week before's figures (for a week in progress, of the same span of the
	// week before: Report.PreviousFrom to PreviousTo), and Change the difference.
	Previous Figures `json:"previous"`
	Change   Change  `json:"change"`
}

// Change is this week minus the week before.
type Change struct {
	GPUHours float64 `json:"gpu_hours"`
	Cost     float64 `json:"cost"`
	// IdleGPUHours is nil when idle was not measured in either week.
	IdleGPUHours *float64 `json:"idle_gpu_hours"`
	// GPUHoursPct is the change in GPU-hours in percent of the week before; nil when it used none.
	GPUHoursPct *float64 `json:"gpu_hours_pct"`
}

// Approvals are the requests made in the week that a published rule sent to a budget owner, and
// what became of them as far as known when the report was made.
type Approvals struct {
	Requests int `json:"requests"`
	Approved int `json:"approved"`
	Denied   int `json:"denied"`
	// Expired were denied because nobody decided within the policy's approval timeout.
	Expired int `json:"expired"`
	// Withdrawn were cancelled before a decision: by their requester, or, for an extension, by its
	// lease ending first.
	Withdrawn int `json:"withdrawn"`
	Pending   int `json:"pending"`
	// MedianLatency is the median time from request to a person's decision (the middle one, or
	// the mean of the two middle ones), and P90Latency its 90th percentile (nearest rank), over
	// the same decisions.
	MedianLatency *Seconds `json:"median_decision_latency_s"`
	P90Latency    *Seconds `json:"p90_decision_latency_s"`
	// PendingAtEnd counts the requests, of the week or of any week before, still waiting for a
	// decision at the week's end (for a week in progress, when the report was made), however
	// they were decided later; OldestPending is how long the oldest of them had waited by then,
	// from its request. Unlike Pending, it shows a request that has waited for days.
	PendingAtEnd  int      `json:"pending_at_week_end"`
	OldestPending *Seconds `json:"oldest_pending_age_s"`
	// OldestRequest names the oldest of them: its lease, who asked, for which team (nil when none).
	OldestRequest *PendingRequest `json:"oldest_pending_request"`
	// sofar: the week had not ended when the report was made.
	sofar bool
}

// PendingRequest names a request still waiting for a decision.
type PendingRequest struct {
	Lease string `json:"lease"`
	User  string `json:"user"`
	Team  string `json:"team"`
}

// QueueWait is how long the workspace leases that started in the week waited for GPUs: from the
// request (or its approval) to the start. Predicted is what the service told the requester. The
// leases of CPU-only jobs (templates of gpus: 0) wait for no GPU and are left out, as the wait
// predictor leaves them out; CPUOnly counts those that started.
type QueueWait struct {
	Started int `json:"started"`
	CPUOnly int `json:"cpu_only_started"`
	// P50 is the median wait (the middle one, or the mean of the two middle ones, as the
	// approvals' median), P90 the 90th percentile by nearest rank.
	P50 *Seconds `json:"p50_s"`
	P90 *Seconds `json:"p90_s"`
	// Queued counts the started leases that waited in the queue (a minute or more from their
	// request, or their approval, to their start); QueuedP50 is their median wait. A lease that
	// started at once was told no wait, so predicted against actual is told over these alone.
	Queued    int      `json:"queued"`
	QueuedP50 *Seconds `json:"queued_p50_s"`
	// Predicted counts the leases that waited in the queue whose prediction is known;
	// PredictedP50 is the median of their predicted medians.
	Predicted    int      `json:"predicted"`
	PredictedP50 *Seconds `json:"predicted_p50_s"`
	// LeftPastBound counts the queued leases that left the queue in the week without starting
	// (cancelled, failed) after waiting longer than their predicted 90% bound: misses of the bound,
	// right-censored as the predictor scores itself. Those that left within their bound tell
	// nothing and are not counted.
	LeftPastBound int `json:"left_past_predicted_p90"`
	// WithinBound is the share of the leases that waited in the queue with a prediction whose
	// wait stayed within the predicted 90% bound, out of those and the LeftPastBound leases; nil when there are none.
	WithinBound *float64 `json:"within_predicted_p90"`
}

// Connectivity counts the workspace leases of more than one GPU on one node that started in the
// week where placement knew the node's NVLink islands, and how many of them got GPUs in one
// island. Reservations and leases larger than one node (whole nodes), those whose islands were
// not known, and those with more GPUs than their node's largest island (which no placement could
// have given one island) are not counted; a lease of all of one node's GPUs counts as any other.
type Connectivity struct {
	// MultiGPU counts the leases counted; OneIsland how many of them got GPUs in one island.
	MultiGPU  int `json:"multi_gpu_leases"`
	OneIsland int `json:"one_nvlink_island"`
	// Share is OneIsland of MultiGPU: the well-connected share; nil when MultiGPU is 0.
	Share *float64 `json:"well_connected_share"`
}

func (c *Connectivity) add(l *qm.Lease) {
	if l.GPUs < 2 || (l.Connection != qm.ConnectionIsland && l.Connection != qm.ConnectionSpread) {
		return
	}
	c.MultiGPU++
	if l.Connection == qm.ConnectionIsland {
		c.OneIsland++
	}
	c.Share = ratio(float64(c.OneIsland), float64(c.MultiGPU))
}

// Team is one team's week.
type Team struct {
	Name string `json:"team"`
	// Listed is false for a team the policy does not list (it runs on the default quota).
	Listed       bool     `json:"listed"`
	BudgetOwners []string `json:"budget_owners"`
	Summary
	// GPUHoursQuota is gpu_hours_per_week plus what approved increases added during the week;
	// GPUHoursQuotaShare is GPUHours against it.
	GPUHoursQuota      float64  `json:"gpu_hours_quota"`
	GPUHoursQuotaShare *float64 `json:"gpu_hours_quota_share"`
	// FirstRequest is set when the team's first lease request ever was made in the week, or its
	// first workspace became active in it (a request of an earlier week that started late);
	// FirstLogin is then the first time anyone of the team signed in with single sign-on, when
	// that came first; TimeToFirstGPU is the time from the team's first contact (the first login,
	// else the first request) to its first active workspace (nil while it has none).
	FirstRequest   *time.Time `json:"first_request,omitempty"`
	FirstLogin     *time.Time `json:"first_login,omitempty"`
	TimeToFirstGPU *Seconds   `json:"time_to_first_gpu_s,omitempty"`
}

// QuotaIncrease is an approved quota increase in effect during the week.
type QuotaIncrease struct {
	Lease string    `json:"lease"`
	Team  string    `json:"team"`
	Class string    `json:"class"`
	GPUs  int       `json:"gpus"`
	From  time.Time `json:"from"`
	Until time.Time `json:"until"`
	// GPUHours is what the increase added to the week's GPU-hour quota: its GPUs × its hours in the week.
	GPUHours float64 `json:"gpu_hours"`
	By       string  `json:"approved_by"`
	Because  string  `json:"because"`
}

// Seconds is a duration written in JSON as seconds.
type Seconds float64

// Duration is s as a time.Duration.
func (s Seconds) Duration() time.Duration { return time.Duration(float64(s) * float64(time.Second)) }

func secs(d time.Duration) *Seconds { s := Seconds(d.Seconds()); return &s }

func ptr(v float64) *float64 { return &v }

func ratio(a, b float64) *float64 {
	if b <= 0 {
		return nil
	}
	return ptr(a / b)
}

// window is a half-open interval of time.
type window struct{ from, to time.Time }

func (w window) overlap(a, b time.Time) time.Duration {
	if a.Before(w.from) {
		a = w.from
	}
	if b.After(w.to) {
		b = w.to
	}
	if !b.After(a) {
		return 0
	}
	return b.Sub(a)
}

func (w window) holds(t time.Time) bool { return !t.IsZero() && !t.Before(w.from) && t.Before(w.to) }

// held is the span a workspace lease held its GPUs, as the domain dates it: from its start to its
// end, or for a lease still running, to now but never past its expiry. ok is false for a lease
// that never started.
func held(l *qm.Lease, now time.Time) (from, to time.Time, ok bool) {
	if l.Kind != qm.KindWorkspace || l.StartedAt.IsZero() {
		return time.Time{}, time.Time{}, false
	}
	to = qm.BilledUntil(l, now)
	return l.StartedAt, to, to.After(l.StartedAt)
}

// heldIn is how long l held its GPUs between a and b, as billed: not while its job waited in the
// scheduler's queue after a requeue.
func heldIn(l *qm.Lease, now, a, b time.Time) time.Duration {
	from, to, ok := held(l, now)
	if !ok || !b.After(a) {
		return 0
	}
	upTo := func(t time.Time) time.Duration { return qm.HeldFor(l, from, minTime(t, to)) }
	return max(0, upTo(b)-upTo(a))
}

type teamClass struct{ team, class string }

// Build computes the report of in.Week. It only reads in.
func Build(in Input) *Report {
	p := in.Policy
	loc := p.Location
	wk := window{in.Week.Start(loc), in.Week.End(loc)}
	prev := window{in.Week.Prev().Start(loc), wk.from}
	r := &Report{Organization: p.Organization, Week: in.Week.String(), From: wk.from, To: wk.to, TimeZone: loc.String(),
		Currency: p.Currency, GeneratedAt: in.Now.In(loc), Complete: !in.Now.Before(wk.to), Scope: in.Filter}
	// A week in progress is compared with the same span of the week before: from its Monday 00:00
	// to the same weekday and time of day as now (Wednesday 15:00 with Wednesday 15:00), not with
	// the whole week.
	cmp := prev
	if !r.Complete {
		cmp.to = maxTime(prev.from, minTime(prev.to, weekBefore(in.Now, loc)))
	}
	r.PreviousFrom, r.PreviousTo = cmp.from, cmp.to

	var mine []*qm.Lease
	byID := map[qm.LeaseID]*qm.Lease{}
	for _, l := range in.Leases {
		if in.Filter.lease(l) {
			mine = append(mine, l)
			byID[l.ID] = l
		}
	}

	// The teams: every team the policy lists (unless narrowed), and every team that had leases.
	names := map[string]bool{}
	if in.Filter.Team != "" {
		if t, ok := p.Team(in.Filter.Team); ok {
			names[t.Name] = true
		} else {
			names[strings.ToLower(in.Filter.Team)] = true
		}
	} else if in.Filter.User == "" {
		for _, t := range p.Teams {
			names[t.Name] = true
		}
	}
	both := window{prev.from, wk.to}
	// The moment "still waiting for a decision" is told at: the week's end, or now for a week
	// in progress.
	end := minTime(wk.to, in.Now)
	for _, l := range mine {
		from, to, ok := held(l, in.Now)
		if ok && both.overlap(from, to) > 0 || wk.holds(l.CreatedAt) || waitingAt(l, end) {
			names[l.Team] = true
		}
	}
	teamNames := make([]string, 0, len(names))
	for n := range names {
		teamNames = append(teamNames, n)
	}
	sort.Strings(teamNames)

	figs := figures(mine, in.Usage, byID, wk, in.Now, p)
	prevFigs := figures(mine, in.Usage, byID, cmp, in.Now, p)
	increases := quotaIncreases(mine, wk)
	for i := range increases {
		increases[i].From, increases[i].Until = increases[i].From.In(loc), increases[i].Until.In(loc)
	}
	r.QuotaIncreases = increases

	teams := map[string]*Team{}
	for _, name := range teamNames {
		t := &Team{Name: name}
		if pt, ok := p.Team(name); ok {
			t.Listed, t.BudgetOwners = true, append([]string{}, pt.BudgetOwners...)
		}
		if t.BudgetOwners == nil {
			t.BudgetOwners = []string{}
		}
		teams[name] = t
		r.Teams = append(r.Teams, t)
		q := p.QuotaFor(name)
		for _, c := range p.Classes {
			row := Row{Team: name, Class: c.Name, Figures: figs[teamClass{name, c.Name}]}
			if row.MeanUtilization == nil && row.samples > 0 {
				row.MeanUtilization = ptr(row.utilSum / float64(row.samples))
			}
			quotaShares(&row, mine, increases, q.GPUs[c.Name], wk, in.Now)
			r.Rows = append(r.Rows, row)
			t.Figures.add(row.Figures)
			t.Previous.add(prevFigs[teamClass{name, c.Name}])
		}
		t.GPUHoursQuota = q.GPUHoursPerWeek
		for _, inc := range increases {
			// A team without a weekly limit (0) gets none from an increase's hours.
			if inc.Team == name && q.GPUHoursPerWeek > 0 {
				t.GPUHoursQuota += inc.GPUHours
			}
		}
		r.Total.Figures.add(t.Figures)
		r.Total.Previous.add(t.Previous)
	}
	// Rows and figures of classes no longer in the catalog still count toward their team: after
	// the catalog's classes, by name, with the GPUs held at once and no quota of the class.
	var gone []teamClass
	for k := range figs {
		if _, ok := p.Class(k.class); !ok {
			gone = append(gone, k)
		}
	}
	sort.Slice(gone, func(i, j int) bool { return gone[i].class < gone[j].class })
	for _, k := range gone {
		f := figs[k]
		if t, ok := teams[k.team]; ok {
			row := Row{Team: k.team, Class: k.class, Figures: f}
			quotaShares(&row, mine, increases, 0, wk, in.Now)
			r.Rows = append(r.Rows, row)
			t.Figures.add(f)
			r.Total.Figures.add(f)
		}
	}
	for i := range r.Rows {
		if r.Rows[i].IdleGPUHours == nil && r.Rows[i].GPUHours == 0 {
			r.Rows[i].IdleGPUHours = ptr(0) // nothing held, so nothing idle
		}
		r.Rows[i].QuotaMostGPUs = quotaMost(increases, r.Rows[i].Team, r.Rows[i].Class, wk.from, r.Rows[i].QuotaGPUs)
	}
	// The weekly GPU-hour quota's share is of everything the team used, gone classes included.
	for _, t := range r.Teams {
		t.GPUHoursQuotaShare = ratio(t.GPUHours, t.GPUHoursQuota)
	}
	for k, f := range prevFigs {
		if _, ok := p.Class(k.class); !ok {
			if t, ok := teams[k.team]; ok {
				t.Previous.add(f)
				r.Total.Previous.add(f)
			}
		}
	}
	sort.SliceStable(r.Rows, func(i, j int) bool { return r.Rows[i].Team < r.Rows[j].Team })

	// KPIs, per team and for everyone.
	waits := map[string][]waitSample{}
	var allWaits []waitSample
	preds := map[qm.LeaseID]qm.WaitPrediction{}
	for _, pr := range in.Predictions {
		if _, ok := preds[pr.Lease]; !ok {
			preds[pr.Lease] = pr
		}
	}
	cpuOnly, allCPUOnly := map[string]int{}, 0 // CPU-only jobs' leases started in the week, per team and in all
	approvals := map[string]*approvalAcc{}
	all := &approvalAcc{a: Approvals{sofar: !r.Complete}}
	acc := func(team string) *approvalAcc {
		a := approvals[team]
		if a == nil {
			a = &approvalAcc{a: Approvals{sofar: !r.Complete}}
			approvals[team] = a
		}
		return a
	}
	for _, l := range mine {
		if _, ok := teams[l.Team]; !ok {
			continue
		}
		if wk.holds(l.CreatedAt) {
			acc(l.Team).add(l)
			all.add(l)
		}
		if waitingAt(l, end) {
			acc(l.Team).waiting(l, end)
			all.waiting(l, end)
		}
		if l.CPUOnly() {
			// A CPU-only job's lease waits for no GPU: its wait is none of the queue waits,
			// which are waits for GPUs, nor a hit or a miss of a bound the predictor never gave.
			if wk.holds(l.StartedAt) {
				cpuOnly[l.Team]++
				allCPUOnly++
			}
			continue
		}
		if l.Kind == qm.KindWorkspace && l.StartedAt.IsZero() && wk.holds(l.EndedAt) {
			// It left the queue without starting: right-censored at the moment it left. A
			// bound shorter than what it had waited is a miss; a longer one tells nothing.
			if pr, ok := preds[l.ID]; ok && l.EndedAt.Sub(queuedAt(l)) > pr.P90 {
				s := waitSample{censored: true}
				waits[l.Team] = append(waits[l.Team], s)
				allWaits = append(allWaits, s)
			}
		}
		if l.Kind == qm.KindWorkspace && wk.holds(l.StartedAt) {
			s := waitSample{wait: max(0, l.StartedAt.Sub(queuedAt(l)))}
			if pr, ok := preds[l.ID]; ok {
				s.predicted, s.median, s.p90 = true, pr.Median, pr.P90
			}
			waits[l.Team] = append(waits[l.Team], s)
			allWaits = append(allWaits, s)
			teams[l.Team].Connectivity.add(l)
			r.Total.Connectivity.add(l)
		}
	}
	for _, t := range r.Teams {
		finish(&t.Summary, approvals[t.Name], waits[t.Name])
		t.QueueWait.CPUOnly = cpuOnly[t.Name]
	}
	finish(&r.Total, all, allWaits)
	r.Total.QueueWait.CPUOnly = allCPUOnly

	// Time-to-first-GPU, for a team whose first request was in the week, or whose first workspace
	// became active in it: from its first contact (its first login with single sign-on, when that
	// came first) to its first workspace.
	if in.Filter.User == "" {
		for _, f := range in.Firsts {
			t, ok := teams[f.Team]
			startedIn := wk.holds(f.FirstStart) && !f.FirstStart.After(in.Now)
			if !ok || !wk.holds(f.FirstRequest) && !startedIn {
				continue
			}
			first, contact := f.FirstRequest.In(loc), f.Contact().In(loc)
			t.FirstRequest = &first
			if contact.Before(first) {
				t.FirstLogin = &contact
			}
			if !f.FirstStart.IsZero() && !f.FirstStart.After(in.Now) {
				t.TimeToFirstGPU = secs(max(0, f.FirstStart.Sub(contact)))
			}
		}
	}
	return r
}

// weekBefore is the same weekday and time of day as t a week before, on the clocks of loc: a time
// the clocks skipped that day falls as much after the jump (on the same day, where the jump is at
// midnight), and one they showed twice is the first, as a scheduled time is (policy.LocalTime).
func weekBefore(t time.Time, loc *time.Location) time.Time {
	lt := t.In(loc)
	y, m, d := lt.Date()
	rest := time.Duration(lt.Second())*time.Second + time.Duration(lt.Nanosecond())
	return policy.LocalTime(y, m, d-7, lt.Hour(), lt.Minute(), loc).Add(rest)
}

// figures adds up GPU-hours, cost, reclaimed hours and telemetry per team and class in w.
func figures(leases []*qm.Lease, usage []qm.UsageRollup, byID map[qm.LeaseID]*qm.Lease, w window, now time.Time, p *policy.Policy) map[teamClass]Figures {
	out := map[teamClass]Figures{}
	for _, l := range leases {
		k := teamClass{l.Team, l.Class}
		if from, to, ok := held(l, now); ok {
			if w.overlap(from, to) > 0 {
				// What it held in the week: the time its job waited in the scheduler's queue
				// after a requeue is not billed, nor counted in GPU-hours.
				upTo := func(t time.Time) time.Duration { return qm.HeldFor(l, from, minTime(t, to)) }
				f := out[k]
				f.GPUHours += qm.GPUHours(l.GPUs, upTo(w.to)-upTo(w.from))
				// The week's part of the lease's bill (qm.BillIn), so that the lease's weeks add
				// up to the bill its owner was given.
				f.Cost += qm.BillIn(p, l, minTime(w.from, to), minTime(w.to, to))
				f.Leases++
				out[k] = f
			}
		} else if l.Kind == qm.KindWorkspace && l.EndedAt.IsZero() && l.StartedAt.Equal(now) && w.holds(now) {
			// Started now: it holds its GPUs now, in the week, though it has used none yet.
			f := out[k]
			f.Leases++
			out[k] = f
		}
		if l.Kind == qm.KindWorkspace && l.State == qm.Reclaimed && w.holds(l.EndedAt) && l.Reclaimed > 0 {
			f := out[k]
			f.ReclaimedGPUHours += l.Reclaimed
			out[k] = f
		}
	}
	for _, u := range usage {
		l, ok := byID[u.Lease]
		if !ok || l.Kind != qm.KindWorkspace || !w.holds(u.Hour) {
			continue
		}
		k := teamClass{l.Team, l.Class}
		f := out[k]
		// An hour that w ends inside (the same span of the week before, compared with a week in
		// progress) counts for the part of it in w, as the week in progress has seen only part
		// of its last hour. An hour is the span its rollup covers: half an hour after Lord Howe
		// Island's clocks change (qm.HourSpan).
		hFrom, hTo := qm.HourSpan(u.Hour, p.Location)
		part := 1.0
		if hTo.After(w.to) {
			part = max(0, w.to.Sub(hFrom).Seconds()) / hTo.Sub(hFrom).Seconds()
		}
		seen, idle := part*u.GPUSeconds, min(part*u.IdleGPUSeconds, part*u.GPUSeconds)
		// Telemetry never sees more than the lease held in the hour (its GPUs × the time it held
		// them in it, inside w): samples after its end, or the same GPUs reported twice, are cut
		// down to that, idle in the share the hour's telemetry saw, so that idle GPU-hours are
		// never more than the GPU-hours billed.
		most := float64(l.GPUs) * heldIn(l, now, maxTime(hFrom, w.from), minTime(hTo, w.to)).Seconds()
		if seen > most {
			idle, seen = idle*most/seen, most
		}
		f.IdleGPUHours = ptr(f.Idle() + idle/3600)
		f.ObservedGPUHours += seen / 3600
		f.utilSum += u.UtilSum
		f.samples += u.Samples
		if f.samples > 0 {
			f.MeanUtilization = ptr(f.utilSum / float64(f.samples))
		}
		out[k] = f
	}
	// Each row is kept as it is shown, GPU-hours to the hundredth and money to the currency's
	// minor unit, so that the teams' and the total's figures, which add rows up, are the sums of
	// the rows shown in the text, the CSV and the chart.
	mu := policy.MinorUnits(p.Currency)
	for k, f := range out {
		f.GPUHours = round(f.GPUHours, 2)
		switch {
		case f.IdleGPUHours != nil:
			f.IdleGPUHours = ptr(round(*f.IdleGPUHours, 2))
		case f.GPUHours == 0:
			f.IdleGPUHours = ptr(0) // nothing held, so nothing idle
		}
		f.ObservedGPUHours, f.ReclaimedGPUHours = round(f.ObservedGPUHours, 2), round(f.ReclaimedGPUHours, 2)
		f.Cost = round(f.Cost, mu)
		out[k] = f
	}
	return out
}

// quotaIncreases lists the approved quota increases in effect during w.
func quotaIncreases(leases []*qm.Lease, w window) []QuotaIncrease {
	out := []QuotaIncrease{}
	for _, l := range leases {
		if l.Kind != qm.KindQuota || l.StartedAt.IsZero() {
			continue
		}
		until := l.ExpiresAt
		if !l.EndedAt.IsZero() && (until.IsZero() || l.EndedAt.Before(until)) {
			until = l.EndedAt
		}
		d := w.overlap(l.StartedAt, until)
		if d <= 0 {
			continue
		}
		out = append(out, QuotaIncrease{Lease: l.ID.String(), Team: l.Team, Class: l.Class, GPUs: l.GPUs, From: l.StartedAt, Until: until,
			GPUHours: qm.GPUHours(l.GPUs, d), By: l.DecidedBy, Because: l.Because})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].From.Before(out[j].From) })
	return out
}

// quotaShares sweeps the week: at each moment, the GPUs of the row's class the team held against its
// quota then (base plus the increases in effect).
func quotaShares(row *Row, leases []*qm.Lease, increases []QuotaIncrease, base int, w window, now time.Time) {
	end := w.to
	if now.Before(end) {
		end = now
	}
	if !end.After(w.from) {
		return
	}
	type step struct {
		at          time.Time
		held, quota int
	}
	var steps []step
	for _, l := range leases {
		if l.Team != row.Team || l.Class != row.Class {
			continue
		}
		if from, to, ok := held(l, now); ok && w.overlap(from, to) > 0 {
			steps = append(steps, step{at: maxTime(from, w.from), held: l.GPUs}, step{at: minTime(to, w.to), held: -l.GPUs})
			// While its job waited in the scheduler's queue after a requeue, it held none.
			for _, p := range l.Pauses {
				if !p.Unbilled() {
					continue
				}
				a, b := maxTime(p.From, maxTime(from, w.from)), minTime(to, w.to)
				if !p.To.IsZero() {
					b = minTime(p.To, b)
				}
				if b.After(a) {
					steps = append(steps, step{at: a, held: -l.GPUs}, step{at: b, held: l.GPUs})
				}
			}
		}
	}
	quotaAtStart := base
	for _, inc := range increases {
		if inc.Team != row.Team || inc.Class != row.Class {
			continue
		}
		if !inc.From.After(w.from) {
			quotaAtStart += inc.GPUs
		}
		steps = append(steps, step{at: maxTime(inc.From, w.from), quota: inc.GPUs}, step{at: minTime(inc.Until, w.to), quota: -inc.GPUs})
	}
	row.QuotaGPUs = quotaAtStart
	slices.SortStableFunc(steps, func(a, b step) int { return a.at.Compare(b.at) })
	held, quota := 0, base
	at := w.from
	var weighted float64
	anyQuota := base > 0
	for i := 0; i <= len(steps); i++ {
		next := end
		if i < len(steps) && steps[i].at.Before(end) {
			next = steps[i].at
		}
		if next.After(at) { // held GPUs for a while: steps at one instant are applied together
			row.PeakGPUs = max(row.PeakGPUs, held)
			if quota > 0 {
				share := float64(held) / float64(quota)
				weighted += share * next.Sub(at).Seconds()
				if row.PeakQuotaShare == nil || share > *row.PeakQuotaShare {
					row.PeakQuotaShare = ptr(share)
				}
			}
			at = next
		}
		if i == len(steps) || !steps[i].at.Before(end) {
			break
		}
		held += steps[i].held
		quota += steps[i].quota
		if quota > 0 {
			anyQuota = true
		}
	}
	if !anyQuota {
		row.PeakQuotaShare = nil
		return
	}
	row.MeanQuotaShare = ptr(weighted / end.Sub(w.from).Seconds())
	if row.PeakQuotaShare == nil {
		row.PeakQuotaShare = ptr(0)
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// approvalAcc counts a week's requests and what became of those that needed a person.
type approvalAcc struct {
	requests, touches int
	a                 Approvals
	latencies         []time.Duration
	oldest            *qm.Lease // the oldest request still waiting at the week's end
}

func (acc *approvalAcc) add(l *qm.Lease) {
	acc.requests++
	human := l.DecidedBy != "" && l.DecidedBy != qm.SystemActor
	if human {
		acc.touches++
	}
	if l.Rules == "" && l.DecidedBy == "" {
		return // no rule stopped it
	}
	acc.a.Requests++
	switch {
	case l.DecidedBy == qm.SystemActor:
		acc.a.Expired++
	case l.DecidedBy == "" && l.State == qm.PendingApproval:
		acc.a.Pending++
	case l.DecidedBy == "":
		acc.a.Withdrawn++
	case l.State == qm.Denied:
		acc.a.Denied++
	default:
		acc.a.Approved++
	}
	if human && !l.DecidedAt.IsZero() {
		acc.latencies = append(acc.latencies, max(0, l.DecidedAt.Sub(l.CreatedAt)))
	}
}

// waiting counts l, a request still waiting for a decision at end, and keeps the oldest (of
// two asked at once, the lower lease id).
func (acc *approvalAcc) waiting(l *qm.Lease, end time.Time) {
	acc.a.PendingAtEnd++
	if acc.oldest == nil || l.CreatedAt.Before(acc.oldest.CreatedAt) || l.CreatedAt.Equal(acc.oldest.CreatedAt) && l.ID < acc.oldest.ID {
		acc.oldest = l
		acc.a.OldestPending = secs(end.Sub(l.CreatedAt))
		acc.a.OldestRequest = &PendingRequest{Lease: l.ID.String(), User: l.User, Team: l.Team}
	}
}

// waitingAt reports whether l is a request that a rule sent to a person and that was waiting for
// a decision at t: asked before t, and neither decided (by a person, or by the approval timeout)
// nor withdrawn before t. What became of it later does not matter.
func waitingAt(l *qm.Lease, t time.Time) bool {
	if l.Rules == "" && l.DecidedBy == "" || !l.CreatedAt.Before(t) {
		return false
	}
	switch {
	case l.DecidedBy != "":
		return !l.DecidedAt.IsZero() && !l.DecidedAt.Before(t)
	case !l.EndedAt.IsZero(): // withdrawn
		return !l.EndedAt.Before(t)
	}
	return l.State == qm.PendingApproval
}

// queuedAt is when a workspace lease began to wait for GPUs: its request, or a person's approval
// of it.
func queuedAt(l *qm.Lease) time.Time {
	if !l.DecidedAt.IsZero() && l.DecidedBy != "" && l.DecidedBy != qm.SystemActor {
		return l.DecidedAt
	}
	return l.CreatedAt
}

// waitSample is a started lease's wait, or (censored) a queued lease that left the queue
// unstarted after waiting past its predicted 90% bound.
type waitSample struct {
	wait        time.Duration
	predicted   bool
	median, p90 time.Duration
	censored    bool
}

// finish fills a summary's KPIs and its change from the week before.
func finish(s *Summary, acc *approvalAcc, waits []waitSample) {
	if acc != nil {
		s.Requests, s.HumanTouches, s.Approvals = acc.requests, acc.touches, acc.a
		if len(acc.latencies) > 0 {
			s.Approvals.MedianLatency = secs(median(acc.latencies))
			s.Approvals.P90Latency = secs(percentile(acc.latencies, 90))
		}
	}
	// Per 100 leases, as the figure is named: the week's leases, not its requests of every kind.
	s.TouchesPer100 = nil
	if s.Leases > 0 {
		s.TouchesPer100 = ptr(100 * float64(s.HumanTouches) / float64(s.Leases))
	}
	var ws, queued, meds []time.Duration
	within := 0
	for _, w := range waits {
		if w.censored {
			s.QueueWait.LeftPastBound++
			continue
		}
		ws = append(ws, w.wait)
		// A lease that started at once was told no wait: it is neither a hit nor a miss of a
		// bound, and its predicted median is none of the predicted p50.
		if w.wait < qm.WaitedInQueue {
			continue
		}
		queued = append(queued, w.wait)
		if w.predicted {
			meds = append(meds, w.median)
			if w.wait <= w.p90 {
				within++
			}
		}
	}
	s.QueueWait.Started, s.QueueWait.Queued, s.QueueWait.Predicted = len(ws), len(queued), len(meds)
	if len(ws) > 0 {
		s.QueueWait.P50, s.QueueWait.P90 = secs(median(ws)), secs(percentile(ws, 90))
	}
	if len(queued) > 0 {
		s.QueueWait.QueuedP50 = secs(median(queued))
	}
	if len(meds) > 0 {
		s.QueueWait.PredictedP50 = secs(median(meds))
	}
	s.QueueWait.WithinBound = ratio(float64(within), float64(len(meds)+s.QueueWait.LeftPastBound))
	// Nothing held, nothing idle: a week without GPU-hours has measured all of its idle time.
	for _, f := range []*Figures{&s.Figures, &s.Previous} {
		if f.IdleGPUHours == nil && f.GPUHours == 0 {
			f.IdleGPUHours = ptr(0)
		}
	}
	s.Change = Change{GPUHours: s.GPUHours - s.Previous.GPUHours, Cost: s.Cost - s.Previous.Cost}
	if s.IdleGPUHours != nil && s.Previous.IdleGPUHours != nil {
		s.Change.IdleGPUHours = ptr(*s.IdleGPUHours - *s.Previous.IdleGPUHours)
	}
	if s.Previous.GPUHours > 0 {
		s.Change.GPUHoursPct = ptr(100 * s.Change.GPUHours / s.Previous.GPUHours)
	}
}

// percentile is the nearest-rank percentile: the smallest value at least p percent of the values
// are at or below, always one of the values (of 1, 2 or 3 values, the 90th is the largest). The
// report's p90s use it; its p50s and medians use median, since the nearest rank's 50th of an even
// number of values is the lower of the two middle ones, which is not the median.
func percentile(v []time.Duration, p float64) time.Duration {
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// median is the median as a person computes it: the middle value, or the mean of the two middle
// values of an even number of values (of 15m and 30m, 22m30s). Every median and p50 of the report
// is this one: the approvals' median decision, the queue waits' p50 and the predicted p50.
func median(v []time.Duration) time.Duration {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	a, b := s[n/2-1], s[n/2]
	return a + (b-a)/2
}
