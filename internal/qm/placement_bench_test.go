package qm

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"
)

// BenchmarkPlace1000x8 times one placement decision (place: which node and GPUs) on a cluster of
// 1,000 nodes × 8 GPUs (a third each with two islands of four, NVLink pairs and one NVSwitch
// island), filled to 60 % with leases of 1, 2, 4 and 8 GPUs placed the same way, then a random
// fifth of them released. Each iteration asks for 1, 2, 4 or 8 GPUs in turn and keeps nothing,
// so every decision sees the same cluster. It reports the median and the 99th percentile of one
// decision, in wall time and in the calling thread's CPU time (which leaves out waiting for a
// core on a busy machine).
func BenchmarkPlace1000x8(b *testing.B) {
	inv := make([]Node, 1000)
	for i := range inv {
		name := fmt.Sprintf("gpu%04d", i+1)
		switch i % 3 {
		case 0:
			inv[i] = twoIslands(name)
		case 1:
			inv[i] = pairs(name)
		default:
			inv[i] = switched(name)
		}
	}
	ix := indexNodes(inv) // the service makes it once per inventory
	rng := rand.New(rand.NewPCG(1, 8))
	sizes := []int{1, 2, 4, 8}
	var held []Holding
	for used := 0; used < 8000*6/10; {
		n := sizes[rng.IntN(len(sizes))]
		p, ok := place(inv, ix, held, placeRequest{Class: "train", Team: "vision", GPUs: n})
		if !ok {
			b.Fatalf("no room for %d GPUs with %d used", n, used)
		}
		held = append(held, Holding{Class: "train", Team: "vision", GPUs: n, Node: p.Nodes[0], GPUIndex: p.GPUs})
		used += n
	}
	// Release a random fifth, so free GPUs are scattered as after a day of churn.
	rng.Shuffle(len(held), func(i, j int) { held[i], held[j] = held[j], held[i] })
	held = held[:len(held)*4/5]
	lat := make([]time.Duration, 0, b.N)
	cpu := make([]time.Duration, 0, b.N)
	runtime.LockOSThread() // the thread's CPU clock then measures this goroutine alone
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := placeRequest{Class: "train", Team: "vision", GPUs: sizes[i%len(sizes)]}
		c0, cpuOK := threadCPU()
		s := time.Now()
		_, ok := place(inv, ix, held, r)
		lat = append(lat, time.Since(s))
		if c1, _ := threadCPU(); cpuOK {
			cpu = append(cpu, c1-c0)
		}
		if !ok {
			b.Fatalf("no room for %d GPUs", r.GPUs)
		}
	}
	b.StopTimer()
	report := func(d []time.Duration, unit string) {
		if len(d) == 0 {
			return
		}
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Nanoseconds())/1000, "p50-"+unit)
		b.ReportMetric(float64(d[(len(d)-1)*99/100].Nanoseconds())/1000, "p99-"+unit)
	}
	report(lat, "µs")     // wall clock
	report(cpu, "cpu-µs") // CPU time of the calling thread: leaves out waiting for a core
	b.ReportMetric(float64(len(held)), "leases")
}
