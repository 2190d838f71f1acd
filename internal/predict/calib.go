package predict

import "math"

// The calibrator maps a simulated start to the waits that requests with a similar simulated
// start really had. The simulation knows the pool but not the scheduler's priorities, backfill,
// reservations or fragmentation; the calibration learns those from the cluster's own history.
//
// Requests are grouped by the orders of magnitude (powers of two above a minute) of their two
// simulated starts, in cells from fine (queue, alone, queued) to coarse (everything); a
// prediction reads the finest cell holding enough recent waits. The median of the cell is the
// point estimate. The bound is an upper quantile of the cell whose level is corrected online
// (adaptive conformal inference): every miss raises it, every hit lowers it a little, so the
// long-run share of waits within the bound tracks the target whatever the cell sizes.

type cellKey struct {
	queue         string
	level         int8
	alone, queued int8
}

type calibrator struct {
	window int
	cells  map[cellKey]*window
	target float64 // wanted share of waits above the bound
	alpha  float64 // current upper-tail level; below 0 the bound grows past the cell's maximum
}

func (c *calibrator) init(size int, target float64) {
	c.window = size
	c.cells = map[cellKey]*window{}
	c.target = target
	c.alpha = target
}

// bucket is a wait's order of magnitude: 0 for none, 1 under a minute, then one per doubling.
func bucket(s float64) int8 {
	switch {
	case s < 1:
		return 0
	case s < 60:
		return 1
	}
	return int8(min(2+int(math.Log2(s/60)), 24))
}

func keys(queue string, alone, queued float64) [4]cellKey {
	a, q := bucket(alone), bucket(queued)
	return [4]cellKey{
		{queue: queue, level: 3, alone: a, queued: q},
		{level: 2, alone: a, queued: q},
		{level: 1, queued: q},
		{level: 0},
	}
}

func (c *calibrator) observe(queue string, alone, queued, wait float64) {
	for _, k := range keys(queue, alone, queued) {
		w := c.cells[k]
		if w == nil {
			w = newWindow(c.window)
			c.cells[k] = w
		}
		w.add(wait)
	}
}

// coverage records whether a wait ran past its bound.
func (c *calibrator) coverage(miss bool) {
	err := 0.0
	if miss {
		err = 1
	}
	c.alpha += aciRate * (c.target - err)
	c.alpha = min(max(c.alpha, -1), 0.5)
}

// estimate returns the median and the bound for a request with the given simulated starts,
// and how many observed waits they rest on.
func (c *calibrator) estimate(queue string, alone, queued float64) (med, hi float64, n int) {
	for _, k := range keys(queue, alone, queued) {
		w := c.cells[k]
		if w == nil || w.len() < minCell {
			continue
		}
		s := w.view()
		med = quantile(s, 0.5)
		if c.alpha >= 0 {
			hi = quantile(s, 1-c.alpha)
		} else {
			hi = s[len(s)-1] * (1 - 4*c.alpha)
		}
		return med, max(hi, med), len(s)
	}
	// No history: trust the simulation.
	return (alone + queued) / 2, queued * 2, 0
}
