package predict

import (
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"
)

// Report is the outcome of replaying a trace.
type Report struct {
	Trace   string   `json:"trace"`
	Jobs    int      `json:"jobs"`
	Scored  int      `json:"scored"`
	Started int      `json:"started"` // scored jobs that started: the point errors are over these
	Skipped int      `json:"skipped"` // records the trace could not place (Trace.Skipped), not in Jobs
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
	// The 90 % bound: coverage over all scored jobs. A job that never started is covered only
	// by an Unbounded bound (or one reaching past the trace's end); tightness is the median of
	// bound / wait over started jobs that waited a minute or more (+Inf for an Unbounded bound).
	P90Coverage  float64 `json:"p90_coverage"`
	P90Tightness float64 `json:"p90_tightness"`
	// Coverage over the scored jobs that started.
	P90CoverageStarted float64 `json:"p90_coverage_started"`
	// Share of scored jobs whose bound was Unbounded ("may not start").
	P90Unbounded float64 `json:"p90_unbounded"`
}

// MarshalJSON writes an infinite tightness (more than half of the bounds Unbounded) as null.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	out := struct {
		plain
		P90Tightness *float64 `json:"p90_tightness"`
	}{plain: plain(r)}
	if !math.IsInf(r.P90Tightness, 0) {
		out.P90Tightness = &r.P90Tightness
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
// after the first trainFraction of them.
func Evaluate(tr Trace, name string, trainFraction float64) Report {
	models := []named{
		{NameQuartermaster, New(Config{})},
		{NameZero, Zero{}},
		{NameRecent100, &Recent{N: 100}},
		{NameUserRecent, &UserRecent{N: 20}},
		{NameQBETS, &QBETS{N: 1000}},
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
	replay(tr, models, func(m, job int, e Estimate) { out[m][job] = e })
	return out
}

type eventKind int8

const (
	evEnd eventKind = iota
	evWithdraw
	evStart
	evSubmit
)

type event struct {
	t    int64
	prio int8
	kind eventKind
	job  int32
}

func replay(tr Trace, models []Model, record func(m, job int, e Estimate)) {
	jobs := tr.Jobs
	evs := make([]event, 0, 3*len(jobs))
	for i, j := range jobs {
		evs = append(evs, event{j.Submit, 3, evSubmit, int32(i)})
		switch {
		case j.Started():
			prio := int8(2) // a start already due is known to a submit at the same second
			if j.Start == j.Submit {
				prio = 4
			}
			evs = append(evs, event{j.Start, prio, evStart, int32(i)})
			if j.End >= 0 {
				prio := int8(0)
				if j.End <= j.Start {
					prio = 5
				}
				evs = append(evs, event{max(j.End, j.Start), prio, evEnd, int32(i)})
			}
		case j.End >= 0:
			prio := int8(1)
			if j.End <= j.Submit {
				prio = 5
			}
			evs = append(evs, event{max(j.End, j.Submit), prio, evWithdraw, int32(i)})
		}
	}
	sort.Slice(evs, func(a, b int) bool {
		if evs[a].t != evs[b].t {
			return evs[a].t < evs[b].t
		}
		if evs[a].prio != evs[b].prio {
			return evs[a].prio < evs[b].prio
		}
		return evs[a].job < evs[b].job
	})

	ests := make([][]Estimate, len(models))
	for m := range ests {
		ests[m] = make([]Estimate, len(jobs))
	}
	var running []Lease
	var runJob []int32
	runPos := make([]int32, len(jobs))
	queues := make([][]Pending, len(models)) // the same queue for every model, with its own estimates
	blind := make([]bool, len(models))       // models that ignore the queue get none
	for m, model := range models {
		_, blind[m] = model.(queueBlind)
	}
	var queueJob []int32
	at := func(s int64) time.Time { return time.Unix(s, 0) }
	req := func(j *Job) Request {
		return Request{Queue: j.Queue, User: j.User, GPUs: j.GPUs, Requested: time.Duration(j.Requested) * time.Second}
	}
	unqueue := func(i int32) {
		k := slices.Index(queueJob, i)
		if k < 0 {
			return
		}
		for m := range queues {
			if !blind[m] {
				queues[m] = slices.Delete(queues[m], k, k+1)
			}
		}
		queueJob = slices.Delete(queueJob, k, k+1)
	}
	for _, ev := range evs {
		j := &jobs[ev.job]
		switch ev.kind {
		case evSubmit:
			r := req(j)
			for m, model := range models {
				st := State{Now: at(ev.t), Capacity: tr.Capacity, Running: running, Queue: queues[m]}
				if _, ok := model.(leaseTracker); ok {
					st.Running = nil // it tracks them itself
				}
				e := model.Predict(r, st)
				ests[m][ev.job] = e
				if record != nil {
					record(m, int(ev.job), e)
				}
				if blind[m] {
					continue
				}
				queues[m] = append(queues[m], Pending{User: j.User, Queue: j.Queue, GPUs: j.GPUs, Submit: at(j.Submit), Requested: r.Requested, Estimate: e})
			}
			queueJob = append(queueJob, ev.job)
		case evStart:
			unqueue(ev.job)
			runPos[ev.job] = int32(len(running))
			running = append(running, Lease{User: j.User, Queue: j.Queue, GPUs: j.GPUs, Start: at(j.Start), Requested: time.Duration(j.Requested) * time.Second})
			runJob = append(runJob, ev.job)
			wait := time.Duration(j.Wait()) * time.Second
			for _, model := range models {
				if lt, ok := model.(leaseTracker); ok {
					lt.Track(strconv.Itoa(int(ev.job)), running[len(running)-1])
				}
			}
			for m, model := range models {
				model.Observe(Observation{Request: req(j), Estimate: ests[m][ev.job], Wait: wait, Started: true})
			}
		case evEnd:
			k := runPos[ev.job]
			last := int32(len(running) - 1)
			running[k], runJob[k] = running[last], runJob[last]
			runPos[runJob[k]] = k
			running, runJob = running[:last], runJob[:last]
			for _, model := range models {
				if lt, ok := model.(leaseTracker); ok {
					lt.Untrack(strconv.Itoa(int(ev.job)))
				}
				if ro, ok := model.(interface {
					ObserveRun(Request, time.Duration)
				}); ok {
					ro.ObserveRun(req(j), time.Duration(j.End-j.Start)*time.Second)
				}
			}
		case evWithdraw:
			unqueue(ev.job)
			wait := time.Duration(j.End-j.Submit) * time.Second
			for m, model := range models {
				model.Observe(Observation{Request: req(j), Estimate: ests[m][ev.job], Wait: wait, Started: false})
			}
		}
	}
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
	ests := Replay(tr, ms...)
	first := int(math.Floor(trainFraction * float64(len(tr.Jobs))))
	first = min(max(first, 0), len(tr.Jobs))
	rep := Report{Trace: name, Jobs: len(tr.Jobs), Scored: len(tr.Jobs) - first, Skipped: tr.Skipped}
	for _, j := range tr.Jobs[first:] {
		if j.Started() {
			rep.Started++
		}
	}
	end := tr.End()
	for m, nm := range models {
		rep.Results = append(rep.Results, Score(nm.name, tr.Jobs[first:], ests[m][first:], end))
	}
	return rep
}

// Score computes a model's accuracy from the estimates its jobs got (ests[i] for jobs[i]).
// end is the trace's last moment (Trace.End): a job that never started counts as covered when
// its bound is Unbounded or reaches past end, since nothing later was recorded.
func Score(name string, jobs []Job, ests []Estimate, end int64) Result {
	r := Result{Predictor: name}
	var abs, ratios []float64
	var within, band, covered, coveredStarted, started, unbounded int
	for i, j := range jobs {
		e := ests[i]
		if e.P90 == Unbounded {
			unbounded++
		}
		if !j.Started() {
			if e.P90 == Unbounded || j.Submit+int64(e.P90/time.Second) >= end {
				covered++
			}
			continue
		}
		started++
		w := time.Duration(j.Wait()) * time.Second
		d := math.Abs((e.Median - w).Seconds())
		abs = append(abs, d)
		if d <= max(0.15*w.Seconds(), 60) {
			within++
		}
		if Band(e.Median) == Band(w) {
			band++
		}
		if w <= e.P90 {
			covered++
			coveredStarted++
		}
		if w >= time.Minute {
			r := math.Inf(1)
			if e.P90 != Unbounded {
				r = e.P90.Seconds() / w.Seconds()
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
	if len(jobs) > 0 {
		r.P90Coverage = float64(covered) / float64(len(jobs))
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
