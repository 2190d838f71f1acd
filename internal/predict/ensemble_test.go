package predict

import (
	"fmt"
	"testing"
	"time"
)

// The expert scored best for a kind is the one chosen for it.
func TestChoosePoint(t *testing.T) {
	p := New(Config{})
	req := Request{User: "u", Queue: "q", GPUs: 1, Requested: time.Hour}
	st := State{Now: t0, Capacity: 1}
	for range 64 { // the user's last wait is always right; nothing else is
		e := p.Predict(req, st)
		p.Observe(Observation{Request: req, Estimate: e, Wait: 7 * time.Minute, Started: true})
	}
	e := p.Predict(req, st)
	if e.Median != 7*time.Minute {
		t.Fatalf("median %v, want the 7m every similar request waited", e.Median)
	}
	ks := p.statsOf(e.kinds)
	if best := ks[levelSituation].best(); e.experts[best] != float32(7*60) {
		t.Fatalf("the best expert for the kind, %d, answers %v", best, e.experts[best])
	}
}

func TestCapped(t *testing.T) {
	c := newCapped[int, string](3)
	for i := range 5 {
		c.put(i, fmt.Sprint(i))
	}
	if _, ok := c.get(1); ok || c.len() != 3 {
		t.Fatalf("after 5 puts into 3: 1 still there or %d entries", c.len())
	}
	c.put(4, "four") // a replacement forgets nothing
	if v, ok := c.get(2); !ok || v != "2" {
		t.Fatalf("2 forgotten by a replacement")
	}
	if v, _ := c.get(4); v != "four" {
		t.Fatalf("4 = %q", v)
	}
}

func TestWindow(t *testing.T) {
	w := newWindow(4)
	for _, x := range []float64{5, 1, 4, 1, 9, 2} { // keeps 4, 1, 9, 2
		w.add(x)
	}
	want := []float64{1, 2, 4, 9}
	for i, x := range w.view() {
		if x != want[i] {
			t.Fatalf("view %v, want %v", w.view(), want)
		}
	}
	if w.below(4) != 2 || w.below(10) != 4 || w.below(0) != 0 {
		t.Fatalf("below: %d %d %d", w.below(4), w.below(10), w.below(0))
	}
}
