package predict

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The neighbour search finds exactly the nearest remembered situations, whichever index it
// searches: one built a while ago, or one just taken in from a build that ran beside the adds.
func TestNeighboursFindTheNearest(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	var n neighbours
	n.init()
	type kept struct {
		x     [nFeatures]float32
		queue string
		wait  float64
	}
	var all []kept // every situation added, oldest first
	point := func() [nFeatures]float32 {
		var x [nFeatures]float32
		for f := range x {
			x[f] = float32(r.NormFloat64())
		}
		return x
	}
	queues := []string{"a", "b", "c"}
	for step := range 6000 {
		k := kept{point(), queues[r.IntN(len(queues))], float64(step)}
		all = append(all, k)
		n.add(k.x, k.queue, k.wait, 60, false)
		if step%37 != 0 {
			continue
		}
		x, q := point(), queues[r.IntN(len(queues))]
		_, obs := n.query(x, q, nil, 1, 0)
		got := make([]float64, 0, len(obs))
		for _, o := range obs {
			got = append(got, o.t)
		}
		slices.Sort(got)
		// By brute force: the neighbourCount nearest of the last historySize.
		hist := all[max(len(all)-historySize, 0):]
		type near struct {
			d    float32
			wait float64
		}
		ds := make([]near, 0, len(hist))
		for _, h := range hist {
			var d0 float32
			if h.queue != q {
				d0 = queuePenalty
			}
			d, _ := distanceWithin(&x, &h.x, d0, float32(1e30))
			ds = append(ds, near{d, h.wait})
		}
		slices.SortFunc(ds, func(a, b near) int {
			if a.d != b.d {
				if a.d < b.d {
					return -1
				}
				return 1
			}
			return 0
		})
		want := make([]float64, 0, neighbourCount)
		for _, d := range ds[:min(neighbourCount, len(ds))] {
			want = append(want, d.wait)
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("after %d situations: the search found %v, the nearest are %v", step+1, got, want)
		}
	}
}
