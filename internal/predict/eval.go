package predict

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
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
	rep, _ := evaluate(sourceOf(tr), name, trainFraction, models()) // memory is read without fail
	rep.Skipped, rep.Why = tr.Skipped, tr.Why
	return rep
}

// models are the predictor and the baselines, fresh, in the order Evaluate reports them.
func models() []named {
	return []named{
		{NameQuartermaster, New(Config{})},
		{NameZero, Zero{}},
		{NameRecent100, &Recent{N: 100}},
		{NameUserRecent, &UserRecent{N: 20}},
		{NameQBETS, &QBETS{N: qbetsWindow}},
	}
}

// EvaluateFile replays the trace in the file at path (format as for ReadTraceFile) and scores
// it as Evaluate does, without holding the trace: the file is read once for what it says as a
// whole, once to count and check its jobs, and again for every pass of the replay. Memory then
// follows the jobs waiting or running at once (and the values the scores' medians are read
// from), not the trace's length. A file whose jobs are not in submit order is read into memory
// and sorted, as ReadTraceFile does.
func EvaluateFile(path, format, name string, trainFraction float64) (Report, error) {
	if format == "" {
		format = FormatFromPath(path)
	}
	pass := func(sk *skips, emit func(*row)) (facts, error) {
		f, err := os.Open(path)
		if err != nil {
			return facts{}, err
		}
		defer f.Close()
		fs, err := readRows(f, format, sk, emit)
		if err != nil {
			return facts{}, fmt.Errorf("%s: %w", path, err)
		}
		return fs, nil
	}
	fs, err := pass(&skips{}, func(*row) {})
	if err != nil {
		return Report{}, err
	}
	var sk skips
	var tr Trace // its skips, not its jobs
	jobs, end, last, sorted := 0, int64(0), int64(math.MinInt64), true
	_, err = pass(&sk, func(r *row) {
		if j, ok := fs.settle(r, &sk); ok {
			jobs++
			end = max(end, j.Submit, j.Start, j.End)
			sorted = sorted && j.Submit >= last
			last = j.Submit
		}
	})
	if err != nil {
		return Report{}, err
	}
	if err := sk.check(&tr, jobs); err != nil {
		return Report{}, fmt.Errorf("%s: %w", path, err)
	}
	if !sorted {
		tr, err := ReadTraceFile(path, format)
		if err != nil {
			return Report{}, err
		}
		return Evaluate(tr, name, trainFraction), nil
	}
	src := source{jobs: jobs, end: end, capacity: fs.capacity, each: func(yield func(*Job)) error {
		var aside skips // counted on the second read
		_, err := pass(&aside, func(r *row) {
			if j, ok := fs.settle(r, &aside); ok {
				yield(&j) // a copy of its own for every job: the replay keeps it while it is in flight
			}
		})
		return err
	}}
	rep, err := evaluate(src, name, trainFraction, models())
	rep.Skipped, rep.Why = tr.Skipped, tr.Why
	return rep, err
}

// Replay runs the trace through the models and returns, per model, the estimate each job got
// at its submit.
func Replay(tr Trace, models ...Model) [][]Estimate {
	out := make([][]Estimate, len(models))
	for m := range out {
		out[m] = make([]Estimate, len(tr.Jobs))
	}
	replay(sourceOf(tr), models, func(m int, job int32, _ *Job, e *Estimate) { out[m][job] = *e })
	return out
}

// source is a trace's jobs in submit order (ties in the file's order), numbered from 0, for as
// many passes as a replay needs: every call of each starts from the first job, and a job handed
// to yield stays valid after the call. A trace read into memory is one (sourceOf); a file read
// again on every pass is another (EvaluateFile).
type source struct {
	each     func(yield func(*Job)) error
	jobs     int
	end      int64 // the trace's last moment (Trace.End)
	capacity float64
}

// sourceOf is tr's jobs, from memory.
func sourceOf(tr Trace) source {
	return source{
		each: func(yield func(*Job)) error {
			for i := range tr.Jobs {
				yield(&tr.Jobs[i])
			}
			return nil
		},
		jobs: len(tr.Jobs), end: tr.End(), capacity: tr.Capacity,
	}
}

type eventKind int8

const (
	evEnd eventKind = iota
	evWithdraw
	evStart
	evSubmit
)

// event is something that happens to job number job (j) during a replay.
type event struct {
	t    int64
	j    *Job
	job  int32
	prio int8
	kind eventKind
}

// before orders events as a replay meets them: by time; at one moment ends first (GPUs freed are
// free for what follows), then departures, then starts already due, then submits, then starts at
// the submit's own moment, then instantaneous ends; then by job.
func (a *event) before(b *event) bool {
	switch {
	case a.t != b.t:
		return a.t < b.t
	case a.prio != b.prio:
		return a.prio < b.prio
	}
	return a.job < b.job
}

// play calls at for every event of the trace in the order a replay meets them (event.before).
// The submits come from the source in order; the starts, ends and departures of the jobs
// submitted so far wait in a heap until they are due, so a pass holds the jobs that are waiting
// or running, never the whole trace. None of a job's other events comes before its submit: each
// is later, or at the same moment with a later priority.
func play(src source, at func(ev *event)) error {
	var h []event
	var n int32
	err := src.each(func(j *Job) {
		sub := event{t: j.Submit, j: j, job: n, prio: 3, kind: evSubmit}
		for len(h) > 0 && h[0].before(&sub) {
			var ev event
			ev, h = heapPop(h, (*event).before)
			at(&ev)
		}
		at(&sub)
		switch {
		case j.Started():
			prio := int8(2) // a start already due is known to a submit at the same second
			if j.Start == j.Submit {
				prio = 4
			}
			h = heapPush(h, event{j.Start, j, n, prio, evStart}, (*event).before)
			if j.End >= 0 {
				prio := int8(0)
				if j.End <= j.Start {
					prio = 5
				}
				h = heapPush(h, event{max(j.End, j.Start), j, n, prio, evEnd}, (*event).before)
			}
		case j.End >= 0:
			prio := int8(1)
			if j.End <= j.Submit {
				prio = 5
			}
			h = heapPush(h, event{max(j.End, j.Submit), j, n, prio, evWithdraw}, (*event).before)
		}
		n++
	})
	for len(h) > 0 {
		var ev event
		ev, h = heapPop(h, (*event).before)
		at(&ev)
	}
	return err
}

// answer is what a model answered for one job, in whole seconds: the point and the bound
// (noBound for Unbounded).
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

// replay plays the trace's events through the models and hands every model's estimate for
// every job to record, at the job's submit. A model that reads the queue keeps its estimate for
// a job while the job waits (in its copy of the queue, where it belongs) and gets it back when
// the job starts or leaves; the others (queueBlind) are handed back none.
func replay(src source, models []Model, record func(m int, job int32, j *Job, e *Estimate)) error {
	var running []Lease
	var runJob []int32
	runPos := map[int32]int32{}
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
				continue
			}
			ests[m] = queues[m][k].Estimate
			queues[m] = remove(queues[m], k)
		}
		if k >= 0 {
			queueJob = remove(queueJob, k)
		}
	}
	return play(src, func(ev *event) {
		j := ev.j
		switch ev.kind {
		case evSubmit:
			r := req(j)
			for m, model := range models {
				st := State{Now: at(ev.t), Capacity: src.capacity, Running: running}
				if !blind[m] {
					st.Queue = queues[m]
				}
				if trackers[m] != nil {
					st.Running = nil // it tracks them itself
				}
				e := model.Predict(r, st)
				record(m, ev.job, j, &e)
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
			delete(runPos, ev.job)
			last := int32(len(running) - 1)
			running[k], runJob[k] = running[last], runJob[last]
			if k != last {
				runPos[runJob[k]] = k
			}
			running[last] = Lease{}
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
	})
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

// evaluate replays src through the models and scores the jobs from the first trainFraction on,
// as Evaluate does. The first model (the predictor) is replayed on its own pass while the
// others, and the QBETS samples for matching its coverage, are replayed on passes beside it: the
// models never meet, so the answers are the same as in one replay, in about the time of the
// slowest. Every job is scored at its submit, from what the trace says became of it, so that
// nothing is kept per job but what the medians of the scores are read from.
func evaluate(src source, name string, trainFraction float64, models []named) (Report, error) {
	first := int32(min(max(math.Floor(trainFraction*float64(src.jobs)), 0), float64(src.jobs)))
	tallies := make([]tally, len(models))
	scoring := func(offset int) func(m int, job int32, j *Job, e *Estimate) {
		return func(m int, job int32, j *Job, e *Estimate) {
			if job >= first {
				tallies[offset+m].add(j, compact(e), src.end)
			}
		}
	}
	ms := make([]Model, len(models))
	for i, m := range models {
		ms[i] = m.model
	}
	samples := make([]*qbetsOutcomes, len(models))
	var errs [2]error
	if len(ms) > 0 {
		var others sync.WaitGroup
		others.Go(func() {
			if errs[1] = replay(src, ms[1:], scoring(1)); errs[1] != nil {
				return
			}
			for i, nm := range models[1:] {
				if q, ok := nm.model.(*QBETS); ok {
					if samples[i+1], errs[1] = qbetsSamples(src, first, q.N); errs[1] != nil {
						return
					}
				}
			}
		})
		errs[0] = replay(src, ms[:1], scoring(0))
		others.Wait()
	}
	if err := errors.Join(errs[:]...); err != nil {
		return Report{}, err
	}
	rep := Report{Trace: name, Jobs: src.jobs, Scored: src.jobs - int(first)}
	for m, nm := range models {
		rep.Results = append(rep.Results, tallies[m].result(nm.name))
	}
	if len(tallies) > 0 {
		rep.Started = tallies[0].started
	}
	for i, s := range samples {
		if s == nil {
			continue
		}
		m, err := s.match(rep.Results[0].P90Coverage)
		if err != nil {
			return Report{}, err
		}
		rep.Results[i].Matched = m
	}
	return rep, nil
}

// Score computes a model's accuracy from the estimates its jobs got (ests[i] for jobs[i]).
// end is the trace's last moment (Trace.End): a job that never started and has no recorded
// departure is censored there.
func Score(name string, jobs []Job, ests []Estimate, end int64) Result {
	var t tally
	for i := range ests {
		t.add(&jobs[i], compact(&ests[i]), end)
	}
	return t.result(name)
}

// censoredAt is how long a job that never started had waited when the trace lost sight of it:
// until it left the queue, or until the trace's end.
func censoredAt(j *Job, end int64) int64 {
	if j.End >= 0 {
		return max(j.End-j.Submit, 0)
	}
	return max(end-j.Submit, 0)
}

// tally is a model's score as the jobs come: counts and sums, and the values the medians are
// read from (the absolute errors, in whole seconds, and the ratios of bound to wait).
type tally struct {
	abs                                                      []int32
	ratios                                                   []float64
	sum                                                      float64
	jobs, within, band, covered, started, unbounded, counted int
}

// add scores the answer a got for job j; end is the trace's last moment (see censoredAt).
func (t *tally) add(j *Job, a answer, end int64) {
	t.jobs++
	if a.p90 == noBound {
		t.unbounded++
	}
	if !j.Started() {
		// Right-censored: a bound shorter than what it waited is a miss; else left out.
		if a.p90 != noBound && int64(a.p90) < censoredAt(j, end) {
			t.counted++
		}
		return
	}
	t.started++
	t.counted++
	w := j.Wait()
	d := math.Abs(float64(int64(a.median) - w))
	t.sum += d
	t.abs = append(t.abs, int32(min(d, math.MaxInt32)))
	if d <= max(0.15*float64(w), 60) {
		t.within++
	}
	if Band(time.Duration(a.median)*time.Second) == Band(time.Duration(w)*time.Second) {
		t.band++
	}
	if a.p90 == noBound || w <= int64(a.p90) {
		t.covered++
	}
	if w >= 60 {
		r := math.Inf(1)
		if a.p90 != noBound {
			r = float64(a.p90) / float64(w)
		}
		t.ratios = append(t.ratios, r)
	}
}

func (t *tally) result(name string) Result {
	r := Result{Predictor: name}
	if t.started > 0 {
		slices.Sort(t.abs)
		n := len(t.abs)
		r.MAEMinutes = t.sum / float64(t.started) / 60
		r.MedianAEMinutes = float64(t.abs[n/2]) / 60
		if n%2 == 0 {
			r.MedianAEMinutes = (float64(t.abs[n/2-1]) + float64(t.abs[n/2])) / 2 / 60
		}
		r.Within15 = float64(t.within) / float64(t.started)
		r.BandAccuracy = float64(t.band) / float64(t.started)
		r.P90CoverageStarted = float64(t.covered) / float64(t.started)
	}
	r.P90Scored = t.counted
	if t.counted > 0 {
		r.P90Coverage = float64(t.covered) / float64(t.counted)
	}
	if t.jobs > 0 {
		r.P90Unbounded = float64(t.unbounded) / float64(t.jobs)
	}
	slices.Sort(t.ratios)
	r.P90Tightness = median(t.ratios)
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
