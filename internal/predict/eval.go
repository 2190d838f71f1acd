package predict

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Report is the outcome of replaying a trace.
type Report struct {
	Trace   string   `json:"trace"`
	Jobs    int      `json:"jobs"`
	Scored  int      `json:"scored"`
	Started int      `json:"started"` // scored jobs that started: the point errors are over these
	Skipped int      `json:"skipped"` // records the trace could not place (Trace.Skipped), not in Jobs
	Why     string   `json:"skipped_why,omitempty"`
	Results []Result `json:"results"`
}

// Result is one model's accuracy on the scored jobs.
type Result struct {
	Predictor string `json:"predictor"`
	// Point errors, over scored jobs that started.
	MAEMinutes      float64 `json:"mae_minutes"`
	MedianAEMinutes float64 `json:"median_ae_minutes"`
	Within15        float64 `json:"within_15pct_or_60s"` // |error| <= max(15 % of the wait, 60 s)
	BandAccuracy    float64 `json:"band_accuracy"`       // predicted band == actual band
	// The 90 % bound. A job that never started is right-censored when it left the queue (or
	// when the trace ends, for one still waiting): a bound shorter than the time it had waited
	// is a miss, a longer one (or Unbounded) is neither hit nor miss and is left out. Coverage
	// is over the jobs that are left in (P90Scored of them); tightness is the median of bound /
	// wait over started jobs that waited a minute or more (+Inf for an Unbounded bound).
	P90Coverage  float64 `json:"p90_coverage"`
	P90Tightness float64 `json:"p90_tightness"`
	P90Scored    int     `json:"p90_scored"`
	// Coverage over the scored jobs that started.
	P90CoverageStarted float64 `json:"p90_coverage_started"`
	// Share of scored jobs whose bound was Unbounded ("may not start").
	P90Unbounded float64 `json:"p90_unbounded"`
	// Matched, for the QBETS-style baseline only: its bound's quantile set, after the fact on
	// the scored jobs, so that its coverage is the one the first model (the predictor) reached.
	Matched *Matched `json:"-"`
}

// Matched is the QBETS-style bound with its quantile set after the fact to reach a given
// coverage: its tightness there is what the predictor's tightness is compared with. Coverage
// moves in steps with the quantile; when no quantile reaches the target exactly, Quantile,
// Coverage and Tightness are read off the line between the two quantiles that bracket it
// (Below and Above), so that Coverage is the target.
type Matched struct {
	Quantile  float64 // the quantile its order statistic bounds with 95 % confidence
	Coverage  float64 // its coverage there
	Tightness float64 // its tightness there
	Below     Bracket // the highest quantile whose coverage is under the target (Above when none is)
	Above     Bracket // the lowest quantile whose coverage reaches the target (the highest tried when none does)
}

// Bracket is the QBETS-style bound at one quantile.
type Bracket struct {
	Quantile, Coverage, Tightness float64
}

// MarshalJSON writes an infinite tightness (more than half of the bounds Unbounded) as null, and
// the matched figures, when there are any, as p90_tightness_matched, p90_quantile_matched and
// p90_coverage_matched.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	out := struct {
		plain
		P90Tightness        *float64 `json:"p90_tightness"`
		P90TightnessMatched *float64 `json:"p90_tightness_matched,omitempty"`
		P90QuantileMatched  *float64 `json:"p90_quantile_matched,omitempty"`
		P90CoverageMatched  *float64 `json:"p90_coverage_matched,omitempty"`
	}{plain: plain(r)}
	if !math.IsInf(r.P90Tightness, 0) {
		out.P90Tightness = &r.P90Tightness
	}
	if m := r.Matched; m != nil {
		out.P90TightnessMatched, out.P90QuantileMatched, out.P90CoverageMatched = &m.Tightness, &m.Quantile, &m.Coverage
	}
	return json.Marshal(out)
}

// Names of the models Evaluate replays, in the order it reports them.
const (
	NameQuartermaster = "quartermaster"
	NameZero          = "zero"
	NameRecent100     = "recent100"
	NameUserRecent    = "user_recent"
	NameQBETS         = "qbets"
)

// DefaultTrainFraction is the share of a trace's jobs (in submit order) replayed to learn
// before scoring starts.
const DefaultTrainFraction = 0.3

// Band is a wait's band: 0 under a minute, 1 up to 10 minutes, 2 up to an hour, 3 up to
// six hours, 4 beyond.
func Band(wait time.Duration) int {
	switch {
	case wait < time.Minute:
		return 0
	case wait < 10*time.Minute:
		return 1
	case wait < time.Hour:
		return 2
	case wait < 6*time.Hour:
		return 3
	}
	return 4
}

// Evaluate replays tr in time order through a fresh Predictor and the baselines, each seeing
// at every submit only what was known then (the queue, running jobs' start and requested times,
// the waits of jobs that had started, run times of jobs that had ended), and scores the jobs
// after the first trainFraction of them. The QBETS-style result also carries its tightness at
// the predictor's coverage (Result.Matched).
func Evaluate(tr Trace, name string, trainFraction float64) Report {
	models := []named{
		{NameQuartermaster, New(Config{})},
		{NameZero, Zero{}},
		{NameRecent100, &Recent{N: 100}},
		{NameUserRecent, &UserRecent{N: 20}},
		{NameQBETS, &QBETS{N: qbetsWindow}},
	}
	return evaluate(tr, name, trainFraction, models)
}

// Replay runs the trace through the models and returns, per model, the estimate each job got
// at its submit.
func Replay(tr Trace, models ...Model) [][]Estimate {
	out := make([][]Estimate, len(models))
	for m := range out {
		out[m] = make([]Estimate, len(tr.Jobs))
	}
	replay(tr, timeline(tr), models, func(m, job int, e *Estimate) { out[m][job] = *e })
	return out
}

type eventKind int8

const (
	evEnd eventKind = iota
	evWithdraw
	evStart
	evSubmit
)

// event is something that happens to a job during a replay; 16 bytes, three per job at most.
type event struct {
	t    int64
	job  int32
	prio int8
	kind eventKind
}

// timeline lists the trace's events in the order a replay meets them: by time; at one moment
// ends first (GPUs freed are free for what follows), then departures, then starts already due,
// then submits, then starts at the submit's own moment, then instantaneous ends.
func timeline(tr Trace) []event {
	jobs := tr.Jobs
	evs := make([]event, 0, 2*len(jobs)+len(jobs)/2)
	for i, j := range jobs {
		evs = append(evs, event{j.Submit, int32(i), 3, evSubmit})
		switch {
		case j.Started():
			prio := int8(2) // a start already due is known to a submit at the same second
			if j.Start == j.Submit {
				prio = 4
			}
			evs = append(evs, event{j.Start, int32(i), prio, evStart})
			if j.End >= 0 {
				prio := int8(0)
				if j.End <= j.Start {
					prio = 5
				}
				evs = append(evs, event{max(j.End, j.Start), int32(i), prio, evEnd})
			}
		case j.End >= 0:
			prio := int8(1)
			if j.End <= j.Submit {
				prio = 5
			}
			evs = append(evs, event{max(j.End, j.Submit), int32(i), prio, evWithdraw})
		}
	}
	slices.SortFunc(evs, func(a, b event) int {
		switch {
		case a.t != b.t:
			return cmpInt(a.t, b.t)
		case a.prio != b.prio:
			return int(a.prio) - int(b.prio)
		}
		return int(a.job - b.job)
	})
	return evs
}

func cmpInt(a, b int64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

// answer is what a model answered for one job, in whole seconds: the point and the bound
// (noBound for Unbounded). Replays keep these rather than whole Estimates, so that a long
// trace's replay stays small.
type answer struct{ median, p90 int32 }

const noBound = math.MaxInt32

func compact(e *Estimate) answer {
	s := func(d time.Duration) int32 {
		return int32(min(max(d, 0)/time.Second, noBound-1))
	}
	a := answer{median: s(e.Median), p90: s(e.P90)}
	if e.P90 == Unbounded {
		a.p90 = noBound
	}
	return a
}

func (a answer) estimate() Estimate {
	e := Estimate{Median: time.Duration(a.median) * time.Second, P90: time.Duration(a.p90) * time.Second}
	if a.p90 == noBound {
		e.P90 = Unbounded
	}
	return e
}

// replay plays the events through the models and returns every model's answer to every job.
// A model that reads the queue keeps its full estimate for a job while the job waits (in its
// copy of the queue, where it belongs); the others get back only their answer.
func replay(tr Trace, evs []event, models []Model, record func(m, job int, e *Estimate)) [][]answer {
	jobs := tr.Jobs
	answers := make([][]answer, len(models))
	for m := range answers {
		answers[m] = make([]answer, len(jobs))
	}
	var running []Lease
	var runJob []int32
	runPos := make([]int32, len(jobs))
	queues := make([][]Pending, len(models)) // the same queue for every model, with its own estimates
	blind := make([]bool, len(models))       // models that ignore the queue get none
	trackers := make([]leaseTracker, len(models))
	runObservers := make([]interface{ ObserveRun(Request, time.Duration) }, len(models))
	for m, model := range models {
		_, blind[m] = model.(queueBlind)
		trackers[m], _ = model.(leaseTracker)
		runObservers[m], _ = model.(interface{ ObserveRun(Request, time.Duration) })
	}
	var queueJob []int32
	at := func(s int64) time.Time { return time.Unix(s, 0) }
	req := func(j *Job) Request {
		return Request{Queue: j.Queue, User: j.User, GPUs: j.GPUs, Requested: time.Duration(j.Requested) * time.Second}
	}
	// unqueue takes job i out of the queues and hands each model back its estimate for it.
	ests := make([]Estimate, len(models))
	unqueue := func(i int32) {
		k := slices.Index(queueJob, i)
		for m := range models {
			if blind[m] || k < 0 {
				ests[m] = answers[m][i].estimate()
				continue
			}
			ests[m] = queues[m][k].Estimate
			queues[m] = remove(queues[m], k)
		}
		if k >= 0 {
			queueJob = remove(queueJob, k)
		}
	}
	for _, ev := range evs {
		j := &jobs[ev.job]
		switch ev.kind {
		case evSubmit:
			r := req(j)
			for m, model := range models {
				st := State{Now: at(ev.t), Capacity: tr.Capacity, Running: running}
				if !blind[m] {
					st.Queue = queues[m]
				}
				if trackers[m] != nil {
					st.Running = nil // it tracks them itself
				}
				e := model.Predict(r, st)
				answers[m][ev.job] = compact(&e)
				if record != nil {
					record(m, int(ev.job), &e)
				}
				if !blind[m] {
					queues[m] = append(queues[m], Pending{User: j.User, Queue: j.Queue, GPUs: j.GPUs, Submit: at(j.Submit), Requested: r.Requested, Estimate: e})
				}
			}
			queueJob = append(queueJob, ev.job)
		case evStart:
			unqueue(ev.job)
			runPos[ev.job] = int32(len(running))
			running = append(running, Lease{User: j.User, Queue: j.Queue, GPUs: j.GPUs, Start: at(j.Start), Requested: time.Duration(j.Requested) * time.Second})
			runJob = append(runJob, ev.job)
			wait := time.Duration(j.Wait()) * time.Second
			id := strconv.Itoa(int(ev.job))
			for m, model := range models {
				if trackers[m] != nil {
					trackers[m].Track(id, running[len(running)-1])
				}
				model.Observe(Observation{Request: req(j), Estimate: ests[m], Wait: wait, Started: true})
			}
		case evEnd:
			k := runPos[ev.job]
			last := int32(len(running) - 1)
			running[k], runJob[k] = running[last], runJob[last]
			runPos[runJob[k]] = k
			running, runJob = running[:last], runJob[:last]
			id := strconv.Itoa(int(ev.job))
			for m := range models {
				if trackers[m] != nil {
					trackers[m].Untrack(id)
				}
				if runObservers[m] != nil {
					runObservers[m].ObserveRun(req(j), time.Duration(j.End-j.Start)*time.Second)
				}
			}
		case evWithdraw:
			unqueue(ev.job)
			wait := time.Duration(j.End-j.Submit) * time.Second
			for m, model := range models {
				model.Observe(Observation{Request: req(j), Estimate: ests[m], Wait: wait, Started: false})
			}
		}
		clear(ests)
	}
	return answers
}

// remove takes s[k] out of s, keeping the order, by moving whichever side of it is shorter:
// jobs mostly start from the front of a queue, which then costs next to nothing however deep
// the queue is.
func remove[T any](s []T, k int) []T {
	if k < len(s)/2 {
		copy(s[1:k+1], s[:k])
		var zero T
		s[0] = zero
		return s[1:]
	}
	return slices.Delete(s, k, k+1)
}

// queueBlind is a model that never reads State.Queue (the baselines): the replay keeps no copy
// of the queue for it.
type queueBlind interface{ ignoresQueue() }

func (Zero) ignoresQueue()        {}
func (*Recent) ignoresQueue()     {}
func (*UserRecent) ignoresQueue() {}
func (*QBETS) ignoresQueue()      {}

// leaseTracker is a model that keeps the running leases itself (Predictor.Track): the replay
// tells it when each job starts and ends, and predicts with State.Running nil.
type leaseTracker interface {
	Track(id string, l Lease)
	Untrack(id string)
}

func evaluate(tr Trace, name string, trainFraction float64, models []named) Report {
	ms := make([]Model, len(models))
	for i, m := range models {
		ms[i] = m.model
	}
	evs := timeline(tr)
	first := int(math.Floor(trainFraction * float64(len(tr.Jobs))))
	first = min(max(first, 0), len(tr.Jobs))
	// The first model (the predictor) is replayed on its own while the others, and the QBETS
	// samples for matching its coverage, are replayed beside it: the models never meet, so the
	// answers are the same as in one replay, in about the time of the slowest.
	answers := make([][]answer, len(ms))
	samples := make([]*qbetsOutcomes, len(models))
	if len(ms) > 0 {
		var others sync.WaitGroup
		others.Go(func() {
			copy(answers[1:], replay(tr, evs, ms[1:], nil))
			for i, nm := range models[1:] {
				if q, ok := nm.model.(*QBETS); ok {
					samples[i+1] = qbetsSamples(tr, evs, first, q.N)
				}
			}
		})
		answers[0] = replay(tr, evs, ms[:1], nil)[0]
		others.Wait()
	}
	rep := Report{Trace: name, Jobs: len(tr.Jobs), Scored: len(tr.Jobs) - first, Skipped: tr.Skipped, Why: tr.Why}
	for _, j := range tr.Jobs[first:] {
		if j.Started() {
			rep.Started++
		}
	}
	end := tr.End()
	for m, nm := range models {
		rep.Results = append(rep.Results, score(nm.name, tr.Jobs[first:], answers[m][first:], end))
	}
	for i, s := range samples {
		if s != nil {
			rep.Results[i].Matched = s.match(rep.Results[0].P90Coverage)
		}
	}
	return rep
}

// Score computes a model's accuracy from the estimates its jobs got (ests[i] for jobs[i]).
// end is the trace's last moment (Trace.End): a job that never started and has no recorded
// departure is censored there.
func Score(name string, jobs []Job, ests []Estimate, end int64) Result {
	as := make([]answer, len(ests))
	for i := range ests {
		as[i] = compact(&ests[i])
	}
	return score(name, jobs, as, end)
}

// censoredAt is how long a job that never started had waited when the trace lost sight of it:
// until it left the queue, or until the trace's end.
func censoredAt(j *Job, end int64) int64 {
	if j.End >= 0 {
		return max(j.End-j.Submit, 0)
	}
	return max(end-j.Submit, 0)
}

func score(name string, jobs []Job, as []answer, end int64) Result {
	r := Result{Predictor: name}
	var abs, ratios []float64
	var within, band, covered, coveredStarted, started, unbounded, counted int
	for i := range jobs {
		j, a := &jobs[i], as[i]
		if a.p90 == noBound {
			unbounded++
		}
		if !j.Started() {
			// Right-censored: a bound shorter than what it waited is a miss; else left out.
			if a.p90 != noBound && int64(a.p90) < censoredAt(j, end) {
				counted++
			}
			continue
		}
		started++
		counted++
		w := j.Wait()
		d := math.Abs(float64(int64(a.median) - w))
		abs = append(abs, d)
		if d <= max(0.15*float64(w), 60) {
			within++
		}
		if Band(time.Duration(a.median)*time.Second) == Band(time.Duration(w)*time.Second) {
			band++
		}
		if a.p90 == noBound || w <= int64(a.p90) {
			covered++
			coveredStarted++
		}
		if w >= 60 {
			r := math.Inf(1)
			if a.p90 != noBound {
				r = float64(a.p90) / float64(w)
			}
			ratios = append(ratios, r)
		}
	}
	if started > 0 {
		sum := 0.0
		for _, d := range abs {
			sum += d
		}
		slices.Sort(abs)
		r.MAEMinutes = sum / float64(started) / 60
		r.MedianAEMinutes = median(abs) / 60
		r.Within15 = float64(within) / float64(started)
		r.BandAccuracy = float64(band) / float64(started)
		r.P90CoverageStarted = float64(coveredStarted) / float64(started)
	}
	r.P90Scored = counted
	if counted > 0 {
		r.P90Coverage = float64(covered) / float64(counted)
	}
	if len(jobs) > 0 {
		r.P90Unbounded = float64(unbounded) / float64(len(jobs))
	}
	slices.Sort(ratios)
	r.P90Tightness = median(ratios)
	return r
}

// median of ascending s, averaging the middle pair; 0 for an empty s.
func median(s []float64) float64 {
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
