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

// BenchmarkPredict10kLeases times single predictions for a pool with 10,000 running leases and
// 200 queued requests, on a predictor with a full history, and reports the 50th and 99th
// percentiles of the individual calls.
func BenchmarkPredict10kLeases(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := New(Config{})
	st := State{Now: t0, Capacity: 10000}
	for i := range 10000 {
		req := time.Duration(1+rng.IntN(72)) * time.Hour
		st.Running = append(st.Running, Lease{
			User: fmt.Sprintf("u%d", rng.IntN(300)), Queue: "train", GPUs: 1,
			Start: t0.Add(-time.Duration(rng.Int64N(int64(req)))), Requested: req,
		})
		if i < 200 {
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
	req := Request{User: "u7", Queue: "train", GPUs: 4, Requested: 8 * time.Hour}
	lat := make([]time.Duration, 0, 1<<16)
	cpu := make([]time.Duration, 0, 1<<16)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	for b.Loop() {
		c0, ok := threadCPU()
		start := time.Now()
		p.Predict(req, st)
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
