package predict

import (
	"math"
	"slices"
)

// window keeps the last cap values added and answers order statistics over them. The values
// are kept sorted as they come and go, so reading a quantile costs nothing.
type window struct {
	vals   []float64 // in the order they came, a ring once full
	next   int
	adds   uint64    // values ever added
	sorted []float64 // the same values, ascending
}

func newWindow(capacity int) *window {
	return &window{vals: make([]float64, 0, capacity), sorted: make([]float64, 0, capacity)}
}

func (w *window) add(x float64) {
	if math.IsNaN(x) {
		x = 0
	}
	w.adds++
	if len(w.vals) < cap(w.vals) {
		w.vals = append(w.vals, x)
		w.sorted = append(w.sorted, 0)
		n := len(w.sorted) - 1 // the last slot is free
		i, _ := slices.BinarySearch(w.sorted[:n], x)
		copy(w.sorted[i+1:n+1], w.sorted[i:n])
		w.sorted[i] = x
		return
	}
	old := w.vals[w.next]
	w.vals[w.next] = x
	w.next = (w.next + 1) % len(w.vals)
	// The new value takes the old one's place: only the values between the two move.
	s := w.sorted
	i, _ := slices.BinarySearch(s, old)
	j, _ := slices.BinarySearch(s, x)
	if j > i {
		copy(s[i:j-1], s[i+1:j])
		s[j-1] = x
	} else {
		copy(s[j+1:i+1], s[j:i])
		s[j] = x
	}
}

func (w *window) len() int { return len(w.vals) }

// view returns the values in ascending order; the slice is valid until the next add.
func (w *window) view() []float64 { return w.sorted }

// below is how many values are less than x.
func (w *window) below(x float64) int {
	i, _ := slices.BinarySearch(w.sorted, x)
	return i
}

// quantile is the nearest-rank q-quantile of ascending s (0 for an empty s).
func quantile(s []float64, q float64) float64 {
	if len(s) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// residual looks at the values in ascending s that exceed x: mid is their median (the lower
// middle), next the smallest of them. ok is false when nothing exceeds x. mid - x is the
// expected remaining life of something already x old; it holds until x reaches next.
func residual(s []float64, x float64) (mid, next float64, ok bool) {
	// Binary search for the first value above x, written out: it runs once per running lease.
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m] <= x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo >= len(s) {
		return 0, 0, false
	}
	return s[(lo+len(s)-1)/2], s[lo], true
}
