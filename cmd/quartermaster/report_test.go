package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image/png"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/schedule"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/reports/showback"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenWeek is a scripted week on the simulated cluster and the example policy, 2026-W48 (Monday
// 23 November to Sunday 29 November, America/Chicago). Every lease's hours are in the comments;
// the test checks the report's figures against them.
const goldenWeek = `# Sunday 22 Nov 22:00 CST, in 2026-W47
bob@acme.example: /gpu request 1 interactive 4h
lee@acme.example: /gpu request 1 interactive 1h
:advance 11h
# Monday 09:00: 2 train GPUs for 8h, idle from 10:00, warned at 12:00, reclaimed at 12:30
maya@acme.example: /gpu request 2 train 8h
:advance 1h
:util L-3 0
:advance 24h
# Tuesday 10:00: 2 interactive GPUs need dana's approval; she gives it at 10:30
alice@acme.example: /gpu request 2 interactive 2h
:advance 30m
dana@acme.example: /gpu approve L-4
:advance 22h30m
# Wednesday 09:00: a quota increase, approved by lee at 09:15, for two days
maya@acme.example: /gpu quota request +8 train for 2d because paper deadline
:advance 15m
lee@acme.example: /gpu approve L-5
:advance 28h45m
# Thursday 14:00: the shared interactive GPUs (4) fill up; team platform's first lease waits
alice@acme.example: /gpu request 1 interactive 2h
bob@acme.example: /gpu request 1 interactive 2h
maya@acme.example: /gpu request 1 interactive 2h
lee@acme.example: /gpu request 1 interactive 2h
platform-leads@acme.example: /gpu request 1 interactive 3h
:advance 1h
# 15:00: bob lets go; platform's lease starts
bob@acme.example: /gpu release L-7
:advance 80h
# Sunday 29 Nov 23:00: a lease into the next week
bob@acme.example: /gpu request 1 interactive 3h
# Monday 30 Nov 09:00: the weekly showback is posted
:advance 10h30m
`

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/quartermaster -run %s -update writes it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./cmd/quartermaster -run %s -update rewrites it):\n--- got\n%s\n--- want\n%s", name, t.Name(), got, want)
	}
}

// runCLI runs quartermaster with args and returns its standard output, standard error and code.
func runCLI(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func approx(a, b float64) bool { return math.Abs(a-b) < 0.005 }

// The scripted week's showback: GPU-hours, costs, idle and reclaimed hours and the KPIs come out
// as computed by hand from the leases, in the console's post and in quartermaster report's text,
// CSV and JSON (golden files).
func TestShowbackGoldenWeek(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	msgs := runConsoleAt(t, dir, "2026-11-23T04:00:00Z", goldenWeek)
	var post *message
	var dms []message
	for i, m := range msgs {
		switch {
		case m.To == "#gpu-showback":
			post = &msgs[i]
		case strings.HasPrefix(m.Text, "Your GPU showback for 2026-W48"):
			dms = append(dms, m)
		}
	}
	if post == nil {
		t.Fatalf("no showback was posted on Monday; the console said %+v", msgs[len(msgs)-3:])
	}
	for _, want := range []string{"GPU showback, 2026-W48 (Mon 23 Nov – Sun 29 Nov 2026): 24.00 GPU-hours, $39.80, 20.8% of it idle",
		"1. language — $28.10", "New team: platform asked for GPUs for the first time on Thu 26 Nov 14:00 CST; time to first GPU 1h"} {
		if !strings.Contains(post.Text, want) {
			t.Errorf("the post lacks %q:\n%s", want, post.Text)
		}
	}
	if len(post.Files) != 2 {
		t.Fatalf("the post names %v, want the chart and the CSV", post.Files)
	}
	for _, f := range post.Files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("the post names %s: %v", f, err)
		}
		if strings.HasSuffix(f, ".png") {
			if _, err := png.Decode(bytes.NewReader(b)); err != nil {
				t.Errorf("%s is not a PNG: %v", f, err)
			}
		}
	}
	// platform is in no team of the policy, so it has no budget owner: its lines go to the
	// platform admins.
	if len(dms) != 3 || dms[0].To != "dana@acme.example" || dms[1].To != "lee@acme.example" ||
		!strings.Contains(dms[1].Text, "team language used 11.00 GPU-hours ($28.10)") ||
		dms[2].To != "platform-leads@acme.example" || !strings.Contains(dms[2].Text, "team platform used 3.00 GPU-hours ($2.70)") {
		t.Errorf("budget owners' and admins' DMs: %+v", dms)
	}

	db := "sqlite:" + filepath.Join(dir, "quartermaster.db")
	base := []string{"report", "--db", db, "--week", "2026-W48", "--now", "2026-11-30T15:30:00Z"}
	outputs := map[string]string{}
	for _, f := range []string{"text", "csv", "json"} {
		out, errs, code := runCLI(append(base, "--format", f)...)
		if code != 0 {
			t.Fatalf("report --format %s: exit %d: %s", f, code, errs)
		}
		outputs[f] = out
	}
	golden(t, "showback-2026-W48.txt", []byte(outputs["text"]))
	golden(t, "showback-2026-W48.csv", []byte(outputs["csv"]))
	golden(t, "showback-2026-W48.json", []byte(outputs["json"]))
	csvFile, err := os.ReadFile(post.Files[1])
	if err != nil || string(csvFile) != outputs["csv"] {
		t.Errorf("the posted CSV differs from quartermaster report's (%v)", err)
	}

	var r showback.Report
	if err := json.Unmarshal([]byte(outputs["json"]), &r); err != nil {
		t.Fatal(err)
	}
	rows := map[string]showback.Row{}
	for _, x := range r.Rows {
		rows[x.Team+"/"+x.Class] = x
	}
	for key, want := range map[string]struct {
		gpuHours, cost, idle, reclaimed float64
		leases, peak                    int
	}{
		// L-1 Mon 00:00-02:00 (2), L-4 2 GPUs 10:30-12:30 (4), L-6 (2), L-7 14:00-15:00 (1), L-11 Sun 23:00-24:00 (1)
		"vision/interactive": {10, 9.00, 0, 0, 5, 2},
		"vision/train":       {0, 0, 0, 0, 0, 0},
		// L-8 and L-9, 2h each
		"language/interactive": {4, 3.60, 0, 0, 2, 2},
		// L-3: 2 GPUs 09:00-12:30 (7), idle 10:00-12:30 (5), reclaimed 12:30-17:00 (9)
		"language/train": {7, 24.50, 5, 9, 1, 2},
		// L-10: 15:00-18:00
		"platform/interactive": {3, 2.70, 0, 0, 1, 1},
	} {
		got, ok := rows[key]
		if !ok {
			t.Errorf("no row %s", key)
			continue
		}
		if !approx(got.GPUHours, want.gpuHours) || !approx(got.Cost, want.cost) || !approx(got.Idle(), want.idle) ||
			!approx(got.ReclaimedGPUHours, want.reclaimed) || got.Leases != want.leases || got.PeakGPUs != want.peak {
			t.Errorf("%s = %.2f GPU-h, $%.2f, %.2f idle, %.2f reclaimed, %d leases, peak %d; want %+v",
				key, got.GPUHours, got.Cost, got.Idle(), got.ReclaimedGPUHours, got.Leases, got.PeakGPUs, want)
		}
	}
	if u := rows["language/train"].MeanUtilization; u == nil || !approx(*u, 60.0*2/7) {
		t.Errorf("language/train utilization %v, want 60%% for 2 of its 7 GPU-hours", u)
	}
	if s := rows["vision/interactive"].PeakQuotaShare; s == nil || !approx(*s, 0.5) {
		t.Errorf("vision/interactive peak quota share %v, want 2 of 4", s)
	}
	if s := rows["platform/train"].PeakQuotaShare; s != nil {
		t.Errorf("platform has no train quota, yet its peak share is %v", *s)
	}
	tot := r.Total
	if !approx(tot.GPUHours, 24) || !approx(tot.Cost, 39.80) || !approx(tot.Idle(), 5) || !approx(tot.ReclaimedGPUHours, 9) || tot.Leases != 9 {
		t.Errorf("total = %+v, want 24 GPU-h, $39.80, 5 idle, 9 reclaimed, 9 leases", tot.Figures)
	}
	if tot.MeanUtilization == nil || !approx(*tot.MeanUtilization, 47.5) {
		t.Errorf("mean utilization %v, want 47.5%% (60%% on 19 of 24 GPU-hours)", tot.MeanUtilization)
	}
	// 2026-W47: L-1 Sun 22:00-24:00 and L-2's hour.
	if !approx(tot.Previous.GPUHours, 3) || !approx(tot.Change.GPUHours, 21) || !approx(tot.Change.Cost, 37.10) || tot.Change.GPUHoursPct == nil || !approx(*tot.Change.GPUHoursPct, 700) {
		t.Errorf("change = %+v from %+v, want +21 GPU-h (+700%%), +$37.10 from 3 GPU-h", tot.Change, tot.Previous.GPUHours)
	}
	a := tot.Approvals
	if a.Requests != 2 || a.Approved != 2 || a.MedianLatency == nil || a.MedianLatency.Duration() != 22*time.Minute+30*time.Second ||
		a.P90Latency == nil || a.P90Latency.Duration() != 30*time.Minute {
		t.Errorf("approvals = %+v, want 2 approved (after 30m and 15m), median 22m30s (their mean), p90 30m", a)
	}
	// Per 100 leases: 2 human decisions and the week's 9 leases (its 9 requests are not the divisor).
	if tot.Requests != 9 || tot.HumanTouches != 2 || tot.Leases != 9 || tot.TouchesPer100 == nil || !approx(*tot.TouchesPer100, 200.0/9) {
		t.Errorf("touches = %d on %d requests, %d leases (%v per 100 leases), want 2 on 9, 9 leases", tot.HumanTouches, tot.Requests, tot.Leases, tot.TouchesPer100)
	}
	q := tot.QueueWait
	// Predicted against actual is over platform's lease alone, the one that waited in the queue (1h,
	// told 2h): the seven that started at once were told no wait.
	if q.Started != 8 || q.P50 == nil || q.P50.Duration() != 0 || q.P90 == nil || q.P90.Duration() != time.Hour ||
		q.Queued != 1 || q.QueuedP50 == nil || q.QueuedP50.Duration() != time.Hour || q.Predicted != 1 || q.PredictedP50 == nil || q.PredictedP50.Duration() != 2*time.Hour {
		t.Errorf("queue waits = %+v, want 8 started, p50 0, p90 1h (platform's); 1 waited in the queue, 1h against a predicted 2h", q)
	}
	teams := map[string]*showback.Team{}
	for _, tm := range r.Teams {
		teams[tm.Name] = tm
	}
	pl := teams["platform"]
	if pl == nil || pl.Listed || pl.FirstRequest == nil || pl.TimeToFirstGPU == nil || pl.TimeToFirstGPU.Duration() != time.Hour {
		t.Fatalf("team platform = %+v, want a new unlisted team with 1h to its first GPU", pl)
	}
	if teams["vision"].FirstRequest != nil || teams["language"].FirstRequest != nil {
		t.Error("vision or language counted as new, though both had leases in 2026-W47")
	}
	lang := teams["language"]
	if !approx(lang.GPUHoursQuota, 300+8*48) || !approx(*lang.GPUHoursQuotaShare, 11.0/684) {
		t.Errorf("language's GPU-hour quota %.2f, share %v; want 300 + 8 GPUs × 48h and 11 of it", lang.GPUHoursQuota, lang.GPUHoursQuotaShare)
	}
	if len(r.QuotaIncreases) != 1 || r.QuotaIncreases[0].Lease != "L-5" || r.QuotaIncreases[0].By != "lee@acme.example" || !approx(r.QuotaIncreases[0].GPUHours, 384) {
		t.Errorf("quota increases = %+v", r.QuotaIncreases)
	}
	if !r.Complete || r.Week != "2026-W48" {
		t.Errorf("week %s complete %v", r.Week, r.Complete)
	}

	// /gpu report: a platform admin sees every team, a budget owner their own, anyone else their
	// own use. The console restarted on the same database does not post the week again.
	later := runConsoleAt(t, dir, "2026-11-30T16:00:00Z", `platform-leads@acme.example: /gpu report 2026-W48
dana@acme.example: /gpu report
alice@acme.example: /gpu report 2026-W48
dana@acme.example: /gpu report 2026-W48 language
`)
	if len(later) != 4 {
		t.Fatalf("four /gpu report answers expected, got %+v", later)
	}
	admin, owner, member, other := later[0].Text, later[1].Text, later[2].Text, later[3].Text
	if !strings.Contains(admin, "Acme AI GPU showback, 2026-W48") || !strings.Contains(admin, "24.00 GPU-hours, $39.80") ||
		!strings.Contains(admin, "language: 11.00") || !strings.Contains(admin, "platform: 3.00") || !strings.Contains(admin, "vision: 10.00") {
		t.Errorf("the platform admin's report: %s", admin)
	}
	if !strings.Contains(owner, "GPU showback of team vision, 2026-W48") || !strings.Contains(owner, "10.00 GPU-hours, $9.00") || strings.Contains(owner, "language:") {
		t.Errorf("dana's report (vision's budget owner, last complete week): %s", owner)
	}
	// alice: L-4 (4), L-6 (2).
	if !strings.Contains(member, "GPU usage of alice@acme.example, 2026-W48") || !strings.Contains(member, "6.00 GPU-hours, $5.40") || strings.Contains(member, "language") {
		t.Errorf("alice's report: %s", member)
	}
	if !strings.HasPrefix(other, "Only platform admins and the budget owner of team language (lee@acme.example) see its showback") {
		t.Errorf("dana asking for language: %s", other)
	}
	for _, m := range later {
		if m.To == "#gpu-showback" {
			t.Errorf("the week was posted again after a restart: %s", m.Text)
		}
	}
}

// A week can be named the way people say it: "this week" is the week in progress (so far), "last
// week" the last complete one, in chat with or without a team and on the command line.
func TestReportOfThisWeekAndLastWeek(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	during := runConsoleAt(t, dir, "2026-11-24T15:00:00Z", `alice@acme.example: /gpu request 1 interactive 2h
:advance 3h
dana@acme.example: /gpu report this week
`)
	if got := during[len(during)-1].Text; !strings.HasPrefix(got, "Acme AI GPU showback of team vision, 2026-W48 (Mon 23 Nov – Sun 29 Nov 2026), so far: 2.00 GPU-hours, $1.80") {
		t.Errorf("this week, while it is in progress: %s", got)
	}
	after := runConsoleAt(t, dir, "2026-12-01T15:00:00Z", `dana@acme.example: /gpu report Last Week
dana@acme.example: /gpu report this week vision
dana@acme.example: /gpu report last week ghost
`)
	var chat []message
	for _, m := range after {
		if m.To == "dana@acme.example" && !strings.HasPrefix(m.Text, "Your GPU showback") {
			chat = append(chat, m)
		}
	}
	if len(chat) != 3 {
		t.Fatalf("three answers to dana expected, got %+v", after)
	}
	if !strings.HasPrefix(chat[0].Text, "Acme AI GPU showback of team vision, 2026-W48 (Mon 23 Nov – Sun 29 Nov 2026): 2.00 GPU-hours") {
		t.Errorf("last week, a week later: %s", chat[0].Text)
	}
	if !strings.HasPrefix(chat[1].Text, "Acme AI GPU showback of team vision, 2026-W49 (Mon 30 Nov – Sun 6 Dec 2026), so far: 0.00 GPU-hours") {
		t.Errorf("this week with a team: %s", chat[1].Text)
	}
	if want := `There is no team "ghost"; the team whose showback you see is vision. Example: /gpu report 2026-W48 vision`; chat[2].Text != want {
		t.Errorf("last week and an unknown team = %q, want %q", chat[2].Text, want)
	}

	out := filepath.Join(dir, "last.csv")
	db := "sqlite:" + filepath.Join(dir, "quartermaster.db")
	if _, stderr, code := runCLI("report", "--db", db, "--now", "2026-12-01T15:00:00Z", "--week", "last week", "--format", "csv", "--out", out); code != 0 {
		t.Fatalf("report --week 'last week': exit %d: %s", code, stderr)
	}
	csv, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(csv), "2026-W48") || strings.Contains(string(csv), "2026-W49") {
		t.Errorf("report --week 'last week' wrote %q (%v), want 2026-W48", csv, err)
	}
}

// Budget owners and platform admins named by group in the policy are each member of the group:
// every member gets the owner's DM, sees the team's report and the team's leases, and a member
// of the fallback approvers' group sees every team.
func TestShowbackOwnersAndAdminsNamedByGroup(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pol := string(b)
	for _, r := range [][2]string{
		{"budget_owners: [dana@acme.example]", "budget_owners: [vision-leads]"},
		{"fallback_approvers: [platform-leads@acme.example]", "fallback_approvers: [platform]"},
		{"{user: dana@acme.example, groups: [ai-vision, leads]", "{user: dana@acme.example, groups: [ai-vision, leads, vision-leads]"},
		{"{user: bob@acme.example, groups: [ai-vision]", "{user: bob@acme.example, groups: [ai-vision, vision-leads]"},
		{"  - {user: platform-leads@acme.example, groups: [platform]}", "  - {user: platform-leads@acme.example, groups: [platform]}\n  - {user: pat@acme.example, groups: [platform]}"},
	} {
		if !strings.Contains(pol, r[0]) {
			t.Fatalf("the example policy has no %q", r[0])
		}
		pol = strings.Replace(pol, r[0], r[1], 1)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "groups.yaml")
	if err := os.WriteFile(file, []byte(pol), 0o600); err != nil {
		t.Fatal(err)
	}
	msgs := runConsoleAt(t, dir, "2026-11-24T15:00:00Z", `alice@acme.example: /gpu request 1 interactive 2h
:advance 6d1h
bob@acme.example: /gpu report
pat@acme.example: /gpu report 2026-W48
pat@acme.example: /gpu status L-1
`, "--policy", file)
	dms := map[string]string{}
	for _, m := range msgs {
		if strings.HasPrefix(m.Text, "Your GPU showback for 2026-W48") {
			dms[m.To] = m.Text
		}
		if m.To == "vision-leads" || m.To == "platform" {
			t.Errorf("a message went to the group's name: %+v", m)
		}
	}
	for _, who := range []string{"bob@acme.example", "dana@acme.example"} {
		if !strings.Contains(dms[who], "team vision used 2.00 GPU-hours") {
			t.Errorf("%s, in the vision-leads group, got the owner's DM %q", who, dms[who])
		}
	}
	if len(dms) != 3 || dms["lee@acme.example"] == "" {
		t.Errorf("owner DMs went to %v, want bob, dana and lee", slices.Sorted(maps.Keys(dms)))
	}
	chat := msgs[len(msgs)-3:]
	if !strings.HasPrefix(chat[0].Text, "Acme AI GPU showback of team vision, 2026-W48") {
		t.Errorf("bob, a budget owner by group, asking for /gpu report: %s", chat[0].Text)
	}
	if !strings.HasPrefix(chat[1].Text, "Acme AI GPU showback, 2026-W48") || !strings.Contains(chat[1].Text, "language:") {
		t.Errorf("pat, a platform admin by group, asking for /gpu report 2026-W48: %s", chat[1].Text)
	}
	if !strings.Contains(chat[2].Text, "L-1") || strings.Contains(chat[2].Text, "You have no lease") {
		t.Errorf("pat asking for the status of alice's lease: %s", chat[2].Text)
	}
}

// Where the policy's clocks are not a whole number of hours from UTC (India, +5:30), the usage
// telemetry saw is counted in the week it was seen in: a lease from Sunday 23:00 to Monday 01:00
// was observed one GPU-hour in each week, not one and a half in the first.
func TestUsageIsCountedInItsWeekInAHalfHourZone(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "kolkata.yaml")
	pol := strings.Replace(string(b), "timezone: America/Chicago", "timezone: Asia/Kolkata", 1)
	if err := os.WriteFile(file, []byte(pol), 0o600); err != nil {
		t.Fatal(err)
	}
	runConsoleAt(t, dir, "2026-11-22T17:30:00Z", "alice@acme.example: /gpu request 1 interactive for 2h\n:advance 8d\n", "--policy", file)
	db := "sqlite:" + filepath.Join(dir, "quartermaster.db")
	for _, week := range []string{"2026-W47", "2026-W48"} {
		out, stderr, code := runCLI("report", "--policy", file, "--db", db, "--now", "2026-12-01T12:00:00Z", "--week", week, "--format", "json")
		if code != 0 {
			t.Fatalf("report %s: exit %d: %s", week, code, stderr)
		}
		var r struct {
			Total struct {
				GPUHours float64 `json:"gpu_hours"`
				Observed float64 `json:"observed_gpu_hours"`
			} `json:"total"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("report %s: %v", week, err)
		}
		if r.Total.GPUHours != 1 || r.Total.Observed != 1 {
			t.Errorf("%s: %.2f GPU-hours, %.2f observed by telemetry; want 1 and 1 (Sun 23:00 to Mon 01:00 IST)", week, r.Total.GPUHours, r.Total.Observed)
		}
	}
}

// Bad input gets one sentence and an example that works, and nothing is written or posted: an
// unknown week, a malformed one, a team that does not exist, an unknown format, a schedule the
// policy cannot read.
func TestReportRefusesBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	msgs := runConsoleAt(t, dir, "2026-11-24T15:00:00Z", `alice@acme.example: /gpu request 1 interactive 2h
:advance 3h
lee@acme.example: /gpu report 2026-W54
lee@acme.example: /gpu report last tuesday
lee@acme.example: /gpu report 2026-W48 ghost
lee@acme.example: /gpu report 2099-W10
lee@acme.example: /gpu report 2019-W01
lee@acme.example: /gpu report nextweek
lee@acme.example: /gpu report 2026-W48
`)
	chat := msgs[3:] // after the grant, the warning before its end and the expiry
	for i, want := range []string{
		`"2026-W54" is not a week: 2026 has weeks 1 to 53; write a week as YEAR-Wnn, such as 2026-W48, or this week or last week. Example: /gpu report 2026-W48`,
		`"last tuesday" is not an ISO week; write a week as YEAR-Wnn, such as 2026-W48, or this week or last week. Example: /gpu report 2026-W48`,
		`There is no team "ghost"; the team whose showback you see is language. Example: /gpu report 2026-W48 language`,
		`2099-W10 has not begun yet (it starts Mon 2 Mar 2099); the last complete week is 2026-W47. Example: /gpu report 2026-W48`,
		`There is no history for 2019-W01: the first lease was asked for in 2026-W48. Example: /gpu report 2026-W48`,
		`"nextweek" is neither a week (like 2026-W48) nor a team; the team whose showback you see is language. Example: /gpu report 2026-W48 language`,
	} {
		if i >= len(chat) || chat[i].Text != want {
			t.Errorf("chat answer %d = %+v, want %q", i, chat[i], want)
		}
	}
	// Every example above names a week with history (the week in progress: the last complete
	// week, 2026-W47, began before the first lease), and it works as given.
	if len(chat) < 7 || strings.Contains(chat[6].Text, "Example:") || !strings.Contains(chat[6].Text, "2026-W48") || len(chat[6].Files) == 0 {
		t.Errorf("the example week's report = %+v, want the report of 2026-W48", chat[6:])
	}
	for _, m := range msgs[:len(msgs)-1] {
		if m.To == "#gpu-showback" || len(m.Files) > 0 {
			t.Errorf("bad input posted or wrote something: %+v", m)
		}
	}

	db := "sqlite:" + filepath.Join(dir, "quartermaster.db")
	out := filepath.Join(dir, "out.csv")
	// Each refusal's example is the command as typed, put right.
	for _, c := range []struct {
		args  []string
		want  string
		fixed string
	}{
		{[]string{"--week", "2026-W54"}, `"2026-W54" is not a week: 2026 has weeks 1 to 53; write a week as YEAR-Wnn, such as 2026-W48, or this week or last week`, "--week 2026-W48"},
		{[]string{"--week", "last tuesday"}, `"last tuesday" is not an ISO week; write a week as YEAR-Wnn, such as 2026-W48, or this week or last week`, "--week 2026-W48"},
		{[]string{"--week", "2099-W10"}, `2099-W10 has not begun yet (it starts Mon 2 Mar 2099); the last complete week is 2026-W48`, "--week 2026-W48"},
		{[]string{"--week", "2026-W48", "--team", "ghost"}, `there is no team "ghost"; the teams are language and vision`, "--week 2026-W48 --team language"},
		// A week before the history and an unknown team: the sentence says both, and the
		// example puts both right.
		{[]string{"--week", "2026-W40", "--team", "ghost"}, `there is no history for 2026-W40: the first lease was asked for in 2026-W48; and there is no team "ghost"; the teams are language and vision`, "--week 2026-W48 --team language"},
		// A good week with an unknown team: the example keeps the week asked for.
		{[]string{"--week", "2026-W49", "--team", "ghost"}, `there is no team "ghost"; the teams are language and vision`, "--week 2026-W49 --team language"},
		{[]string{"--week", "2026-W48", "--format", "xlsx"}, `--format "xlsx" is not one of text, csv, json, png`, "--week 2026-W48 --format csv"},
		// In the week the history began, the week offered is that one: the week before has none.
		{[]string{"--now", "2026-11-25T15:00:00Z", "--week", "2026-W"}, `"2026-W" is not an ISO week; write a week as YEAR-Wnn, such as 2026-W48, or this week or last week`, "--now 2026-11-25T15:00:00Z --week 2026-W48"},
	} {
		base := []string{"--db", db, "--now", "2026-12-01T15:00:00Z", "--format", "csv", "--out", out}
		args := append(append([]string{"report"}, base...), c.args...)
		_, stderr, code := runCLI(args...)
		// A flag typed twice is given once, where it was typed last (the value the report reads).
		var kept []string
		for i := 0; i < len(base); i += 2 {
			if !slices.Contains(c.args, base[i]) {
				kept = append(kept, base[i:i+2]...)
			}
		}
		typed := "quartermaster report " + strings.Join(kept, " ") + " " + c.fixed
		want := "quartermaster report: " + c.want + "; e.g. " + typed
		if code != 2 || strings.TrimSpace(stderr) != want {
			t.Errorf("report %v: exit %d, %q; want exit 2 and %q", c.args, code, stderr, want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("report %v wrote %s", c.args, out)
		}
	}
	if _, stderr, code := runCLI("report", "--db", db, "--now", "2026-12-01T15:00:00Z", "--week", "2026-W48", "--format", "csv", "--out", out); code != 0 {
		t.Fatalf("a good report failed: %s", stderr)
	}
	if b, err := os.ReadFile(out); err != nil || !strings.HasPrefix(string(b), "week,team,class,gpu_hours,cost,idle_gpu_hours,reclaimed_gpu_hours,leases") {
		t.Fatalf("the good report wrote %q, %v", b, err)
	}

	policyFile := filepath.Join(dir, "bad.yaml")
	src, err := os.ReadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(policyFile, []byte(strings.Replace(string(src), `"MON 09:00"`, `"mondays at 9"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI("policy", "check", policyFile)
	if code != 1 || !strings.Contains(stderr, `schedule "mondays at 9" is not a weekday and a 24-hour time; write e.g. "MON 09:00"`) {
		t.Errorf("policy check of a bad schedule: exit %d, %s", code, stderr)
	}
	if _, stderr, code := runCLI("report", "--db", db, "--policy", policyFile); code == 0 || !strings.Contains(stderr, "mondays at 9") {
		t.Errorf("report on a policy with a bad schedule: exit %d, %s", code, stderr)
	}
}

// showbackSlack is a fake of the Slack Web API methods the weekly showback calls, recording what
// was posted and shared where.
type showbackSlack struct {
	*httptest.Server
	mu     sync.Mutex
	posts  []string // channel: text
	shared []string // channel: file titles
	files  map[string]int
	// unreachable are the emails users.lookupByEmail finds no one for (someone who left).
	unreachable map[string]bool
}

func newShowbackSlack(t *testing.T) *showbackSlack {
	f := &showbackSlack{files: map[string]int{}}
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, v string) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, v)
	}
	mux.HandleFunc("/chat.postMessage", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		f.mu.Lock()
		f.posts = append(f.posts, r.Form.Get("channel")+": "+r.Form.Get("text"))
		f.mu.Unlock()
		reply(w, fmt.Sprintf(`{"ok":true,"channel":%q,"ts":"1.%d"}`, "C"+strings.TrimPrefix(r.Form.Get("channel"), "#"), time.Now().UnixNano()))
	})
	mux.HandleFunc("/users.lookupByEmail", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		f.mu.Lock()
		gone := f.unreachable[r.Form.Get("email")]
		f.mu.Unlock()
		if gone {
			reply(w, `{"ok":false,"error":"users_not_found"}`)
			return
		}
		reply(w, fmt.Sprintf(`{"ok":true,"user":{"id":%q}}`, "U-"+r.Form.Get("email")))
	})
	mux.HandleFunc("/files.getUploadURLExternal", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		id := "F" + strconv.FormatInt(time.Now().UnixNano(), 10)
		reply(w, fmt.Sprintf(`{"ok":true,"upload_url":%q,"file_id":%q}`, f.URL+"/upload/"+id, id))
	})
	mux.HandleFunc("/upload/", func(w http.ResponseWriter, r *http.Request) {
		file, _, err := r.FormFile("file")
		if err != nil {
			http.Error(w, "no file", http.StatusBadRequest)
			return
		}
		b, _ := io.ReadAll(file)
		f.mu.Lock()
		f.files[strings.TrimPrefix(r.URL.Path, "/upload/")] = len(b)
		f.mu.Unlock()
	})
	mux.HandleFunc("/files.completeUploadExternal", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		var fs []struct{ ID, Title string }
		_ = json.Unmarshal([]byte(r.Form.Get("files")), &fs)
		f.mu.Lock()
		for _, x := range fs {
			if f.files[x.ID] > 0 {
				f.shared = append(f.shared, r.Form.Get("channel_id")+": "+x.Title)
			}
		}
		f.mu.Unlock()
		reply(w, `{"ok":true,"files":[{"id":"F1"}]}`)
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func (f *showbackSlack) snapshot() ([]string, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.posts...), append([]string(nil), f.shared...)
}

// serve posts a week it missed while it was down as soon as it starts, with the chart and the CSV,
// and DMs the budget owners; started again, it posts nothing twice.
func TestServePostsAMissedWeekAtStart(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
	st, err := store.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A lease in the week before last: that week and last week are due.
	at := time.Now().Add(-9 * 24 * time.Hour)
	l := &qm.Lease{User: "alice@acme.example", Team: "vision", Class: "interactive", GPUs: 1, State: qm.Expired,
		CreatedAt: at, StartedAt: at, ExpiresAt: at.Add(2 * time.Hour), EndedAt: at.Add(2 * time.Hour)}
	if err := st.Update(context.Background(), nil, func(tx qm.Tx) error { return tx.CreateLease(context.Background(), l) }); err != nil {
		t.Fatal(err)
	}
	st.Close()
	api := newShowbackSlack(t)
	o := serveOptions{slack: slackSettings{BotToken: "xoxb-test", SigningSecret: "shh", APIURL: api.URL}}
	o.app.flags.db = db
	// The weeks due: from the lease's to the last one whose Monday 09:00 has passed.
	loc, _ := time.LoadLocation("America/Chicago")
	sched, _ := schedule.ParseWeekly("MON 09:00", loc)
	want := 0
	for w := showback.WeekOf(at, loc); !showback.WeekOf(sched.Last(time.Now()), loc).Prev().Before(w); w = w.Next() {
		want++
	}
	s := startServe(t, o)
	var posts, shared []string
	deadline := time.Now().Add(60 * time.Second)
	for {
		posts, shared = api.snapshot()
		if n := countPrefix(posts, "#gpu-showback: "); n == want && len(shared) == 2*n && len(posts) == 3*n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no showback within a minute of the start: posts %q, shared %q", posts, shared)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	weeks := countPrefix(posts, "#gpu-showback: ")
	if weeks != want || countPrefix(posts, "U-dana@acme.example: Your GPU showback") != weeks || countPrefix(posts, "U-lee@acme.example: Your GPU showback") != weeks {
		t.Fatalf("posts %q: want each due week once in the channel and once to each budget owner", posts)
	}
	if countPrefix(shared, "Cgpu-showback: GPU-hours and idle GPU-hours per team") != weeks || countPrefix(shared, "Cgpu-showback: Showback ") != weeks {
		t.Fatalf("shared %q: want each week's chart and CSV in the showback channel", shared)
	}
	s = startServe(t, o)
	time.Sleep(time.Second)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if again, _ := api.snapshot(); len(again) != len(posts) {
		t.Fatalf("a restart posted again: %q", again[len(posts):])
	}
}

func countPrefix(list []string, prefix string) int {
	n := 0
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}
