package predict

import "math"

// Model is anything that predicts waits and learns from what happened: the Predictor and the
// baselines it is measured against.
type Model interface {
	Predict(req Request, st State) Estimate
	Observe(o Observation)
}

// Baselines, as replayed by Evaluate. Each gives a point (Median) and a 90 % bound (P90).

// Zero always predicts no wait; its bound is zero as well, so it covers exactly the requests
// that start at once.
type Zero struct{}

func (Zero) Predict(Request, State) Estimate { return Estimate{} }
func (Zero) Observe(Observation)             {}

// Recent predicts the median of the last N started waits (100 unless set) and, as its bound,
// their 90th percentile.
type Recent struct {
	N int
	w *window
}

func (r *Recent) Predict(Request, State) Estimate {
	if r.w == nil {
		return Estimate{}
	}
	s := r.w.view()
	return Estimate{Median: secs(quantile(s, 0.5)), P90: secs(quantile(s, 0.9)), Basis: len(s)}
}

func (r *Recent) Observe(o Observation) {
	if !o.Started {
		return
	}
	if r.w == nil {
		r.w = newWindow(cmpOr(r.N, 100))
	}
	r.w.add(o.Wait.Seconds())
}

// UserRecent predicts the median of the same user's last N started waits (20 unless set) and,
// as its bound, their 90th percentile; a user with no history gets the last 100 waits of all.
type UserRecent struct {
	N     int
	users *capped[string, *window]
	all   Recent
}

func (u *UserRecent) Predict(req Request, st State) Estimate {
	if u.users == nil {
		return u.all.Predict(req, st)
	}
	if w, _ := u.users.get(req.User); w != nil {
		s := w.view()
		return Estimate{Median: secs(quantile(s, 0.5)), P90: secs(quantile(s, 0.9)), Basis: len(s)}
	}
	return u.all.Predict(req, st)
}

func (u *UserRecent) Observe(o Observation) {
	if !o.Started {
		return
	}
	u.all.Observe(o)
	if u.users == nil {
		u.users = newCapped[string, *window](maxUsers)
	}
	w, _ := u.users.get(o.Request.User)
	if w == nil {
		w = newWindow(cmpOr(u.N, 20))
		u.users.put(o.Request.User, w)
	}
	w.add(o.Wait.Seconds())
}

// QBETS follows Nurmi, Brevik and Wolski's QBETS: from the last N started waits of the same
// queue (1000 unless set; all queues together while a queue has fewer than 30), the bound is
// the order statistic that exceeds the 0.9 quantile with 95 % confidence under the binomial
// law, and the point is the same 95 % upper confidence bound on the median.
type QBETS struct {
	N     int
	s     qbetsState
	ranks map[[2]int]int
}

func (q *QBETS) Predict(req Request, _ State) Estimate {
	w := q.s.sample(req.Queue)
	if w == nil || w.len() == 0 {
		return Estimate{}
	}
	s := w.view()
	return Estimate{Median: secs(s[q.rank(len(s), 50)]), P90: secs(s[q.rank(len(s), 90)]), Basis: len(s)}
}

func (q *QBETS) Observe(o Observation) {
	if !o.Started {
		return
	}
	q.s.n = cmpOr(q.N, qbetsWindow)
	q.s.observe(o.Request.Queue, o.Wait.Seconds())
}

// rank is the 0-based index of the order statistic among n that lies above the pct quantile
// with 95 % confidence, or the largest when n is too small for that confidence.
func (q *QBETS) rank(n, pct int) int {
	if q.ranks == nil {
		q.ranks = map[[2]int]int{}
	}
	if k, ok := q.ranks[[2]int{n, pct}]; ok {
		return k
	}
	k := binomialUpperRank(n, float64(pct)/100, 0.95)
	q.ranks[[2]int{n, pct}] = k
	return k
}

// binomialUpperRank is the smallest 0-based k with P(Binomial(n, p) <= k) >= conf: the sample's
// order statistic k+1 is at least the p-quantile with probability conf. It is n-1 when no
// order statistic reaches the confidence.
func binomialUpperRank(n int, p, conf float64) int {
	if p <= 0 {
		return 0
	}
	if p >= 1 {
		return n - 1
	}
	// P(X = k) from k0 on, each step multiplying by (n-k)/(k+1) · p/(1-p). Below k0, twelve
	// standard deviations under the mean, the probabilities sum to less than 1e-30: nothing
	// that could move the sum past conf.
	nf := float64(n)
	k0 := max(int(nf*p-12*math.Sqrt(nf*p*(1-p)))-2, 0)
	lg0, _ := math.Lgamma(nf + 1)
	lk, _ := math.Lgamma(float64(k0) + 1)
	lnk, _ := math.Lgamma(nf - float64(k0) + 1)
	pmf := math.Exp(lg0 - lk - lnk + float64(k0)*math.Log(p) + (nf-float64(k0))*math.Log1p(-p))
	odds := p / (1 - p)
	cdf := 0.0
	for k := k0; k < n; k++ {
		cdf += pmf
		if cdf >= conf {
			return k
		}
		pmf *= float64(n-k) / float64(k+1) * odds
	}
	return n - 1
}

func cmpOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// named pairs a model with the name Evaluate reports it under.
type named struct {
	name  string
	model Model
}

// Predictor is a Model too.
var _ Model = (*Predictor)(nil)
