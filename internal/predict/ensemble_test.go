package predict

import (
	"fmt"
	"math"
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
	if band := ks[levelSituation].bandBest(); e.experts[band] != float32(7*60) {
		t.Fatalf("the expert best in bands for the kind, %d, answers %v", band, e.experts[band])
	}
}

// Early in a trace, before any way has learned its price, every bound falls far short of the
// waits. Once the waits come within reach, the way whose bounds are the shorter for the same
// requests is given, however the ways stood next to each other on those first requests.
func TestChooseBoundComparesTheWaysRequestByRequest(t *testing.T) {
	p := New(Config{})
	for w := range nBounds {
		p.hits[w] = 1 // every way holds
	}
	score := func(quantile, others float32, wait float32) {
		e := &Estimate{Horizon: time.Hour}
		for w := range nBounds {
			e.bounds[w] = others
		}
		e.bounds[boundQuantile] = quantile
		p.scoreBounds(e, wait)
	}
	score(240, 60, 1e6) // a first wait of eleven days, past every bound; the quantile way's the longest
	for range 200 {
		score(60, 120, 100) // from then on the quantile way's bounds are half the others'
	}
	if got := p.chooseBound(); got != boundQuantile {
		t.Fatalf("way %d given after 200 requests where the quantile way's bound was half the others', want the quantile way (%d); running medians %v", got, boundQuantile, p.shorter)
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

// The point takes its band from the expert that has lately been in the right band most often,
// and its minutes from those that have lately been closest, moved into that band.
func TestPointTakesTheBandOfOneExpertAndTheMinutesOfAnother(t *testing.T) {
	k := &kindStats{n: 100}
	for e := range nExperts + 1 {
		k.ae[e], k.bm[e] = 3600, 0.9
	}
	k.bm[expZero] = 0.1        // "no wait" is in the right band most often ...
	k.ae[expQBETS] = 60        // ... the QBETS-style median is closest in minutes
	var ks [nLevels]*kindStats // only the finest kind has seen enough
	ks[levelSituation] = k
	var experts [nExperts]float32
	for e := range experts {
		experts[e] = 7200
	}
	p := New(Config{})
	for _, c := range []struct{ qbets, want float32 }{{40, 40}, {90, 59}} {
		experts[expZero], experts[expQBETS] = 0, c.qbets
		if got := p.choosePoint(ks, &experts); math.Abs(float64(got-c.want)) > 0.5 {
			t.Errorf("QBETS-style median %v s, no wait 0 s: point %v s, want %v s", c.qbets, got, c.want)
		}
	}
	// Two experts nearly as close, both above it: the minutes are the middle answer of the three.
	k.ae[expRecent], k.ae[expUser] = 61, 61
	experts[expQBETS], experts[expRecent], experts[expUser] = 40, 50, 55
	if got := p.choosePoint(ks, &experts); got != 50 {
		t.Errorf("closest experts answer 40, 50 and 55 s: point %v s, want their weighted median, 50 s", got)
	}
	k.ae[expRecent], k.ae[expUser] = 3600, 3600
	// Over all requests, an expert that has lately beaten the chosen answers both in minutes and
	// in bands overrules their band.
	g := &kindStats{n: 100}
	for e := range nExperts + 1 {
		g.ae[e], g.bm[e] = 3600, 0.9
	}
	g.ae[expRecent], g.bm[expRecent] = 600, 0.2
	experts[expRecent] = 1200
	if got := g.overrule(30, &experts); Band(secs(float64(got))) != 2 {
		t.Errorf("chosen 30 s, overruled by an expert answering 20 min: point %v s, want it in the 10-60 min band", got)
	}
	g.ae[expRecent], g.bm[expRecent] = 3600, 0.9
	if got := g.overrule(30, &experts); got != 30 {
		t.Errorf("no expert did better than the chosen answers, yet the point moved from 30 s to %v s", got)
	}
	// Two baselines have both beaten the chosen answers, with as few wrong bands as each other
	// and nearly the same minutes, and disagree on the band: the one that agrees with the
	// chosen band leaves it standing, whichever scores a hair better (as "no wait" and the
	// recent median do on a cluster where most requests start at once).
	g.ae[expRecent], g.bm[expRecent] = 425.2, 0.1445
	g.ae[expZero], g.bm[expZero] = 425.8, 0.1445
	g.ae[nExperts], g.bm[nExperts] = 432.5, 0.1474
	experts[expRecent], experts[expZero] = 435, 0
	if got := g.overrule(0, &experts); Band(secs(float64(got))) != 0 {
		t.Errorf("chosen 0 s, with no wait as good as the recent median on bands: point %v s, want it under a minute", got)
	}
	// Had the one that agrees made more wrong bands, the better one's band would stand.
	g.bm[expZero] = 0.146
	if got := g.overrule(0, &experts); Band(secs(float64(got))) != 1 {
		t.Errorf("chosen 0 s, the recent median (435 s) ahead on bands: point %v s, want it in the 1-10 min band", got)
	}
	for _, e := range []int{expRecent, expZero, nExperts} {
		g.ae[e], g.bm[e] = 3600, 0.9
	}
	// The nearest situations' median is not a baseline: the kinds already chose among such
	// experts, and it does not overrule them.
	g.ae[expKNN], g.bm[expKNN] = 600, 0.2
	experts[expKNN] = 1200
	if got := g.overrule(30, &experts); got != 30 {
		t.Errorf("only the nearest situations did better, yet the point moved from 30 s to %v s", got)
	}
}

func TestInBand(t *testing.T) {
	for _, c := range []struct {
		v    float32
		band int
		want float32
	}{
		{30, 0, 30}, {90, 0, 59}, {30, 1, 60}, {900, 1, 599}, {7200, 2, 3599},
		{100, 4, 6 * 3600}, {1e6, 4, 1e6}, {300, 1, 300},
	} {
		if got := inBand(c.v, c.band); got != c.want {
			t.Errorf("inBand(%v, %d) = %v, want %v", c.v, c.band, got, c.want)
		}
		if got := Band(secs(float64(inBand(c.v, c.band)))); got != c.band {
			t.Errorf("inBand(%v, %d) is in band %d", c.v, c.band, got)
		}
	}
}
