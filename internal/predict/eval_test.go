package predict

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestBand(t *testing.T) {
	for _, tc := range []struct {
		wait time.Duration
		want int
	}{
		{0, 0}, {59 * time.Second, 0}, {time.Minute, 1}, {599 * time.Second, 1}, {10 * time.Minute, 2},
		{time.Hour, 3}, {6*time.Hour - time.Second, 3}, {6 * time.Hour, 4}, {100 * time.Hour, 4},
	} {
		if got := Band(tc.wait); got != tc.want {
			t.Errorf("Band(%v) = %d, want %d", tc.wait, got, tc.want)
		}
	}
}

func TestScore(t *testing.T) {
	m := time.Minute
	jobs := []Job{
		{Submit: 0, Start: 0},                // wait 0
		{Submit: 0, Start: 600},              // wait 10m
		{Submit: 0, Start: 7200},             // wait 2h
		{Submit: 0, Start: 30},               // wait 30s
		{Submit: 0, Start: -1, End: 3000},    // left after 50m
		{Submit: 0, Start: -1, End: 50},      // left after 50s
		{Submit: 9000, Start: -1, End: -1},   // still waiting when the trace ends at 10,000: 1,000 s
		{Submit: 0, Start: 120},              // wait 2m
		{Submit: 9500, Start: -1, End: 9500}, // left at once
	}
	ests := []Estimate{
		{Median: 0, P90: 0},             // exact, covered
		{Median: 12 * m, P90: 20 * m},   // off by 2m (>15 % and >60 s), band 2 = band 2, covered, 2x
		{Median: 100 * m, P90: 60 * m},  // off by 20m, band 3 = band 3, missed, 0.5x
		{Median: m, P90: m},             // off by 30s (within 60 s), band 1 vs 0, covered; too short for tightness
		{Median: m, P90: 10 * m},        // left after 50m, past its bound: a miss
		{Median: m, P90: 10 * m},        // left within its bound: left out
		{Median: m, P90: 10 * m},        // censored at 1,000 s, past its bound: a miss
		{Median: 2 * m, P90: Unbounded}, // exact, covered, tightness +Inf
		{Median: m, P90: 0},             // left at once: left out, even with a zero bound
	}
	got := Score("x", jobs, ests, 10000)
	want := Result{
		Predictor:          "x",
		MAEMinutes:         (0 + 2 + 20 + 0.5 + 0) / 5.0,
		MedianAEMinutes:    0.5,
		Within15:           3.0 / 5,
		BandAccuracy:       4.0 / 5,
		P90Coverage:        4.0 / 7,
		P90Scored:          7,
		P90CoverageStarted: 4.0 / 5,
		P90Tightness:       2, // of 0.5, 2, +Inf
		P90Unbounded:       1.0 / 9,
	}
	if !close(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

// More than half of the bounds Unbounded: the tightness is infinite, which JSON writes as null.
func TestResultJSON(t *testing.T) {
	b, err := json.Marshal(Result{Predictor: "x", P90Tightness: math.Inf(1), P90Coverage: 0.5})
	if err != nil || !strings.Contains(string(b), `"p90_tightness":null`) || !strings.Contains(string(b), `"p90_coverage":0.5`) {
		t.Fatalf("%s, %v", b, err)
	}
	b, err = json.Marshal(Result{P90Tightness: 1.5})
	if err != nil || !strings.Contains(string(b), `"p90_tightness":1.5`) {
		t.Fatalf("%s, %v", b, err)
	}
}

func close(a, b Result) bool {
	eq := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	return a.Predictor == b.Predictor && eq(a.MAEMinutes, b.MAEMinutes) && eq(a.MedianAEMinutes, b.MedianAEMinutes) &&
		eq(a.Within15, b.Within15) && eq(a.BandAccuracy, b.BandAccuracy) && eq(a.P90Coverage, b.P90Coverage) &&
		eq(a.P90CoverageStarted, b.P90CoverageStarted) && eq(a.P90Tightness, b.P90Tightness) && eq(a.P90Unbounded, b.P90Unbounded) &&
		a.P90Scored == b.P90Scored
}

func TestBinomialUpperRank(t *testing.T) {
	for _, tc := range []struct {
		n    int
		p    float64
		want int
	}{
		{10, 0.9, 9}, // too few to be 95 % sure: the largest
		{30, 0.5, 19},
		{100, 0.9, 95},
		{1000, 0.5, 526},
		{1000, 0.9, 915},
	} {
		if got := binomialUpperRank(tc.n, tc.p, 0.95); got != tc.want {
			t.Errorf("binomialUpperRank(%d, %v) = %d, want %d", tc.n, tc.p, got, tc.want)
		}
	}
}

func TestBaselines(t *testing.T) {
	obs := func(m Model, user string, waits ...time.Duration) {
		for _, w := range waits {
			m.Observe(Observation{Request: Request{User: user}, Wait: w, Started: true})
		}
	}
	var ramp []time.Duration
	for i := 1; i <= 200; i++ {
		ramp = append(ramp, time.Duration(i)*time.Second)
	}
	r := &Recent{N: 100}
	obs(r, "", ramp...) // keeps 101..200
	if e := r.Predict(Request{}, State{}); e.Median != 150*time.Second || e.P90 != 190*time.Second {
		t.Errorf("recent100 = %+v, want median 150s, p90 190s", e)
	}
	u := &UserRecent{N: 20}
	obs(u, "a", ramp[:100]...)
	obs(u, "b", time.Hour, 3*time.Hour, 2*time.Hour)
	if e := u.Predict(Request{User: "b"}, State{}); e.Median != 2*time.Hour || e.P90 != 3*time.Hour {
		t.Errorf("user_recent(b) = %+v, want 2h, 3h", e)
	}
	if e := u.Predict(Request{User: "new"}, State{}); e.Median != 53*time.Second { // last 100: 4s..100s and b's three
		t.Errorf("user_recent(new) median = %v, want everyone's 53s", e.Median)
	}
	q := &QBETS{N: 1000}
	obs(q, "", ramp[:100]...)
	if e := q.Predict(Request{}, State{}); e.P90 != 96*time.Second || e.Median != 59*time.Second {
		t.Errorf("qbets = %+v, want p90 96s (order statistic 96 of 100), median 59s", e)
	}
	if e := (Zero{}).Predict(Request{}, State{}); e.Median != 0 || e.P90 != 0 {
		t.Errorf("zero = %+v", e)
	}
}

// A one-GPU cluster: each job waits exactly for the one before it, whose requested time is
// its real run time, so the simulation knows every answer without seeing the future.
func TestReplayKnownAnswers(t *testing.T) {
	tr := Trace{Capacity: 1, Jobs: []Job{
		{Submit: 0, Start: 0, End: 100, GPUs: 1, Requested: 100},
		{Submit: 10, Start: 100, End: 400, GPUs: 1, Requested: 300},
		{Submit: 20, Start: 400, End: 450, GPUs: 1, Requested: 50},
		{Submit: 500, Start: 500, End: 600, GPUs: 1, Requested: 100},
	}}
	ests := Replay(tr, New(Config{}))[0]
	for i, want := range []time.Duration{0, 90 * time.Second, 380 * time.Second, 0} {
		if got := ests[i].Situation.Queued; got != want {
			t.Errorf("job %d: simulated queued start %v, want %v", i, got, want)
		}
	}
}

// Changing when a job started and ended must not change its own estimate.
func TestReplayDoesNotSeeTheFuture(t *testing.T) {
	tr := Trace{Capacity: 2}
	for i := range 60 {
		s := int64(i * 50)
		tr.Jobs = append(tr.Jobs, Job{Submit: s, Start: s + int64(i%7)*40, End: s + int64(i%7)*40 + 120, GPUs: float64(1 + i%2), User: string(rune('a' + i%3)), Requested: 200})
	}
	models := func() []Model { return []Model{New(Config{}), Zero{}, &Recent{}, &UserRecent{}, &QBETS{}} }
	base := Replay(tr, models()...)
	const k = 40
	moved := Trace{Capacity: tr.Capacity, Jobs: append([]Job(nil), tr.Jobs...)}
	moved.Jobs[k].Start += 5000
	moved.Jobs[k].End += 9000
	after := Replay(moved, models()...)
	for m := range base {
		if base[m][k] != after[m][k] {
			t.Errorf("model %d: job %d's estimate changed with its own future: %+v -> %+v", m, k, base[m][k], after[m][k])
		}
	}
}

// The QBETS-style bound at matched coverage: the quantiles found bracket the target coverage,
// each one's coverage and tightness are the same bound's replayed directly at that quantile,
// and the matched figures lie between them.
func TestMatchQBETS(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var tr Trace
	for i := range 3000 {
		s := int64(i * 30)
		j := Job{Submit: s, Start: s + int64(rng.ExpFloat64()*600), GPUs: 1, Queue: []string{"a", "b"}[i%2]}
		if i%10 == 0 { // one in ten leaves the queue without starting
			j.Start, j.End = -1, s+int64(rng.ExpFloat64()*600)
		}
		tr.Jobs = append(tr.Jobs, j)
	}
	first := 900
	for _, target := range []float64{0.8, 0.9, 0.95} {
		m, err := matchQBETS(sourceOf(tr), int32(first), 1000, target)
		if err != nil || m == nil || m.Coverage != target || m.Below.Coverage >= target || m.Above.Coverage < target ||
			m.Tightness < min(m.Below.Tightness, m.Above.Tightness) || m.Tightness > max(m.Below.Tightness, m.Above.Tightness) {
			t.Fatalf("target %v: %+v, want the target bracketed", target, m)
		}
		for _, b := range []Bracket{m.Below, m.Above} {
			checkBracket(t, tr, first, b)
		}
	}
}

// checkBracket replays the QBETS-style bound at b's quantile directly and scores it as Score does.
func checkBracket(t *testing.T, tr Trace, first int, b Bracket) {
	t.Helper()
	{
		end := tr.End()
		var covered, counted int
		var ratios []float64
		s := qbetsState{n: 1000}
		err := play(sourceOf(tr), func(ev *event) {
			j := ev.j
			switch ev.kind {
			case evStart:
				s.observe(j.Queue, float64(j.Wait()))
			case evSubmit:
				if int(ev.job) < first {
					return
				}
				bound := 0.0
				if w := s.sample(j.Queue); w != nil && w.len() > 0 {
					bound = w.view()[binomialUpperRank(w.len(), b.Quantile, 0.95)]
				}
				if !j.Started() {
					if bound < float64(censoredAt(j, end)) {
						counted++
					}
					return
				}
				counted++
				if float64(j.Wait()) <= bound {
					covered++
				}
				if j.Wait() >= 60 {
					ratios = append(ratios, bound/float64(j.Wait()))
				}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(ratios)
		if c := float64(covered) / float64(counted); math.Abs(c-b.Coverage) > 1e-12 || math.Abs(median(ratios)-b.Tightness) > 1e-12 {
			t.Fatalf("%+v, replayed directly: coverage %v, tightness %v", b, c, median(ratios))
		}
	}
}
