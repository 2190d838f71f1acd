package showback

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// CSVHeader is the CSV's first line; the first eight columns are the contract finance reads. Columns
// added later go at the end, so that a reader of the earlier ones by position still finds them.
var CSVHeader = []string{"week", "team", "class", "gpu_hours", "cost", "idle_gpu_hours", "reclaimed_gpu_hours", "leases",
	"observed_gpu_hours", "mean_utilization_pct", "peak_gpus", "quota_gpus", "peak_quota_pct", "mean_quota_pct", "currency",
	"quota_gpus_most"}

// ownCSVHeader is CSVHeader for a person's own report: the same columns in the same places, the
// peak and the quota shares named as the person's own against the team's quota.
var ownCSVHeader = func() []string {
	own := map[string]string{"peak_gpus": "own_peak_gpus", "quota_gpus": "team_quota_gpus", "peak_quota_pct": "own_peak_quota_pct",
		"mean_quota_pct": "own_mean_quota_pct", "quota_gpus_most": "team_quota_gpus_most"}
	h := append([]string{}, CSVHeader...)
	for i, c := range h {
		if o, ok := own[c]; ok {
			h[i] = o
		}
	}
	return h
}()

// two writes a number with a dot and two decimals.
func two(v float64) string { return strconv.FormatFloat(round(v, 2), 'f', 2, 64) }

func twoOrEmpty(v *float64, scale float64) string {
	if v == nil {
		return ""
	}
	return two(*v * scale)
}

// costCell writes an amount for the CSV: with a dot and two decimals, or as many as the currency's
// minor unit has when that is more (0.583 KWD), so that the CSV shows the cost the text shows.
func costCell(currency string, v float64) string {
	places := max(2, policy.MinorUnits(currency))
	return strconv.FormatFloat(round(v, places), 'f', places, 64)
}

// round is policy.Round: figures and money are rounded one way.
func round(v float64, places int) float64 { return policy.Round(v, places) }

// WriteCSV writes one row per team and class.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	header := CSVHeader
	if r.Scope.User != "" {
		header = ownCSVHeader
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, row := range r.Rows {
		rec := []string{r.Week, row.Team, row.Class, two(row.GPUHours), costCell(r.Currency, row.Cost), twoOrEmpty(row.IdleGPUHours, 1), two(row.ReclaimedGPUHours),
			strconv.Itoa(row.Leases), two(row.ObservedGPUHours), twoOrEmpty(row.MeanUtilization, 1), strconv.Itoa(row.PeakGPUs),
			strconv.Itoa(row.QuotaGPUs), twoOrEmpty(row.PeakQuotaShare, 100), twoOrEmpty(row.MeanQuotaShare, 100), r.Currency,
			strconv.Itoa(r.quotaAtMost(row))}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// CSV is WriteCSV into a byte slice.
func (r *Report) CSV() []byte {
	var b bytes.Buffer
	_ = r.WriteCSV(&b) // a bytes.Buffer does not fail
	return b.Bytes()
}

// WriteJSON writes the report as indented JSON, figures rounded to four decimals and times to the
// second (a report made at the real now keeps its fraction of a second in GeneratedAt).
func (r *Report) WriteJSON(w io.Writer) error {
	c := *r
	roundAll(reflect.ValueOf(&c).Elem())
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(&c)
}

// roundAll rounds every float in v to four decimals and every time down to the second, copying
// what it reaches through pointers and slices so the report itself is left as it was.
func roundAll(v reflect.Value) {
	switch v.Kind() {
	case reflect.Float64:
		if v.CanSet() {
			v.SetFloat(round(v.Float(), 4))
		}
	case reflect.Pointer:
		if v.IsNil() || !v.CanSet() {
			return
		}
		c := reflect.New(v.Type().Elem())
		c.Elem().Set(v.Elem())
		roundAll(c.Elem())
		v.Set(c)
	case reflect.Slice:
		if v.IsNil() || !v.CanSet() {
			return
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(c, v)
		for i := 0; i < c.Len(); i++ {
			roundAll(c.Index(i))
		}
		v.Set(c)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			if v.CanSet() {
				v.Set(reflect.ValueOf(v.Interface().(time.Time).Truncate(time.Second)))
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				roundAll(v.Field(i))
			}
		}
	}
}

// Money writes an amount in the report's currency: $12.50, or 12.50 EUR.
func (r *Report) Money(v float64) string { return money(r.Currency, v) }

func money(currency string, v float64) string { return policy.Money(currency, v) }

func signed(v float64) string {
	if round(v, 2) > 0 {
		return "+" + two(v)
	}
	return two(v)
}

func (r *Report) signedMoney(v float64) string {
	if round(v, policy.MinorUnits(r.Currency)) > 0 {
		return "+" + r.Money(v)
	}
	return r.Money(v)
}

// idleNotMeasured says that telemetry saw none of the GPU-hours held, so their idle time is not
// known (no agent reported on the leases).
const idleNotMeasured = "idle not measured"

// noGPUsUsed says that no GPU was held, and noneIdle that therefore none was idle: where a share
// of the GPU-hours idle would be a share of nothing ("n/a").
const (
	noGPUsUsed = "no GPUs used"
	noneIdle   = noGPUsUsed + ", so none idle"
)

// idleShareText is "12.5% idle", noneIdle where no GPU was held, or idleNotMeasured.
func idleShareText(f Figures) string {
	if f.IdleMeasured() && f.nothingHeld() {
		return noneIdle // a share of nothing held is none ("n/a")
	}
	if !f.IdleMeasured() {
		return idleNotMeasured
	}
	return pct(f.IdleShare()) + " idle"
}

// idleHoursText is "idle 1.50 GPU-hours (12.5%)", or idleNotMeasured; withShare false leaves the
// share out ("idle 1.50").
func idleHoursText(f Figures, withShare bool) string {
	if !f.IdleMeasured() {
		return idleNotMeasured
	}
	if !withShare {
		return "idle " + two(f.Idle())
	}
	if f.nothingHeld() {
		return noneIdle
	}
	return fmt.Sprintf("idle %s GPU-hours (%s)", two(f.Idle()), pct(f.IdleShare()))
}

func pct(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return strconv.FormatFloat(round(*v*100, 1), 'f', 1, 64) + "%"
}

func pctOf(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return strconv.FormatFloat(round(*v, 1), 'f', 1, 64) + "%"
}

func dur(s *Seconds) string {
	if s == nil {
		return "n/a"
	}
	return policy.FormatDuration(s.Duration())
}

// Span says which days the week covers: Mon 23 Nov – Sun 29 Nov 2026.
func (r *Report) Span() string {
	loc := r.location()
	last := r.To.Add(-time.Hour).In(loc)
	return r.From.In(loc).Format("Mon 2 Jan") + " – " + last.Format("Mon 2 Jan 2006")
}

func (r *Report) location() *time.Location {
	if loc, err := time.LoadLocation(r.TimeZone); err == nil {
		return loc
	}
	return time.UTC
}

// when writes a time as chat's messages do, with its zone: in a week the clocks go back, 01:30
// comes twice (01:30 EDT, then 01:30 EST).
func (r *Report) when(t time.Time) string { return t.In(r.location()).Format("Mon 2 Jan 15:04 MST") }

// Title names the report: "Acme AI GPU showback, 2026-W48 (Mon 23 Nov – Sun 29 Nov 2026)".
func (r *Report) Title() string {
	who := "GPU showback"
	switch {
	case r.Scope.User != "":
		who = "GPU usage of " + r.Scope.User
	case r.Scope.Team != "":
		who = "GPU showback of team " + r.Scope.Team
	}
	t := fmt.Sprintf("%s %s, %s (%s)", r.Organization, who, r.Week, r.Span())
	if !r.Complete {
		t += ", so far"
	}
	return t
}

// leasesCount is a number of leases: "1 lease", "3 leases".
func leasesCount(n int) string { return policy.Count(n, "lease", "leases") }

// Headline is the week in one sentence.
func (r *Report) Headline() string {
	t := r.Total
	idle := idleNotMeasured
	switch {
	case t.nothingHeld():
		idle = noneIdle
	case t.IdleMeasured():
		idle = fmt.Sprintf("%s idle GPU-hours (%s)", two(t.Idle()), pct(t.IdleShare()))
	}
	s := fmt.Sprintf("%s GPU-hours, %s; %s; %s GPU-hours reclaimed; %s",
		two(t.GPUHours), r.Money(t.Cost), idle, two(t.ReclaimedGPUHours), leasesCount(t.Leases))
	if t.MeanUtilization != nil {
		s += "; mean utilization " + pctOf(t.MeanUtilization)
	}
	return s + "."
}

// partialPrevious reports whether the change is against part of the week before (the same span
// as a week in progress), not the whole of it.
func (r *Report) partialPrevious() bool {
	return !r.PreviousTo.IsZero() && r.PreviousTo.Before(r.From)
}

// ChangeLine says how the week compares with the one before: for a week in progress, with the
// same span of it ("against 2026-W47 up to Wed 18 Nov 15:00 CET").
func (r *Report) ChangeLine(s Summary) string {
	prev := ""
	if w, err := ParseWeek(r.Week, Week{}); err == nil {
		prev = w.Prev().String()
	}
	out := fmt.Sprintf("%s GPU-hours", signed(s.Change.GPUHours))
	if s.Change.GPUHoursPct != nil {
		out += " (" + signedPct(*s.Change.GPUHoursPct) + ")"
	}
	if r.partialPrevious() {
		prev += " up to " + r.when(r.PreviousTo)
	}
	return fmt.Sprintf("%s and %s against %s (%s GPU-hours, %s)", out, r.signedMoney(s.Change.Cost), prev, two(s.Previous.GPUHours), r.Money(s.Previous.Cost))
}

func signedPct(v float64) string {
	s := strconv.FormatFloat(round(v, 1), 'f', 1, 64) + "%"
	if round(v, 1) > 0 {
		return "+" + s
	}
	return s
}

// ApprovalsLine describes the week's exceptions, and the requests still waiting for a decision
// at the week's end.
func ApprovalsLine(a Approvals) string {
	var s string
	switch {
	case a.Requests == 0 && a.PendingAtEnd == 0:
		return "no request needed approval"
	case a.Requests == 0:
		s = "no request of the week needed approval"
	default:
		s = fmt.Sprintf("%s needed approval: %d approved, %d denied, %d expired undecided, %d withdrawn, %d pending",
			policy.Count(a.Requests, "request", "requests"), a.Approved, a.Denied, a.Expired, a.Withdrawn, a.Pending)
	}
	if a.MedianLatency != nil {
		s += "; median decision " + dur(a.MedianLatency) + ", p90 " + dur(a.P90Latency)
	}
	if a.PendingAtEnd > 0 {
		when := "at the week's end"
		if a.sofar {
			when = "now"
		}
		if a.PendingAtEnd == 1 {
			s += fmt.Sprintf("; 1 still undecided %s, waiting %s", when, dur(a.OldestPending))
		} else {
			s += fmt.Sprintf("; %d still undecided %s, the oldest waiting %s", a.PendingAtEnd, when, dur(a.OldestPending))
		}
		if o := a.OldestRequest; o != nil {
			s += fmt.Sprintf(" (%s, asked by %s for team %s)", o.Lease, o.User, o.Team)
		}
	}
	return s
}

// TouchesLine gives human touches per 100 leases: the decisions people made on the week's
// requests (of every kind) per 100 of the week's leases, naming both counts and the requests.
func TouchesLine(s Summary) string {
	decisions := policy.Count(s.HumanTouches, "human decision", "human decisions") + " on " + policy.Count(s.Requests, "request", "requests")
	if s.TouchesPer100 == nil {
		if s.Requests == 0 {
			return "no leases and no requests"
		}
		return "no leases; " + decisions
	}
	return fmt.Sprintf("%s per 100 leases (%s, %s)",
		strconv.FormatFloat(round(*s.TouchesPer100, 1), 'f', 1, 64), decisions, leasesCount(s.Leases))
}

// WaitLine describes queue waits, predicted and actual.
// The leases of CPU-only jobs, which wait for no GPU, are not among them: the line names how many
// started beside them.
func WaitLine(q QueueWait) string {
	besides := ""
	if q.CPUOnly > 0 {
		besides = ", besides " + policy.Count(q.CPUOnly, "CPU-only job, which waits", "CPU-only jobs, which wait") + " for no GPU"
	}
	if q.Started == 0 {
		s := "no workspace started"
		if q.CPUOnly > 0 {
			s = "no workspace with GPUs started" + besides
		}
		if q.LeftPastBound > 0 {
			s += fmt.Sprintf("; %d left the queue unstarted after waiting past its predicted 90%% bound (%s within it)", q.LeftPastBound, pct(q.WithinBound))
		}
		return s
	}
	atOnce := ""
	switch {
	case q.Queued == 0 && q.Started == 1:
		atOnce = ", at once"
	case q.Queued == 0:
		atOnce = ", all at once"
	case q.Queued < q.Started:
		atOnce = fmt.Sprintf(", %d of them at once", q.Started-q.Queued)
	}
	s := fmt.Sprintf("%d started%s%s; waited p50 %s, p90 %s", q.Started, besides, atOnce, dur(q.P50), dur(q.P90))
	// Predicted against actual, over the leases that waited in the queue: one that started at
	// once was told no wait.
	if q.Queued > 0 {
		if q.Queued == 1 {
			s += "; the 1 that waited in the queue waited " + dur(q.QueuedP50)
		} else {
			s += fmt.Sprintf("; the %d that waited in the queue waited p50 %s", q.Queued, dur(q.QueuedP50))
		}
		switch {
		case q.Predicted == q.Queued && q.Queued == 1:
			s += " against a predicted " + dur(q.PredictedP50)
		case q.Predicted == q.Queued:
			s += " against a predicted p50 of " + dur(q.PredictedP50)
		case q.Predicted > 0:
			s += fmt.Sprintf(" (%d of them with a prediction, predicted p50 %s)", q.Predicted, dur(q.PredictedP50))
		}
	}
	if q.Predicted > 0 || q.LeftPastBound > 0 {
		if q.Queued > 0 {
			s += ","
		} else {
			s += ";"
		}
		s += fmt.Sprintf(" %s of %d within the predicted 90%% bound", pct(q.WithinBound), q.Predicted+q.LeftPastBound)
		if q.LeftPastBound > 0 {
			s += fmt.Sprintf(" (%d left the queue unstarted after waiting past it)", q.LeftPastBound)
		}
	}
	return s
}

// ConnectivityLine says how many multi-GPU leases got GPUs in one NVLink island, of how many, and
// the share: "3 of 4 multi-GPU leases on one node got one NVLink island (75.0%)".
func ConnectivityLine(c Connectivity) string {
	if c.MultiGPU == 0 {
		return "no multi-GPU lease on one node with known NVLink islands started"
	}
	return fmt.Sprintf("%d of %s on one node got one NVLink island (%s)", c.OneIsland, policy.Count(c.MultiGPU, "multi-GPU lease", "multi-GPU leases"), pct(c.Share))
}

// WriteText writes the report for a terminal.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintln(&b, r.Title())
	fmt.Fprintf(&b, "Times in %s; costs in %s.\n\n", r.TimeZone, r.Currency)
	fmt.Fprintf(&b, "Total: %s\n", r.Headline())
	fmt.Fprintf(&b, "Change: %s.\n", r.ChangeLine(r.Total))
	fmt.Fprintf(&b, "Approvals: %s.\n", ApprovalsLine(r.Total.Approvals))
	fmt.Fprintf(&b, "Human touches: %s.\n", TouchesLine(r.Total))
	fmt.Fprintf(&b, "Queue waits: %s.\n", WaitLine(r.Total.QueueWait))
	fmt.Fprintf(&b, "Well connected: %s.\n", ConnectivityLine(r.Total.Connectivity))
	for _, q := range r.QuotaIncreases {
		fmt.Fprintf(&b, "Quota increase: %s\n", r.increaseLine(q))
	}
	for _, t := range r.Teams {
		if t.FirstRequest != nil {
			fmt.Fprintf(&b, "New team: %s\n", r.firstLine(t))
		}
	}
	b.WriteString("\n")
	table := [][]string{{"team", "class", "GPU-hours", "cost", "idle", "reclaimed", "leases", "util", "peak GPUs", "peak quota", "mean quota"}}
	if r.Scope.User != "" {
		// A person's own report: the peak and the shares are theirs, against the team's quota.
		table[0] = append(table[0][:8], "your peak GPUs of the team's quota", "your peak share of the team's quota", "your mean share of the team's quota")
	}
	for _, row := range r.Rows {
		table = append(table, []string{row.Team, row.Class, two(row.GPUHours), r.Money(row.Cost), idleCell(row.Figures),
			two(row.ReclaimedGPUHours), strconv.Itoa(row.Leases), pctOf(row.MeanUtilization), r.peakOf(row),
			pct(row.PeakQuotaShare), pct(row.MeanQuotaShare)})
	}
	writeTable(&b, table, 2)
	b.WriteString("\n")
	for _, t := range r.Teams {
		fmt.Fprintf(&b, "%s\n", r.TeamLine(t))
		fmt.Fprintf(&b, "    change: %s\n", r.ChangeLine(t.Summary))
		fmt.Fprintf(&b, "    approvals: %s; human touches: %s\n", ApprovalsLine(t.Approvals), TouchesLine(t.Summary))
		fmt.Fprintf(&b, "    queue waits: %s\n", WaitLine(t.QueueWait))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// idleCell is a row's idle GPU-hours in the text's table: "not measured" without telemetry.
func idleCell(f Figures) string {
	if !f.IdleMeasured() {
		return "not measured"
	}
	return two(f.Idle())
}

// Text is WriteText into a string.
func (r *Report) Text() string {
	var b strings.Builder
	_ = r.WriteText(&b) // a strings.Builder does not fail
	return b.String()
}

// TeamLine is one team's week in a line (in a person's own report, their part of it).
func (r *Report) TeamLine(t *Team) string {
	quota := ""
	if t.GPUHoursQuotaShare != nil {
		quota = fmt.Sprintf(" of %s (%s of its weekly GPU-hours)", two(t.GPUHoursQuota), pct(t.GPUHoursQuotaShare))
	}
	used := two(t.GPUHours) + " GPU-hours" + quota
	if r.Scope.User != "" {
		// A person's own report: their hours, and what share of the team's quota they are, not
		// the team's figures.
		used = "your " + two(t.GPUHours) + " GPU-hours"
		if t.GPUHoursQuotaShare != nil {
			used += fmt.Sprintf(", %s of the team's weekly quota of %s GPU-hours", pct(t.GPUHoursQuotaShare), two(t.GPUHoursQuota))
		}
	}
	s := fmt.Sprintf("%s: %s, %s; %s, reclaimed %s; %s", t.Name, used,
		r.Money(t.Cost), idleHoursText(t.Figures, true), two(t.ReclaimedGPUHours), leasesCount(t.Leases))
	if !t.Listed {
		s += "; not in the policy (default quota)"
	}
	return s
}

func (r *Report) increaseLine(q QuotaIncrease) string {
	s := fmt.Sprintf("%s team %s +%s, %s to %s, %s GPU-hours this week", q.Lease, q.Team, qm.GPUCount(q.GPUs, q.Class), r.when(q.From), r.when(q.Until), two(q.GPUHours))
	if q.By != "" {
		s += ", approved by " + q.By
	}
	if q.Because != "" {
		s += ", because " + q.Because
	}
	return s
}

func (r *Report) firstLine(t *Team) string {
	s := fmt.Sprintf("%s asked for GPUs for the first time on %s", t.Name, r.when(*t.FirstRequest))
	if t.FirstLogin != nil {
		s += fmt.Sprintf(" (first signed in on %s)", r.when(*t.FirstLogin))
	}
	if t.TimeToFirstGPU != nil {
		s += "; time to first GPU " + dur(t.TimeToFirstGPU)
		if t.FirstLogin != nil {
			// It runs from the sign-in in brackets, not from the request named first.
			s += ", from the first sign-in"
		}
		return s
	}
	return s + "; no workspace has started yet"
}

// writeTable writes rows as columns: the first left columns aligned left, the others right.
func writeTable(b *strings.Builder, rows [][]string, left int) {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var line strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				line.WriteString("  ")
			}
			if i < left {
				line.WriteString(c + pad)
			} else {
				line.WriteString(pad + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// quotaAtMost is the most GPUs of the row's class its team's quota allowed at once during the
// week: the quota without increases, plus the most that approved increases added at once. The
// row's QuotaGPUs, the quota at the week's start, already holds the increases then in effect.
func (r *Report) quotaAtMost(row Row) int {
	return quotaMost(r.QuotaIncreases, row.Team, row.Class, r.From, row.QuotaGPUs)
}

// quotaMost is the most GPUs of class the team's quota allowed at once during the week that
// begins at from, where atStart is its quota then (the increases then in effect included).
func quotaMost(increases []QuotaIncrease, team, class string, from time.Time, atStart int) int {
	inEffect := func(t time.Time) int { // GPUs the increases in effect at t added
		n := 0
		for _, q := range increases {
			if q.Team == team && q.Class == class && !q.From.After(t) && q.Until.After(t) {
				n += q.GPUs
			}
		}
		return n
	}
	base := atStart - inEffect(from)
	most := atStart
	for _, q := range increases {
		if q.Team == team && q.Class == class && q.From.After(from) {
			most = max(most, base+inEffect(q.From))
		}
	}
	return most
}

// peakOf is a row's peak GPUs against its quota at the week's start, for the table: "4 of 2", and
// "4 of 2 (+2)" where quota increases raised it by 2 GPUs at most during the week.
func (r *Report) peakOf(row Row) string {
	s := fmt.Sprintf("%d of %d", row.PeakGPUs, row.QuotaGPUs)
	if extra := r.quotaAtMost(row) - row.QuotaGPUs; extra > 0 {
		s += fmt.Sprintf(" (+%d)", extra)
	}
	return s
}
