// Package metrics owns the service's own Prometheus numbers: commands by verb and outcome, how
// fast chat deliveries are acknowledged, grants, reclaims, approvals and their latency, queue
// depth, outbox lag, scheduler calls, reconcile passes, the weekly showback's posts and messages,
// and how far the queue-wait predictor was off. It is the service's only package that imports client_golang (the node agent has metrics of
// its own).
//
// The domain never sees it: Metrics wraps the domain's ports (Store, Backend, WaitPredictor), so
// every lease transition is counted once, after its transaction commits, and every scheduler call
// is timed, without a line in internal/qm. The chat adapters and the command line report through
// plain functions (Command, Ack, Reconcile) that take strings and durations.
package metrics

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/acme/quartermaster/internal/qm"
)

// Namespace prefixes every metric of the service.
const Namespace = "quartermaster"

// StateTimeout bounds the database read behind the gauges at each scrape.
const StateTimeout = 2 * time.Second

// Outcomes of a command, for Command.
const (
	OutcomeOK    = "ok"    // the command did what was asked (or answered the question)
	OutcomeError = "error" // it was refused: bad input, not allowed, or a failure
)

// Buckets, in seconds.
var (
	// ackBuckets straddle Slack's three-second limit on acknowledgements.
	ackBuckets = []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2, 3, 5}
	// commandBuckets cover a command from a cache hit to a slow scheduler.
	commandBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	// decisionBuckets span minutes to the default approval timeout of a day and beyond.
	decisionBuckets = []float64{60, 300, 900, 1800, 3600, 2 * 3600, 4 * 3600, 8 * 3600, 24 * 3600, 72 * 3600}
	// callBuckets time scheduler calls (sbatch, squeue, API requests).
	callBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	// predictionBuckets measure how far a predicted wait was from the real one.
	predictionBuckets = []float64{0, 30, 60, 300, 900, 1800, 3600, 2 * 3600, 6 * 3600, 24 * 3600}
)

// State is what the gauges read from the database at each scrape: the same numbers on every
// replica, since they come from the shared database rather than from one process's memory.
type State struct {
	// Queued is how many workspace leases wait for GPUs, by class.
	Queued map[string]int
	// Running is how many GPUs running leases hold, by class.
	RunningGPUs map[string]int
	// PendingApprovals is how many exceptions wait for a decision.
	PendingApprovals int
	// OutboxPending is how many notices wait in the outbox to be sent; OutboxOldest how long the
	// oldest of them has waited (zero when none waits).
	OutboxPending int
	OutboxOldest  time.Duration
}

// StateFunc reads the State; Metrics calls it at each scrape with a deadline of StateTimeout.
type StateFunc func(ctx context.Context) (State, error)

// Build describes the running binary, for quartermaster_build_info.
type Build struct {
	Version, Commit, GoVersion string
}

// Metrics is the service's registry and its instruments. The zero value is not usable; call New.
// A nil *Metrics is valid everywhere and records nothing, so code paths need no checks.
type Metrics struct {
	reg *prometheus.Registry

	commands        *prometheus.CounterVec
	commandSeconds  *prometheus.HistogramVec
	ackSeconds      *prometheus.HistogramVec
	grants          *prometheus.CounterVec
	reclaims        *prometheus.CounterVec
	reclaimedHours  *prometheus.CounterVec
	ended           *prometheus.CounterVec
	decisions       *prometheus.CounterVec
	decisionSeconds *prometheus.HistogramVec
	backendCalls    *prometheus.CounterVec
	backendErrors   *prometheus.CounterVec
	backendSeconds  *prometheus.HistogramVec
	reconcileSecs   prometheus.Histogram
	reconcileErrors prometheus.Counter
	predictionError *prometheus.HistogramVec
	predictionsOver *prometheus.CounterVec
	stateErrors     prometheus.Counter
	showbackSent    *prometheus.CounterVec
	showbackFailed  *prometheus.CounterVec

	stateMu sync.Mutex
	state   StateFunc
	classes []string
}

// New makes a registry with the Go runtime and process collectors, the build info and every
// instrument of the service.
func New(b Build) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{reg: reg}
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if b.GoVersion == "" {
		b.GoVersion = runtime.Version()
	}
	info := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "build_info",
		Help:        "The running binary: version, commit and Go version as labels; always 1.",
		ConstLabels: prometheus.Labels{"version": b.Version, "commit": b.Commit, "goversion": b.GoVersion}})
	info.Set(1)
	f(info)

	m.commands = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "commands_total",
		Help: "Chat commands answered, by verb and outcome (ok, or error when the reply refused it)."}, []string{"verb", "outcome"})
	m.commandSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "command_duration_seconds",
		Help: "How long the bot took to answer a command, by verb.", Buckets: commandBuckets}, []string{"verb"})
	m.ackSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "chat_ack_duration_seconds",
		Help:    "How long a chat delivery waited for its acknowledgement, by platform, transport (http, socket) and kind (command, interaction, event). Slack allows 3 s.",
		Buckets: ackBuckets}, []string{"platform", "transport", "kind"})
	m.grants = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "grants_total",
		Help: "Workspace leases that became active for the first time, by class."}, []string{"class"})
	m.reclaims = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "reclaims_total",
		Help: "Leases ended by idle reclaim, by class."}, []string{"class"})
	m.reclaimedHours = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "reclaimed_gpu_seconds_total",
		Help: "GPU time returned to the pool by idle reclaim, in GPU-seconds (3600 per GPU-hour), by class."}, []string{"class"})
	m.ended = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "leases_ended_total",
		Help: "Leases that ended, by class and end state (released, expired, reclaimed, denied, cancelled, failed)."}, []string{"class", "state"})
	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "approval_decisions_total",
		Help: "Exceptions decided, by outcome (approved, denied, expired: undecided at the timeout)."}, []string{"outcome"})
	m.decisionSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "approval_decision_seconds",
		Help: "Time from an exception's request to its decision, by outcome.", Buckets: decisionBuckets}, []string{"outcome"})
	m.backendCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "backend_calls_total",
		Help: "Calls to the scheduler backend, by backend and operation (start, stop, jobs, cancel, set_time_limit)."}, []string{"backend", "op"})
	m.backendErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "backend_errors_total",
		Help: "Scheduler backend calls that failed, by backend and operation."}, []string{"backend", "op"})
	m.backendSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "backend_call_duration_seconds",
		Help: "How long scheduler backend calls took, by backend and operation.", Buckets: callBuckets}, []string{"backend", "op"})
	m.reconcileSecs = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "reconcile_duration_seconds",
		Help: "How long one pass making the scheduler and the database agree took.", Buckets: callBuckets})
	m.reconcileErrors = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "reconcile_errors_total",
		Help: "Reconcile passes that failed."})
	m.predictionError = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "wait_prediction_error_seconds",
		Help:    "For each lease that started after a wait prediction, how far the predicted median was from the real wait, by class.",
		Buckets: predictionBuckets}, []string{"class"})
	m.predictionsOver = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "wait_predictions_total",
		Help: "Wait predictions whose lease started, by class and whether the real wait was within the predicted 90% bound (within=true|false|unbounded)."},
		[]string{"class", "within"})
	m.stateErrors = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "state_read_errors_total",
		Help: "Scrapes at which the queue and approval gauges, the node agents' inventory mismatch or the weekly showback's progress could not be read from the database."})
	m.showbackSent = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "showback_messages_sent_total",
		Help: "Messages of the weekly showback this process delivered, by kind (channel: the post with its chart and CSV; dm: a budget owner's; team_channel: a team's lines in its channel)."},
		[]string{"kind"})
	m.showbackFailed = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "showback_messages_failed_total",
		Help: "Messages of the weekly showback the chat refused when this process tried them (a budget owner it cannot reach, a channel it cannot post to, a file that did not upload), by kind; each is tried again at the next catch-up."},
		[]string{"kind"})
	for _, c := range []prometheus.Collector{m.commands, m.commandSeconds, m.ackSeconds, m.grants, m.reclaims, m.reclaimedHours,
		m.ended, m.decisions, m.decisionSeconds, m.backendCalls, m.backendErrors, m.backendSeconds, m.reconcileSecs,
		m.reconcileErrors, m.predictionError, m.predictionsOver, m.stateErrors} {
		f(c)
	}
	for _, o := range []string{"approved", "denied", "expired"} {
		m.decisions.WithLabelValues(o)
	}
	f(stateCollector{m})
	return m
}

// SetClasses names the policy's classes: their series exist from then on (at zero), so a
// dashboard shows a flat line rather than nothing, and the queue gauges list every class.
func (m *Metrics) SetClasses(classes []string) {
	if m == nil {
		return
	}
	m.stateMu.Lock()
	m.classes = append([]string(nil), classes...)
	m.stateMu.Unlock()
	for _, c := range classes {
		m.grants.WithLabelValues(c)
		m.reclaims.WithLabelValues(c)
		m.reclaimedHours.WithLabelValues(c)
		for _, state := range qm.EndedStates {
			m.ended.WithLabelValues(c, string(state))
		}
		for _, within := range []string{"true", "false", "unbounded"} {
			m.predictionsOver.WithLabelValues(c, within)
		}
	}
}

// Notices exports what this process's outbox sender did: sent() notices delivered, repeated()
// of them delivered again after an earlier sender stopped mid-delivery (each may have reached its
// recipient twice). Call it once.
func (m *Metrics) Notices(sent, repeated func() int64) {
	if m == nil {
		return
	}
	m.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: Namespace, Name: "notices_sent_total",
			Help: "Notices this process delivered from the outbox."}, func() float64 { return float64(sent()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: Namespace, Name: "notices_repeated_total",
			Help: "Notices this process delivered again after their earlier sender stopped in the middle of delivering them; each may have reached its recipient twice."},
			func() float64 { return float64(repeated()) }))
}

// ShowbackState is how far the weekly showback has got, read from the database at each scrape.
type ShowbackState struct {
	// PostedThrough is the end of the latest week posted in full; zero when none was.
	PostedThrough time.Time
	// Unposted counts the weeks whose post is due and not yet made in full.
	Unposted int
}

// Showback exports what the weekly showback did: its messages sent and failed, by kind (every
// kind of kinds there at 0 from the start), and, read at each scrape with a deadline of
// StateTimeout, the weeks due and not posted and the end of the latest week posted. Call it once,
// where this process posts the showback.
func (m *Metrics) Showback(kinds []string, read func(ctx context.Context) (ShowbackState, error)) {
	if m == nil {
		return
	}
	for _, k := range kinds {
		m.showbackSent.WithLabelValues(k)
		m.showbackFailed.WithLabelValues(k)
	}
	m.reg.MustRegister(m.showbackSent, m.showbackFailed, showbackCollector{m: m, read: read})
}

// ShowbackMessage records one message of the weekly showback tried: kind is what Showback was
// given, err the chat's refusal, nil when it took the message.
func (m *Metrics) ShowbackMessage(kind string, err error) {
	if m == nil {
		return
	}
	if err != nil {
		m.showbackFailed.WithLabelValues(kind).Inc()
		return
	}
	m.showbackSent.WithLabelValues(kind).Inc()
}

var (
	showbackUnpostedDesc = prometheus.NewDesc(Namespace+"_showback_posts_pending",
		"Weeks whose weekly showback post was due (its scheduled time came; the latest four weeks) and is not made in full: a replica is posting it, or a message of it failed and waits for the next catch-up (from the database).",
		nil, nil)
	showbackPostedDesc = prometheus.NewDesc(Namespace+"_showback_last_posted_week_end_timestamp_seconds",
		"The end of the latest week whose weekly showback was posted in full (Monday 00:00 in the policy's time zone), in Unix seconds; absent until a week is posted (from the database).",
		nil, nil)
)

type showbackCollector struct {
	m    *Metrics
	read func(ctx context.Context) (ShowbackState, error)
}

func (c showbackCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- showbackUnpostedDesc
	ch <- showbackPostedDesc
}

func (c showbackCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), StateTimeout)
	defer cancel()
	st, err := c.read(ctx)
	if err != nil {
		c.m.stateErrors.Inc()
		return
	}
	ch <- prometheus.MustNewConstMetric(showbackUnpostedDesc, prometheus.GaugeValue, float64(st.Unposted))
	if !st.PostedThrough.IsZero() {
		ch <- prometheus.MustNewConstMetric(showbackPostedDesc, prometheus.GaugeValue, float64(st.PostedThrough.Unix()))
	}
}

// AgentReports counts the node agents' reports by outcome (accepted, unauthorized, wrong_node,
// malformed…; docs/agent.md), and the parts of them ignored (unknown_gpu, unknown_job, other_node), read from
// counts at each scrape.
func (m *Metrics) AgentReports(counts func() map[string]int64) {
	if m == nil {
		return
	}
	m.reg.MustRegister(countsCollector{counts})
}

var agentReportsDesc = prometheus.NewDesc(Namespace+"_agent_reports_total",
	"Node agents' reports taken at /api/v1/agent/reports, by outcome (accepted, or why one or a part of one was refused or ignored).",
	[]string{"outcome"}, nil)

type countsCollector struct{ counts func() map[string]int64 }

func (c countsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- agentReportsDesc }

func (c countsCollector) Collect(ch chan<- prometheus.Metric) {
	for k, v := range c.counts() {
		ch <- prometheus.MustNewConstMetric(agentReportsDesc, prometheus.CounterValue, float64(v), k)
	}
}

// AgentInventory exports quartermaster_agent_inventory_mismatch: for each node with a valid agent
// token, 1 while its agent reports other GPUs than the scheduler's inventory holds for it (their
// number, or a model that is not its class's SKU), else 0, read from mismatched (the database,
// the same on every replica) at each scrape with a deadline of StateTimeout. Its nodes are those
// given tokens, so its series are as many as the agents. Call it once.
func (m *Metrics) AgentInventory(mismatched func(ctx context.Context) (map[string]bool, error)) {
	if m == nil {
		return
	}
	m.reg.MustRegister(inventoryCollector{m: m, read: mismatched})
}

var agentInventoryDesc = prometheus.NewDesc(Namespace+"_agent_inventory_mismatch",
	"1 while a node's agent reports other GPUs than the scheduler's inventory holds for the node (their number, or a model that is not its class's sku), else 0; one series per node with a valid agent token (from the database).",
	[]string{"node"}, nil)

type inventoryCollector struct {
	m    *Metrics
	read func(ctx context.Context) (map[string]bool, error)
}

func (c inventoryCollector) Describe(ch chan<- *prometheus.Desc) { ch <- agentInventoryDesc }

func (c inventoryCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), StateTimeout)
	defer cancel()
	nodes, err := c.read(ctx)
	if err != nil {
		c.m.stateErrors.Inc()
		return
	}
	for node, off := range nodes {
		v := 0.0
		if off {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(agentInventoryDesc, prometheus.GaugeValue, v, node)
	}
}

// Registry is the registry behind Handler, for tests and for adding collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus text format (or OpenMetrics when asked).
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

// SetState names the function the queue and approval gauges are read with at each scrape.
func (m *Metrics) SetState(f StateFunc) {
	if m == nil {
		return
	}
	m.stateMu.Lock()
	m.state = f
	m.stateMu.Unlock()
}

// Command records one answered chat command.
func (m *Metrics) Command(verb, outcome string, took time.Duration) {
	if m == nil {
		return
	}
	m.commands.WithLabelValues(verb, outcome).Inc()
	m.commandSeconds.WithLabelValues(verb).Observe(took.Seconds())
}

// Ack records how long a chat delivery waited for its acknowledgement.
func (m *Metrics) Ack(platform, transport, kind string, took time.Duration) {
	if m == nil {
		return
	}
	m.ackSeconds.WithLabelValues(platform, transport, kind).Observe(took.Seconds())
}

// BackendCall records one scheduler call.
func (m *Metrics) BackendCall(backend, op string, took time.Duration, err error) {
	if m == nil {
		return
	}
	m.backendCalls.WithLabelValues(backend, op).Inc()
	m.backendSeconds.WithLabelValues(backend, op).Observe(took.Seconds())
	if err != nil {
		m.backendErrors.WithLabelValues(backend, op).Inc()
	}
}

// Reconcile records one reconcile pass.
func (m *Metrics) Reconcile(took time.Duration, err error) {
	if m == nil {
		return
	}
	m.reconcileSecs.Observe(took.Seconds())
	if err != nil {
		m.reconcileErrors.Inc()
	}
}

// stateCollector reads the gauges from the database at scrape time.
type stateCollector struct{ m *Metrics }

var (
	queuedDesc = prometheus.NewDesc(Namespace+"_queue_depth", "Workspace leases waiting for GPUs, by class (from the database).",
		[]string{"class"}, nil)
	runningDesc = prometheus.NewDesc(Namespace+"_running_gpus", "GPUs held by running leases, by class (from the database).",
		[]string{"class"}, nil)
	pendingDesc = prometheus.NewDesc(Namespace+"_approvals_pending", "Exceptions waiting for a budget owner's decision (from the database).",
		nil, nil)
	outboxDesc = prometheus.NewDesc(Namespace+"_outbox_pending", "Notices waiting in the outbox to be sent (from the database).",
		nil, nil)
	outboxAgeDesc = prometheus.NewDesc(Namespace+"_outbox_oldest_seconds", "How long the oldest notice in the outbox has waited to be sent; 0 when none waits (from the database).",
		nil, nil)
)

func (c stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queuedDesc
	ch <- runningDesc
	ch <- pendingDesc
	ch <- outboxDesc
	ch <- outboxAgeDesc
}

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.stateMu.Lock()
	f, classes := c.m.state, c.m.classes
	c.m.stateMu.Unlock()
	if f == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), StateTimeout)
	defer cancel()
	st, err := f(ctx)
	if err != nil {
		c.m.stateErrors.Inc()
		return
	}
	for _, cl := range classList(classes, st.Queued, st.RunningGPUs) {
		ch <- prometheus.MustNewConstMetric(queuedDesc, prometheus.GaugeValue, float64(st.Queued[cl]), cl)
		ch <- prometheus.MustNewConstMetric(runningDesc, prometheus.GaugeValue, float64(st.RunningGPUs[cl]), cl)
	}
	ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(st.PendingApprovals))
	ch <- prometheus.MustNewConstMetric(outboxDesc, prometheus.GaugeValue, float64(st.OutboxPending))
	ch <- prometheus.MustNewConstMetric(outboxAgeDesc, prometheus.GaugeValue, st.OutboxOldest.Seconds())
}

// classList is the policy's classes followed by any other class the database names (a class
// removed from the policy while leases of it still run).
func classList(classes []string, maps ...map[string]int) []string {
	seen := map[string]bool{}
	out := append([]string(nil), classes...)
	for _, c := range out {
		seen[c] = true
	}
	for _, mp := range maps {
		for c := range mp {
			if !seen[c] && strings.TrimSpace(c) != "" {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}
