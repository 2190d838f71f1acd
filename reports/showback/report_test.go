package showback_test

import (
	"bytes"
	"encoding/csv"
	"image/png"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-analyze/charts"

	"github.com/acme/quartermaster/docs"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

func examplePolicy(t testing.TB) *policy.Policy {
	t.Helper()
	p, err := policy.Load(docs.ExamplePolicy, docs.ExamplePolicyName)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var chicago = func() *time.Location {
	l, err := time.LoadLocation("America/Chicago")
	if err != nil {
		panic(err)
	}
	return l
}()

func at(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04", s, chicago)
	if err != nil {
		panic(err)
	}
	return t
}

func row(t *testing.T, r *showback.Report, team, class string) showback.Row {
	t.Helper()
	for _, x := range r.Rows {
		if x.Team == team && x.Class == class {
			return x
		}
	}
	t.Fatalf("no row %s/%s in %+v", team, class, r.Rows)
	return showback.Row{}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// A lease that runs over midnight between Sunday and Monday is billed to each week for its hours
// in it, and a week is Monday to Monday in the policy's time zone.
func TestLeaseAcrossTheWeekBoundaryIsSplitAtIt(t *testing.T) {
	p := examplePolicy(t)
	l := &qm.Lease{ID: 1, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 4, State: qm.Expired,
		CreatedAt: at("2026-11-29 22:00"), StartedAt: at("2026-11-29 22:00"), ExpiresAt: at("2026-11-30 02:00"), EndedAt: at("2026-11-30 02:00")}
	for _, c := range []struct {
		week string
		want float64
	}{{"2026-W48", 8}, {"2026-W49", 8}} {
		w, err := showback.ParseWeek(c.week, showback.Week{})
		if err != nil {
			t.Fatal(err)
		}
		r := showback.Build(showback.Input{Policy: p, Week: w, Now: at("2026-12-07 09:00"), Leases: []*qm.Lease{l}})
		got := row(t, r, "vision", "train")
		if !near(got.GPUHours, c.want) || !near(got.Cost, c.want*3.5) || got.Leases != 1 {
			t.Errorf("%s: vision/train = %.2f GPU-hours, %.2f cost, %d leases; want %.0f GPU-hours, $%.2f, 1 lease", c.week, got.GPUHours, got.Cost, got.Leases, c.want, c.want*3.5)
		}
	}
}

// A running lease is billed up to now, never past its expiry, even when the expiry has not been
// noticed yet; an ended one to its end, whenever that was noticed.
func TestBillsEndAtTheLeasesEndAsTheDomainDatesIt(t *testing.T) {
	p := examplePolicy(t)
	overdue := &qm.Lease{ID: 1, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 8, State: qm.Active,
		CreatedAt: at("2026-11-24 12:00"), StartedAt: at("2026-11-24 12:00"), ExpiresAt: at("2026-11-24 14:00")}
	running := &qm.Lease{ID: 2, User: "bob@acme.example", Team: "vision", Class: "interactive", GPUs: 1, State: qm.Active,
		CreatedAt: at("2026-11-25 09:00"), StartedAt: at("2026-11-25 09:00"), ExpiresAt: at("2026-11-25 17:00")}
	ended := &qm.Lease{ID: 3, User: "lee@acme.example", Team: "language", Class: "train", GPUs: 2, State: qm.Released,
		CreatedAt: at("2026-11-23 08:00"), StartedAt: at("2026-11-23 08:00"), ExpiresAt: at("2026-11-23 20:00"), EndedAt: at("2026-11-23 11:30")}
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: at("2026-11-25 15:00"), Leases: []*qm.Lease{overdue, running, ended}})
	if got := row(t, r, "vision", "train").GPUHours; !near(got, 16) {
		t.Errorf("the overdue 8 × train 2h lease bills %.2f GPU-hours, want 16 (to its expiry, not to now)", got)
	}
	if got := row(t, r, "vision", "interactive").GPUHours; !near(got, 6) {
		t.Errorf("the running 1 × interactive lease bills %.2f GPU-hours, want 6 (09:00 to now, 15:00)", got)
	}
	if got := row(t, r, "language", "train").GPUHours; !near(got, 7) {
		t.Errorf("the released 2 × train lease bills %.2f GPU-hours, want 7 (08:00 to 11:30)", got)
	}
	if r.Complete {
		t.Error("a report made on Wednesday says week 48 is complete")
	}
	if !near(r.Total.Cost, 16*3.5+6*0.9+7*3.5) {
		t.Errorf("total cost %.2f, want %.2f", r.Total.Cost, 16*3.5+6*0.9+7*3.5)
	}
}

// The week in which clocks fall back has 169 hours in the policy's time zone.
func TestWeekWithTheDaylightSavingChangeHas169Hours(t *testing.T) {
	p := examplePolicy(t)
	w, _ := showback.ParseWeek("2026-W44", showback.Week{})
	from, to := w.Start(chicago), w.End(chicago)
	if got := to.Sub(from); got != 169*time.Hour {
		t.Fatalf("2026-W44 in Chicago lasts %s, want 169h", got)
	}
	l := &qm.Lease{ID: 1, User: "alice@acme.example", Team: "vision", Class: "interactive", GPUs: 1, State: qm.Active,
		CreatedAt: from.Add(-time.Hour), StartedAt: from.Add(-time.Hour), ExpiresAt: to.Add(time.Hour)}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: to.Add(time.Hour), Leases: []*qm.Lease{l}})
	if got := row(t, r, "vision", "interactive"); !near(got.GPUHours, 169) || !near(*got.MeanQuotaShare, 0.25) || got.PeakGPUs != 1 {
		t.Errorf("a GPU held all week bills %.2f GPU-hours (want 169), mean quota share %v (want 0.25 of 4), peak %d", got.GPUHours, *got.MeanQuotaShare, got.PeakGPUs)
	}
}

// Quota shares follow the quota in effect: an approved increase raises it while it lasts.
func TestQuotaShareCountsApprovedIncreases(t *testing.T) {
	p := examplePolicy(t)
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(chicago)
	inc := &qm.Lease{ID: 1, Kind: qm.KindQuota, User: "alice@acme.example", Team: "language", Class: "train", GPUs: 8, State: qm.Active,
		CreatedAt: from.Add(12 * time.Hour), StartedAt: from.Add(24 * time.Hour), ExpiresAt: from.Add(24*time.Hour + 7*24*time.Hour),
		DecidedBy: "lee@acme.example", DecidedAt: from.Add(24 * time.Hour), Rules: qm.QuotaRule, Because: "deadline"}
	// 16 train GPUs for 12 hours while the quota is 8 + 8.
	big := &qm.Lease{ID: 2, User: "maya@acme.example", Team: "language", Class: "train", GPUs: 16, State: qm.Expired,
		CreatedAt: from.Add(48 * time.Hour), StartedAt: from.Add(48 * time.Hour), ExpiresAt: from.Add(60 * time.Hour), EndedAt: from.Add(60 * time.Hour)}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.Add(8 * 24 * time.Hour), Leases: []*qm.Lease{inc, big}})
	got := row(t, r, "language", "train")
	if got.PeakGPUs != 16 || !near(*got.PeakQuotaShare, 1) || got.QuotaGPUs != 8 {
		t.Errorf("peak %d GPUs, peak share %v, quota at the start %d; want 16, 1 (16 of 8+8), 8", got.PeakGPUs, *got.PeakQuotaShare, got.QuotaGPUs)
	}
	// Mean share: 12h at 16/16 over the 168h week.
	if !near(*got.MeanQuotaShare, 12.0/168) {
		t.Errorf("mean quota share %v, want %v", *got.MeanQuotaShare, 12.0/168)
	}
	var lang *showback.Team
	for _, tm := range r.Teams {
		if tm.Name == "language" {
			lang = tm
		}
	}
	// 300 GPU-hours a week plus 8 GPUs × the 144 hours the increase ran in the week.
	if !near(lang.GPUHoursQuota, 300+8*144) || len(r.QuotaIncreases) != 1 || !near(r.QuotaIncreases[0].GPUHours, 8*144) {
		t.Errorf("GPU-hour quota %.2f (want %d), increases %+v", lang.GPUHoursQuota, 300+8*144, r.QuotaIncreases)
	}
	if lang.Approvals.Requests != 1 || lang.Approvals.Approved != 1 || lang.Approvals.MedianLatency.Duration() != 12*time.Hour {
		t.Errorf("language's approvals = %+v, want one approved after 12h", lang.Approvals)
	}
}

// A lease that starts the moment another of the team's ends does not hold GPUs alongside it: the
// peak counts the GPUs held together for some time, whatever order the leases were asked in.
func TestPeakGPUsWhenOneLeaseStartsAsAnotherEnds(t *testing.T) {
	p := examplePolicy(t)
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	// L-1 (3 GPUs, asked first, approved later) starts at 14:00, as L-2 (1 GPU) expires.
	first := &qm.Lease{ID: 1, User: "alice@acme.example", Team: "vision", Class: "interactive", GPUs: 3, State: qm.Expired,
		CreatedAt: at("2026-11-24 12:00"), StartedAt: at("2026-11-24 14:00"), ExpiresAt: at("2026-11-24 16:00"), EndedAt: at("2026-11-24 16:00")}
	second := &qm.Lease{ID: 2, User: "alice@acme.example", Team: "vision", Class: "interactive", GPUs: 1, State: qm.Expired,
		CreatedAt: at("2026-11-24 13:00"), StartedAt: at("2026-11-24 13:00"), ExpiresAt: at("2026-11-24 14:00"), EndedAt: at("2026-11-24 14:00")}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: at("2026-11-30 10:00"), Leases: []*qm.Lease{first, second}})
	got := row(t, r, "vision", "interactive")
	if got.PeakGPUs != 3 || !near(*got.PeakQuotaShare, 0.75) {
		t.Errorf("peak %d GPUs, peak share %v; want 3 and 0.75 (3 of 4): never 4 at once", got.PeakGPUs, *got.PeakQuotaShare)
	}
}

func TestParseWeekRefusesWeeksThatDoNotExist(t *testing.T) {
	ex := showback.Week{Year: 2026, Num: 48}
	for _, ok := range []string{"2026-W48", "2026w48", " 2026-w01 ", "2026-W53", "2020-W53"} {
		if _, err := showback.ParseWeek(ok, ex); err != nil {
			t.Errorf("ParseWeek(%q): %v", ok, err)
		}
	}
	for in, want := range map[string]string{
		"2026-W54":     `"2026-W54" is not a week: 2026 has weeks 1 to 53; write a week as YEAR-Wnn, such as 2026-W48.`,
		"2027-W53":     `"2027-W53" is not a week: 2027 has weeks 1 to 52`,
		"2026-W00":     `"2026-W00" is not a week`,
		"last tuesday": `"last tuesday" is not an ISO week; write a week as YEAR-Wnn, such as 2026-W48.`,
		"48":           `"48" is not an ISO week`,
		"2026-48":      `"2026-48" is not an ISO week`,
		"":             `"" is not an ISO week`,
	} {
		_, err := showback.ParseWeek(in, ex)
		if err == nil || !strings.Contains(err.Error(), want) || qm.ErrorCode(err) != qm.EINVALID {
			t.Errorf("ParseWeek(%q) = %v, want an EINVALID error containing %q", in, err, want)
		}
	}
}

func FuzzParseWeek(f *testing.F) {
	for _, s := range []string{"2026-W48", "2026-W54", "last tuesday", "9999-W99", "-W1", "2026W"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := showback.ParseWeek(s, showback.Week{Year: 2026, Num: 1})
		if err != nil {
			if qm.ErrorCode(err) != qm.EINVALID {
				t.Fatalf("ParseWeek(%q): %v is not EINVALID", s, err)
			}
			return
		}
		// A week that parses round-trips, and its start is a Monday that lies in it.
		if back, err := showback.ParseWeek(w.String(), showback.Week{}); err != nil || back != w {
			t.Fatalf("%q -> %v -> %v, %v", s, w, back, err)
		}
		st := w.Start(time.UTC)
		if st.Weekday() != time.Monday || showback.WeekOf(st, time.UTC) != w {
			t.Fatalf("%v starts %v", w, st)
		}
	})
}

// The chart is a PNG of the expected size; every team is labelled: the same chart drawn as SVG
// carries each team's name as text, and the chart's data has a bar per team.
// The chart's GPU-hour axis reads as numbers people write: 2.4, never 2.4000000000000004.
func TestChartAxisHasNoFloatingPointNoise(t *testing.T) {
	p := examplePolicy(t)
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(chicago)
	for _, hours := range []int{1, 3, 7, 11} {
		l := &qm.Lease{ID: 1, User: "alice@acme.example", Team: "vision", Class: "interactive", GPUs: 1, State: qm.Expired,
			CreatedAt: from, StartedAt: from, ExpiresAt: from.Add(time.Duration(hours) * time.Hour), EndedAt: from.Add(time.Duration(hours) * time.Hour)}
		r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.Add(8 * 24 * time.Hour), Leases: []*qm.Lease{l}})
		svg, err := r.SVG()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`>([0-9]+\.[0-9]+)</text>`).FindAllStringSubmatch(string(svg), -1) {
			if len(m[1]) > len("0.00") && len(strings.SplitN(m[1], ".", 2)[1]) > 2 {
				t.Errorf("%d GPU-hours: the axis shows %s", hours, m[1])
			}
		}
	}
}

func TestChartLabelsEveryTeam(t *testing.T) {
	p := examplePolicy(t)
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(chicago)
	var leases []*qm.Lease
	teams := []string{"vision", "language"}
	for i := range 48 {
		teams = append(teams, "team-"+string(rune('a'+i/26))+string(rune('a'+i%26)))
	}
	for i, team := range teams {
		leases = append(leases, &qm.Lease{ID: qm.LeaseID(i + 1), User: "u@acme.example", Team: team, Class: "interactive", GPUs: 1, State: qm.Expired,
			CreatedAt: from, StartedAt: from, ExpiresAt: from.Add(time.Duration(i+1) * time.Hour), EndedAt: from.Add(time.Duration(i+1) * time.Hour)})
	}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.Add(8 * 24 * time.Hour), Leases: leases})
	if len(r.Teams) != 50 {
		t.Fatalf("%d teams in the report, want 50", len(r.Teams))
	}
	b, err := r.PNG()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the chart is not a PNG: %v", err)
	}
	wantW, wantH := showback.ChartSize(50)
	if got := img.Bounds().Size(); got.X != wantW || got.Y != wantH {
		t.Errorf("the chart is %dx%d, want %dx%d", got.X, got.Y, wantW, wantH)
	}
	svg, err := r.SVG()
	if err != nil {
		t.Fatal(err)
	}
	labels, busy, idle := r.ChartData()
	if len(labels) != 50 || len(busy) != 50 || len(idle) != 50 {
		t.Fatalf("chart data has %d labels, %d busy, %d idle bars; want 50 each", len(labels), len(busy), len(idle))
	}
	for _, team := range teams {
		if !strings.Contains(string(svg), ">"+team+"</text>") {
			t.Errorf("team %s has no label on the chart", team)
		}
	}
	for _, s := range append(showback.ChartSeries, "GPU-hours per team, 2026-W48") {
		if !strings.Contains(string(svg), s) {
			t.Errorf("the chart lacks %q (legend or title)", s)
		}
	}
}

// The CSV's first columns are the contract, numbers written with a dot and two decimals.
func TestCSVColumnsAndNumbers(t *testing.T) {
	p := examplePolicy(t)
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(chicago)
	l := &qm.Lease{ID: 1, User: "alice@acme.example", Team: "vision", Class: "interactive", GPUs: 1, State: qm.Reclaimed, Reclaimed: 1.25,
		CreatedAt: from, StartedAt: from, ExpiresAt: from.Add(2 * time.Hour), EndedAt: from.Add(45 * time.Minute)}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.Add(8 * 24 * time.Hour), Leases: []*qm.Lease{l}})
	recs, err := csv.NewReader(bytes.NewReader(r.CSV())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recs[0][:8], ","); got != "week,team,class,gpu_hours,cost,idle_gpu_hours,reclaimed_gpu_hours,leases" {
		t.Errorf("header %q", got)
	}
	if len(recs) != 1+2*2 {
		t.Errorf("%d rows, want one per team and class (4)", len(recs)-1)
	}
	// No agent reported on the lease: its idle GPU-hours are not known, so left empty.
	want := "2026-W48,vision,interactive,0.75,0.68,,1.25,1"
	if got := strings.Join(recs[3][:8], ","); got != want {
		t.Errorf("vision's interactive row = %q, want %q", got, want)
	}
}

// The well-connected share counts the multi-GPU leases on one node that started in the week and
// whose NVLink islands placement knew: those in one island against all of them. Single GPUs,
// whole nodes, unknown islands, leases wider than any island of their node and leases that
// started the week before do not count; the share is
// printed in the text and the channel post, and each team has its own.
func TestWellConnectedShareOfMultiGPULeases(t *testing.T) {
	p := examplePolicy(t)
	lease := func(id qm.LeaseID, team string, gpus int, conn qm.Connection, start string) *qm.Lease {
		s := at(start)
		return &qm.Lease{ID: id, User: "alice@acme.example", Team: team, Class: "train", GPUs: gpus, State: qm.Released,
			CreatedAt: s, StartedAt: s, ExpiresAt: s.Add(4 * time.Hour), EndedAt: s.Add(2 * time.Hour), Connection: conn}
	}
	leases := []*qm.Lease{
		lease(1, "vision", 4, qm.ConnectionIsland, "2026-11-23 10:00"),
		lease(2, "vision", 2, qm.ConnectionIsland, "2026-11-24 10:00"),
		lease(3, "vision", 4, qm.ConnectionSpread, "2026-11-25 10:00"),
		lease(4, "language", 8, qm.ConnectionIsland, "2026-11-26 10:00"),
		lease(5, "vision", 4, qm.ConnectionUnknown, "2026-11-26 11:00"), // islands not known
		lease(6, "vision", 16, qm.ConnectionNodes, "2026-11-26 12:00"),  // whole nodes
		lease(7, "vision", 1, qm.ConnectionIsland, "2026-11-26 13:00"),  // one GPU
		lease(8, "vision", 4, qm.ConnectionSpread, "2026-11-20 10:00"),  // the week before
		lease(9, "vision", 2, qm.ConnectionWider, "2026-11-26 14:00"),   // more GPUs than any island holds
	}
	w, err := showback.ParseWeek("2026-W48", showback.Week{})
	if err != nil {
		t.Fatal(err)
	}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: at("2026-11-30 09:00"), Leases: leases})
	c := r.Total.Connectivity
	if c.MultiGPU != 4 || c.OneIsland != 3 || c.Share == nil || !near(*c.Share, 0.75) {
		t.Fatalf("total connectivity %+v; want 3 of 4 in one island", c)
	}
	for _, tm := range r.Teams {
		want := map[string][2]int{"vision": {3, 2}, "language": {1, 1}}[tm.Name]
		if tm.Connectivity.MultiGPU != want[0] || tm.Connectivity.OneIsland != want[1] {
			t.Errorf("team %s: %+v, want %d of %d", tm.Name, tm.Connectivity, want[1], want[0])
		}
	}
	line := "Well connected: 3 of 4 multi-GPU leases on one node got one NVLink island (75.0%)."
	if !strings.Contains(r.Text(), line) {
		t.Errorf("the text lacks %q:\n%s", line, r.Text())
	}
	post := r.Post("#gpu", nil)
	found := false
	for _, f := range post.Sections[0].Fields {
		found = found || (f.Label == "Well connected" && f.Value == "3 of 4 multi-GPU leases on one node got one NVLink island (75.0%)")
	}
	if !found {
		t.Errorf("the channel post lacks the well-connected share: %+v", post.Sections[0].Fields)
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"well_connected_share": 0.75`) {
		t.Errorf("the JSON lacks the share:\n%s", js.String())
	}

	empty := showback.Build(showback.Input{Policy: p, Week: w, Now: at("2026-11-30 09:00"), Leases: leases[4:]})
	if empty.Total.Connectivity.Share != nil || !strings.Contains(empty.Text(), "Well connected: no multi-GPU lease on one node with known NVLink islands started.") {
		t.Errorf("without countable leases: %+v\n%s", empty.Total.Connectivity, empty.Text())
	}
}

// A new team's time to first GPU runs from its first contact: its first sign-in when that came
// before its first request (the report names both), else the first request.
func TestTimeToFirstGPURunsFromTheFirstLogin(t *testing.T) {
	p := examplePolicy(t)
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(chicago)
	l := &qm.Lease{ID: 1, User: "maya@acme.example", Team: "language", Class: "interactive", GPUs: 1, State: qm.Expired,
		CreatedAt: from.Add(30 * time.Hour), StartedAt: from.Add(31 * time.Hour), ExpiresAt: from.Add(33 * time.Hour), EndedAt: from.Add(33 * time.Hour)}
	for _, c := range []struct {
		login    time.Time
		want     time.Duration
		loggedIn bool
	}{
		{from.Add(6 * time.Hour), 25 * time.Hour, true},    // signed in a day before asking
		{time.Time{}, time.Hour, false},                    // never signed in: from the request
		{from.Add(32 * time.Hour), time.Hour, false},       // signed in only after asking
		{from.Add(-72 * time.Hour), 103 * time.Hour, true}, // signed in the week before
	} {
		f := qm.TeamFirst{Team: "language", FirstRequest: l.CreatedAt, FirstLogin: c.login, FirstStart: l.StartedAt}
		r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.Add(8 * 24 * time.Hour), Leases: []*qm.Lease{l}, Firsts: []qm.TeamFirst{f}})
		tm := r.Teams[0]
		if tm.TimeToFirstGPU == nil || tm.TimeToFirstGPU.Duration() != c.want || (tm.FirstLogin != nil) != c.loggedIn {
			t.Errorf("login %v: time to first GPU %v, first login %v; want %v, named %v", c.login, tm.TimeToFirstGPU, tm.FirstLogin, c.want, c.loggedIn)
		}
		text := r.Text()
		if named := strings.Contains(text, "(first signed in on "); named != c.loggedIn {
			t.Errorf("login %v: the text names the first sign-in: %v, want %v:\n%s", c.login, named, c.loggedIn, text)
		}
	}
}

// A team that ran GPUs of a class it has no quota of (by approval) reads its peak in the budget
// owner's message as GPUs at once, not "8 of 0".
func TestOwnerDMPeakWithoutAQuotaOfTheClass(t *testing.T) {
	p := examplePolicy(t)
	s := at("2026-11-24 10:00")
	leases := []*qm.Lease{{ID: 1, User: "platform-leads@acme.example", Team: "platform", Class: "train", GPUs: 8, State: qm.Expired,
		CreatedAt: s, StartedAt: s, ExpiresAt: s.Add(2 * time.Hour), EndedAt: s.Add(2 * time.Hour)}}
	w, err := showback.ParseWeek("2026-W48", showback.Week{})
	if err != nil {
		t.Fatal(err)
	}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: at("2026-11-30 09:00"), Leases: leases})
	dm := r.OwnerDM("platform-leads@acme.example", []string{"platform"}).PlainText()
	if !strings.Contains(dm, "train: 16.00 GPU-hours") || !strings.Contains(dm, "at most 8 GPUs at once (no quota of the class)") || strings.Contains(dm, "of 0 GPUs") {
		t.Errorf("the owner's message on a class without quota:\n%s", dm)
	}
}

// A class removed from the catalog since the week keeps its rows: the GPUs its leases held at
// once, no quota of it, and, for two such classes, rows in name order on every run.
func TestClassesNoLongerInTheCatalogKeepTheirPeakAndOrder(t *testing.T) {
	p := examplePolicy(t)
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	lease := func(id qm.LeaseID, class string, gpus int, from string) *qm.Lease {
		return &qm.Lease{ID: id, User: "alice@acme.example", Team: "vision", Class: class, GPUs: gpus, State: qm.Expired, Price: 2, Priced: true,
			CreatedAt: at(from), StartedAt: at(from), ExpiresAt: at(from).Add(2 * time.Hour), EndedAt: at(from).Add(2 * time.Hour)}
	}
	leases := []*qm.Lease{lease(1, "legacy-v100", 4, "2026-11-24 10:00"), lease(2, "legacy-v100", 2, "2026-11-24 11:00"),
		lease(3, "legacy-a100", 1, "2026-11-25 10:00"), lease(4, "legacy-k80", 3, "2026-11-26 10:00")}
	for range 20 { // the order of the rows must not depend on a map's
		r := showback.Build(showback.Input{Policy: p, Week: w, Now: at("2026-12-07 09:00"), Leases: leases})
		var classes []string
		for _, x := range r.Rows {
			if x.Team == "vision" {
				classes = append(classes, x.Class)
			}
		}
		if got, want := strings.Join(classes, " "), "interactive train legacy-a100 legacy-k80 legacy-v100"; got != want {
			t.Fatalf("vision's rows are %s, want %s (the catalog's classes, then the others by name)", got, want)
		}
		if got := row(t, r, "vision", "legacy-v100"); got.PeakGPUs != 6 || got.QuotaGPUs != 0 || got.PeakQuotaShare != nil || got.MeanQuotaShare != nil {
			t.Fatalf("vision/legacy-v100: peak %d of %d GPUs, peak share %v, mean share %v; want 6 of 0 GPUs at most at once, shares n/a",
				got.PeakGPUs, got.QuotaGPUs, got.PeakQuotaShare, got.MeanQuotaShare)
		}
		if got := row(t, r, "vision", "legacy-k80").PeakGPUs; got != 3 {
			t.Fatalf("vision/legacy-k80: peak %d GPUs, want 3", got)
		}
	}
}

// The numbers along the GPU-hour axis never run into one another, whatever the teams' names
// (up to the 40 characters a name may have) and however many GPU-hours they used, and the axis
// reaches past the longest bar.
func TestChartAxisLabelsDoNotOverlap(t *testing.T) {
	p := examplePolicy(t)
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(chicago)
	measure := charts.NewPainter(charts.PainterOptions{OutputFormat: charts.ChartOutputSVG, Width: 100, Height: 100})
	label := regexp.MustCompile(`<text x="(-?\d+)" y="(\d+)"[^>]*>([0-9.]+)</text>`)
	for _, name := range []string{"vision", "speech-and-audio-research", "team-with-the-longest-name-allowed-x40c"} {
		for _, gpus := range []int{1, 7, 100, 1000, 25000, 400000} {
			var leases []*qm.Lease
			teams := []string{name, "ops"}
			for i, team := range teams {
				end := from.Add(time.Duration(20*(i+1)) * time.Hour)
				leases = append(leases, &qm.Lease{ID: qm.LeaseID(i + 1), User: "u@acme.example", Team: team, Class: "train", GPUs: gpus, State: qm.Expired,
					CreatedAt: from, StartedAt: from, ExpiresAt: end, EndedAt: end})
			}
			r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.Add(8 * 24 * time.Hour), Leases: leases})
			svg, err := r.SVG()
			if err != nil {
				t.Fatal(err)
			}
			type text struct {
				x, y, w int
				s       string
			}
			var axis []text
			bottom := 0
			for _, m := range label.FindAllStringSubmatch(string(svg), -1) {
				x, _ := strconv.Atoi(m[1])
				y, _ := strconv.Atoi(m[2])
				box := measure.MeasureText(m[3], 0, charts.FontStyle{FontSize: 12, FontColor: charts.ColorBlack})
				if y > bottom {
					bottom, axis = y, nil
				}
				if y == bottom {
					axis = append(axis, text{x, y, box.Width(), m[3]})
				}
			}
			if len(axis) < 2 {
				t.Fatalf("%s, %d GPUs: the axis has %d labels: %v", name, gpus, len(axis), axis)
			}
			for i := 1; i < len(axis); i++ {
				if a, b := axis[i-1], axis[i]; a.x+a.w+4 > b.x {
					t.Errorf("%s, %d GPUs: the axis labels %q (x %d, %d wide) and %q (x %d) overlap", name, gpus, a.s, a.x, a.w, b.s, b.x)
				}
			}
			// Round numbers a step apart: 0, 2500, 5000, never 4166.67.
			step, _ := strconv.ParseFloat(axis[1].s, 64)
			for i, a := range axis {
				v, _ := strconv.ParseFloat(a.s, 64)
				if math.Abs(v-float64(i)*step) > 1e-9*step {
					t.Errorf("%s, %d GPUs: the axis reads %v, not a step of %s apart", name, gpus, axis, axis[1].s)
					break
				}
			}
			last, _ := strconv.ParseFloat(axis[len(axis)-1].s, 64)
			if top := r.Teams[1].GPUHours; last < top {
				t.Errorf("%s, %d GPUs: the axis ends at %s, short of the longest bar, %.2f", name, gpus, axis[len(axis)-1].s, top)
			}
		}
	}
}
