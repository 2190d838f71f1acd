package predict

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// BenchmarkReplayKTH replays the whole KTH SP2 trace (28,000 jobs) through the predictor and the
// four baselines and scores it, as `quartermaster predict eval` does.
func BenchmarkReplayKTH(b *testing.B) {
	tr, err := ReadTraceFile(filepath.Join(tracesDir(b), "KTH-SP2-1996-2.1-cln.swf.gz"), "")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		Evaluate(tr, "kth", DefaultTrainFraction)
	}
}

// BenchmarkReplayDeepQueue replays a synthetic trace whose queue grows thousands deep: 20,000
// jobs of 1, 2 or 4 GPUs (one in two of 1) arriving every 20 s on average on 64 GPUs, running
// 40 minutes on average, started first come first served. Each prediction simulates the whole
// queue ahead, so this is where the replay is slowest; it reports the deepest queue seen.
func BenchmarkReplayDeepQueue(b *testing.B) {
	tr, depth := deepQueueTrace(20000, 64)
	b.ResetTimer()
	for b.Loop() {
		Evaluate(tr, "deep", DefaultTrainFraction)
	}
	b.ReportMetric(float64(depth), "max-queue")
}

// deepQueueTrace builds the overloaded first-come-first-served trace of BenchmarkReplayDeepQueue
// and returns it with the largest number of jobs waiting at once.
func deepQueueTrace(n int, capacity float64) (Trace, int) {
	rng := rand.New(rand.NewPCG(3, 4))
	tr := Trace{Capacity: capacity}
	var ends []endEvent // running jobs, a min-heap on their end
	free, clock, submit := capacity, 0.0, 0.0
	for i := range n {
		submit += rng.ExpFloat64() * 20
		gpus := []float64{1, 1, 2, 4}[rng.IntN(4)]
		run := 10 + rng.ExpFloat64()*2400
		start := max(submit, clock) // first come, first served: never before the previous start
		var e endEvent
		for len(ends) > 0 && ends[0].t <= start {
			e, ends = pop(ends)
			free += e.gpus
		}
		for free < gpus { // wait for enough ends
			e, ends = pop(ends)
			free += e.gpus
			start = max(start, e.t)
		}
		clock = start
		free -= gpus
		ends = push(ends, endEvent{t: start + run, gpus: gpus})
		tr.Jobs = append(tr.Jobs, Job{Submit: int64(submit), Start: int64(start), End: int64(start + run),
			GPUs: gpus, User: fmt.Sprintf("u%d", i%50), Queue: "q", Requested: int64(2 * run)})
	}
	type change struct {
		t int64
		d int
	}
	var cs []change
	for _, j := range tr.Jobs {
		cs = append(cs, change{j.Submit, 1}, change{j.Start, -1})
	}
	slices.SortFunc(cs, func(a, b change) int {
		if a.t != b.t {
			return int(a.t - b.t)
		}
		return a.d - b.d
	})
	depth, most := 0, 0
	for _, c := range cs {
		depth += c.d
		most = max(most, depth)
	}
	return tr, most
}

// BenchmarkPredict10kLeases times single predictions for a pool with 10,000 running leases
// (tracked with Track, as the service does) and 200 queued requests, on a predictor with a full
// history, and reports the 50th and 99th percentiles of the individual calls. Between two
// predictions the clock moves on a second and one lease ends (its run time is learned) and
// another starts, outside the timed part.
func BenchmarkPredict10kLeases(b *testing.B) { benchPredict(b, true) }

// BenchmarkPredict10kLeasesUntracked is the same with the leases handed over in State.Running on
// every call, so that each one's expected end is looked up again.
func BenchmarkPredict10kLeasesUntracked(b *testing.B) { benchPredict(b, false) }

func benchPredict(b *testing.B, track bool) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := New(Config{})
	st := State{Now: t0, Capacity: 10000}
	newLease := func(now time.Time) Lease {
		req := time.Duration(1+rng.IntN(72)) * time.Hour
		return Lease{User: fmt.Sprintf("u%d", rng.IntN(300)), Queue: "train", GPUs: 1,
			Start: now.Add(-time.Duration(rng.Int64N(int64(req)))), Requested: req}
	}
	for i := range 10000 {
		st.Running = append(st.Running, newLease(t0))
		if i < 200 {
			req := time.Duration(1+rng.IntN(72)) * time.Hour
			st.Queue = append(st.Queue, Pending{User: fmt.Sprintf("u%d", rng.IntN(300)), Queue: "train",
				GPUs: float64(1 + rng.IntN(8)), Submit: t0.Add(-time.Duration(i) * time.Minute), Requested: req})
		}
	}
	for i := range 3000 { // history: run times and waits
		user := fmt.Sprintf("u%d", rng.IntN(300))
		p.ObserveRun(Request{User: user, Queue: "train", Requested: 10 * time.Hour}, time.Duration(rng.Int64N(int64(10*time.Hour))))
		req := Request{User: user, Queue: "train", GPUs: float64(1 + i%8), Requested: time.Duration(1+i%24) * time.Hour}
		p.Observe(Observation{Request: req, Estimate: p.Predict(req, State{Now: t0, Capacity: 10000, Running: st.Running[:i]}),
			Wait: time.Duration(rng.Int64N(int64(6 * time.Hour))), Started: true})
	}
	for i := range st.Queue { // the queued requests carry their estimates, as the service keeps them
		q := &st.Queue[i]
		q.Estimate = p.Predict(Request{User: q.User, Queue: q.Queue, GPUs: q.GPUs, Requested: q.Requested},
			State{Now: q.Submit, Capacity: 10000, Running: st.Running, Queue: st.Queue[:i]})
	}
	ids := make([]string, len(st.Running))
	for i, l := range st.Running {
		ids[i] = fmt.Sprintf("lease-%d", i)
		p.Track(ids[i], l)
	}
	next := len(ids)
	req := Request{User: "u7", Queue: "train", GPUs: 4, Requested: 8 * time.Hour}
	lat := make([]time.Duration, 0, 1<<16)
	cpu := make([]time.Duration, 0, 1<<16)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		st.Now = st.Now.Add(time.Second)
		k := rng.IntN(len(st.Running)) // one lease ends, another starts
		ended := st.Running[k]
		p.ObserveRun(Request{User: ended.User, Queue: ended.Queue, Requested: ended.Requested}, st.Now.Sub(ended.Start))
		p.Untrack(ids[k])
		st.Running[k], ids[k] = newLease(st.Now), fmt.Sprintf("lease-%d", next)
		st.Running[k].Start = st.Now
		next++
		p.Track(ids[k], st.Running[k])
		call := st
		if track {
			call.Running = nil
		}
		b.StartTimer()
		c0, ok := threadCPU()
		start := time.Now()
		p.Predict(req, call)
		lat = append(lat, time.Since(start))
		if c1, _ := threadCPU(); ok {
			cpu = append(cpu, c1-c0)
		}
	}
	b.StopTimer()
	report := func(d []time.Duration, unit string) {
		if len(d) == 0 {
			return
		}
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "p50-"+unit)
		b.ReportMetric(float64(d[len(d)*99/100].Nanoseconds()), "p99-"+unit)
	}
	report(lat, "ns")     // wall clock
	report(cpu, "cpu-ns") // CPU time of the calling thread
}

// BenchmarkReplayMetaCentrum replays the whole MetaCentrum 2009 trace (103,656 jobs), as
// `quartermaster predict eval` does; its bursts of thousands of jobs make it the replay whose
// profile looks most like the 450,000-job benchmark's.
func BenchmarkReplayMetaCentrum(b *testing.B) {
	tr, err := ReadTraceFile(filepath.Join(tracesDir(b), "METACENTRUM-2009-2.swf.gz"), "")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		Evaluate(tr, "metacentrum", DefaultTrainFraction)
	}
}
