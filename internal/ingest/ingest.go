// Package ingest is the service side of the node agents: the HTTP handler for
// POST /api/v1/agent/reports, which checks each node's bearer token (kept hashed), refuses what is
// malformed, oversized, dated ahead without the agent's sending time or addressed for another node,
// places the rest on its own clock by the node's measured clock skew, ignores replays, and counts
// every reason; it finds the lease behind each GPU process through its Slurm job id (the lease's
// Ref) or pod UID, keeps the raw sample briefly, updates what the idle path reads (Telemetry), adds
// hourly usage rollups per lease through qm.UsageStore, and keeps each node's topology for
// placement.
package ingest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/hostlist"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store"
)

// Defaults for Config fields left empty.
const (
	// DefaultMaxSkew is how far a node's clock may be off the service's before its reports count as
	// clock_off, and how far ahead of the service's clock a report without its sending time may
	// be dated.
	DefaultMaxSkew = report.MaxClockSkew
	// DefaultRawRetention is how long raw samples are kept; older reports are ignored.
	DefaultRawRetention = 24 * time.Hour
	// DefaultActivityRetention is how long the activity of a lease no report covers is kept.
	DefaultActivityRetention = 30 * 24 * time.Hour
	// DefaultIndexEvery is how often the running leases are read again to map jobs to leases.
	DefaultIndexEvery = 5 * time.Second
	// DefaultFlushEvery is how often usage rollups are added to the store.
	DefaultFlushEvery = time.Minute
	// DefaultPruneEvery is how often old samples are forgotten.
	DefaultPruneEvery = 10 * time.Minute
	// tokenCacheTTL is how long a checked token is trusted without asking the store again; the
	// store checks it once more when it writes the report, so a revoked token never writes.
	tokenCacheTTL = 30 * time.Second
)

// Reasons a report, or a part of one, was refused or ignored; each is counted.
const (
	Accepted     = "accepted"
	Unauthorized = "unauthorized" // missing, unknown or revoked token (401)
	WrongNode    = "wrong_node"   // the token is another node's (403)
	TooLarge     = "too_large"    // body over report.MaxBytes (413)
	Malformed    = "malformed"    // not a valid report (400)
	Future       = "future"       // dated too far ahead (422)
	TooOld       = "too_old"      // older than the raw retention, or than what is kept of its run (ignored)
	Replayed     = "replayed"     // a report the service has already taken, sent again (ignored)
	Failed       = "failed"       // the store failed (500)
	UnknownGPU   = "unknown_gpu"  // a GPU not in the node's topology (ignored)
	UnknownJob   = "unknown_job"  // a process of a job or pod no running lease owns (ignored)
	// ClockOff is a report whose node's clock is more than MaxSkew off the service's (taken, placed
	// by the difference).
	ClockOff = "clock_off"
	// OtherNode is a process of a job or pod whose lease runs on other nodes than the report's
	// (ignored).
	OtherNode = "other_node"
)

// reasons are every outcome Counts reports.
var reasons = []string{Accepted, Unauthorized, WrongNode, TooLarge, Malformed, Future, TooOld, Replayed, Failed, UnknownGPU, UnknownJob, OtherNode, ClockOff}

// Store is what ingest needs of the database (*store.DB).
type Store interface {
	AgentNode(ctx context.Context, tokenHash string) (string, error)
	RecordAgentReports(ctx context.Context, rs []store.AgentReport) ([]store.AgentReportResult, error)
	NodeTopologyOf(ctx context.Context, node string) (qm.Topology, string, bool, error)
	GPUNodes(ctx context.Context, since time.Time) (map[string]string, error)
	PruneAgentData(ctx context.Context, samplesBefore, activityBefore time.Time) (int64, error)
	SetAgentInventoryMismatch(ctx context.Context, node string, checked bool, mismatch string) error
	qm.UsageStore
}

// Config configures the ingest.
type Config struct {
	Store Store
	// Leases lists the running workspace leases (with Ref and Node).
	Leases func(ctx context.Context) ([]*qm.Lease, error)
	// PodUIDs finds the UIDs of the pods behind a Kubernetes lease's Ref; nil where there is no
	// Kubernetes.
	PodUIDs func(ctx context.Context, ref string) ([]string, error)
	Clock   qm.Clock
	// IdleBelow is the utilization, percent, under which a GPU is idle (the policy's
	// idle.utilization_below).
	IdleBelow float64
	// Location is the policy's time zone: usage is rolled up by its hours (qm.HourStart).
	Location *time.Location
	Logger   *slog.Logger

	MaxSkew, RawRetention, ActivityRetention time.Duration
	IndexEvery, FlushEvery, PruneEvery       time.Duration
	// Writers bounds the batches of reports written at once; zero means DefaultWriters.
	Writers int
	// Inventory is what the scheduler's inventory holds of a node, which its agent's reports are
	// checked against (NodeInventories): nil while the inventory is not read yet, a NodeInventory
	// without classes for a node it lacks. Nil: nothing is checked.
	Inventory func(node string) *NodeInventory
}

// Ingest takes the node agents' reports.
type Ingest struct {
	cfg Config
	log *slog.Logger

	countMu sync.Mutex
	counts  map[string]int64

	tokMu  sync.Mutex
	tokens map[string]cachedToken
	// otherWarned are the node/lease pairs whose other_node processes were logged.
	otherWarned map[string]bool
	// clockOff are the nodes (in lower case) whose clock was last seen off by more than MaxSkew.
	clockOff map[string]bool

	topoMu sync.Mutex
	topos  map[string]knownGPUs

	// runs is what was last seen of each node's agent runs, by node in lower case (noteRun).
	runMu sync.Mutex
	runs  map[string]*nodeRuns

	// invState is what was last recorded of each node's agent against the scheduler's inventory,
	// by node in lower case.
	invMu    sync.Mutex
	invState map[string]nodeInventoryState

	idxMu sync.Mutex
	idx   *leaseIndex
	uids  map[string]cachedUIDs

	usage *rollups
	batch *batcher
}

type cachedToken struct {
	node string
	at   time.Time
}

type knownGPUs struct {
	hash  string
	uuids map[string]bool
	// count is how many GPUs the topology lists, a lost one (without a UUID) too.
	count int
}

// New makes the ingest.
func New(cfg Config) *Ingest {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.MaxSkew, DefaultMaxSkew)
	def(&cfg.RawRetention, DefaultRawRetention)
	def(&cfg.ActivityRetention, DefaultActivityRetention)
	def(&cfg.IndexEvery, DefaultIndexEvery)
	def(&cfg.FlushEvery, DefaultFlushEvery)
	def(&cfg.PruneEvery, DefaultPruneEvery)
	if cfg.Writers <= 0 {
		cfg.Writers = DefaultWriters
	}
	return &Ingest{cfg: cfg, log: cfg.Logger.With("part", "ingest"), counts: map[string]int64{},
		tokens: map[string]cachedToken{}, otherWarned: map[string]bool{}, clockOff: map[string]bool{}, topos: map[string]knownGPUs{}, invState: map[string]nodeInventoryState{}, uids: map[string]cachedUIDs{}, usage: newRollups(),
		batch: &batcher{write: cfg.Store.RecordAgentReports, writers: cfg.Writers}}
}

// Register mounts the handler on mux.
func (i *Ingest) Register(mux *http.ServeMux) {
	mux.Handle("POST "+report.Path, i)
}

// IsReport says whether r is a report that Register's handler takes. The HTTP server hands such a
// request whose body is over its own limit on every request to the handler (httpserve's
// AnswersTooLarge), so that it is refused and counted as too_large, as one over report.MaxBytes
// is, whatever its size.
func IsReport(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == report.Path
}

// Counts is how many reports (and parts of reports) were taken, refused or ignored, by reason;
// every reason is there, at zero until it happens, so an alert on one's rate sees its first.
func (i *Ingest) Counts() map[string]int64 {
	i.countMu.Lock()
	defer i.countMu.Unlock()
	out := make(map[string]int64, len(reasons))
	for _, r := range reasons {
		out[r] = 0
	}
	for k, v := range i.counts {
		out[k] = v
	}
	return out
}

func (i *Ingest) count(reason string, n int) {
	if n == 0 {
		return
	}
	i.countMu.Lock()
	i.counts[reason] += int64(n)
	i.countMu.Unlock()
}

// NewToken makes a node token: 32 random bytes, URL-safe, with a prefix that says what it is.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("ingest: random token: %w", err)
	}
	return "qma_" + base64.RawURLEncoding.EncodeToString(b), nil
}

// HashToken is what the store keeps of a token. The token is 256 random bits, so a plain SHA-256
// is enough: there is nothing to guess that a slow hash would protect.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func (i *Ingest) refuse(w http.ResponseWriter, status int, reason, msg string) {
	i.count(reason, 1)
	w.Header().Set("Content-Type", "application/json")
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="quartermaster agents"`)
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(report.Error{Error: msg})
}

func answer(w http.ResponseWriter, r report.Response) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(r)
}

// ServeHTTP takes one report.
func (i *Ingest) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	token, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	token = strings.TrimSpace(token)
	if !ok || token == "" {
		i.refuse(w, http.StatusUnauthorized, Unauthorized, "no bearer token; create one with `quartermaster agent-token create "+claimedNode(w, req)+"` and give it to the node's agent")
		return
	}
	hash := HashToken(token)
	node, err := i.nodeOf(ctx, hash)
	if errors.Is(err, store.ErrAgentUnauthorized) {
		i.refuse(w, http.StatusUnauthorized, Unauthorized, revokedMessage(claimedNode(w, req)))
		return
	}
	if err != nil {
		i.log.Error("token lookup failed", "err", err)
		i.refuse(w, http.StatusInternalServerError, Failed, "the service could not check the token; it will be fine to retry")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, report.MaxBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			i.refuse(w, http.StatusRequestEntityTooLarge, TooLarge, fmt.Sprintf("the report is larger than %d bytes", report.MaxBytes))
			return
		}
		i.refuse(w, http.StatusBadRequest, Malformed, "the report could not be read")
		return
	}
	r, err := Decode(body)
	if err != nil {
		i.refuse(w, http.StatusBadRequest, Malformed, err.Error())
		return
	}
	// Node names are host names: written the same ignoring A-Z case, they name one node, which is
	// kept under its token's spelling.
	if !strings.EqualFold(r.Node, node) {
		if i.revoked(w, req, hash, r.Node) {
			return
		}
		i.log.Warn("a report named another node than its token's", "issued_to_node", node, "report_node", r.Node)
		i.refuse(w, http.StatusForbidden, WrongNode, fmt.Sprintf("this token belongs to node %s, not %s", node, r.Node))
		return
	}
	r.Node = node
	now := i.cfg.Clock.Now()
	// The node's clock may be off the service's by any amount: where the agent said its clock when
	// it sent the report, the report is placed on the service's clock by the difference. Without
	// that, a report dated ahead cannot be told from one whose node's clock is ahead.
	skew, skewSecs, measured := clockSkew(r.At, req.Header.Get(report.SentAtHeader), now)
	if !measured && r.At.After(now.Add(i.cfg.MaxSkew)) {
		i.refuse(w, http.StatusUnprocessableEntity, Future, fmt.Sprintf("the report is dated %s, %s ahead of the service's clock; check the node's clock (NTP)",
			stamp(r.At), howFarAhead(r.At, now)))
		return
	}
	at := onServiceClock(r.At, skew, now)
	if at.Before(now.Add(-i.cfg.RawRetention)) {
		i.count(TooOld, 1)
		answer(w, report.Response{Ignored: TooOld})
		return
	}
	if r.Topology != nil {
		// A node reports its own GPUs: one that another node's agent reports is not this node's
		// to report, whatever its token.
		owner, gpu, err := i.otherNodesGPU(ctx, r, now)
		if err != nil {
			i.log.Error("checking a report's GPUs failed", "node", r.Node, "err", err)
			i.refuse(w, http.StatusInternalServerError, Failed, "the service could not check the report's GPUs; it will be fine to retry")
			return
		}
		if owner != "" {
			if i.revoked(w, req, hash, r.Node) {
				return
			}
			i.log.Warn("a report listed another node's GPU", "node", r.Node, "gpu", gpu, "gpu_node", owner)
			i.refuse(w, http.StatusForbidden, WrongNode, fmt.Sprintf("GPU %s is node %s's (its agent reports it), so node %s cannot report it; "+
				"check that this agent's --node (QM_NODE) and token are this machine's; a GPU moved here from %s is taken once `quartermaster agent-token revoke %s` retires that node",
				gpu, owner, r.Node, owner, owner))
			return
		}
	}
	var measuredSkew *float64
	if measured {
		measuredSkew = &skewSecs
	}
	resp, err := i.take(ctx, hash, r, now, at, measuredSkew)
	if errors.Is(err, store.ErrAgentUnauthorized) {
		i.forget(hash)
		i.refuse(w, http.StatusUnauthorized, Unauthorized, revokedMessage(r.Node))
		return
	}
	if err != nil {
		i.log.Error("storing a report failed", "node", r.Node, "err", err)
		i.refuse(w, http.StatusInternalServerError, Failed, "the service could not store the report; it will be fine to retry")
		return
	}
	// A report sent again as it was (a proxy's retry) carries the sending time of when it was
	// first sent: only a report taken says how far the node's clock is off, and the answer to one
	// ignored claims no skew (the agent keeps the last it was told).
	if resp.Accepted {
		i.checkInventory(ctx, r)
		i.noteRun(r.Node, r.Run, now)
	}
	if measured && resp.Accepted {
		secs := math.Round(skewSecs*1000) / 1000
		resp.ClockSkew = &secs
		i.noteClock(r.Node, skew, skewSecs)
		if skew > i.cfg.MaxSkew || skew < -i.cfg.MaxSkew {
			i.count(ClockOff, 1)
		}
	}
	answer(w, resp)
}

// nodeRuns is what the service last saw of a node's agent runs: the run of its last report taken,
// the run before that and when that one was last heard, and how often reports went back to it.
type nodeRuns struct {
	last, prev     string
	lastAt, prevAt time.Time
	back           int
	warned         bool
}

// twoRunsBack is how often a node's reports must go back to a run that was followed by another
// before the log says two agents report the node: an agent that just restarted may have had one
// report on its way, which comes after the new run's first and goes back twice (to the old run,
// then to the new).
const twoRunsBack = 3

// noteRun notes that a report of node's agent run was taken at now, and logs once per node when
// its reports keep going back and forth between two runs: two agents report the node (one started
// by mistake beside the other: a systemd unit and a DaemonSet pod, or a second unit by hand),
// which an agent that restarts, its old run ending as its new one begins, never does.
func (i *Ingest) noteRun(node, run string, now time.Time) {
	if run == "" {
		return // an older agent's: its runs cannot be told apart
	}
	key := strings.ToLower(node)
	i.runMu.Lock()
	defer i.runMu.Unlock()
	if i.runs == nil || len(i.runs) > 100000 {
		i.runs = map[string]*nodeRuns{}
	}
	st := i.runs[key]
	switch {
	case st == nil:
		i.runs[key] = &nodeRuns{last: run, lastAt: now}
		return
	case run == st.last:
		st.lastAt = now
		return
	case run == st.prev && now.Sub(st.prevAt) <= report.MaxInterval:
		st.back++
	default:
		st.back = 0
	}
	st.prev, st.prevAt, st.last, st.lastAt = st.last, st.lastAt, run, now
	if st.back >= twoRunsBack && !st.warned {
		st.warned = true
		i.log.Warn("two agents report one node at once: stop one of them (a node needs one agent; look for a second quartermaster-agent on the node, such as a systemd unit beside a DaemonSet pod)",
			"node", node, "runs", st.prev+","+st.last)
	}
}

// revoked checks a token again in the store, past the short cache, before a report is refused for
// another node's sake: a token revoked meanwhile is refused as revoked (401), naming the command
// that mends it for node, rather than with advice about another node. It says whether it refused.
func (i *Ingest) revoked(w http.ResponseWriter, req *http.Request, hash, node string) bool {
	i.forget(hash)
	_, err := i.nodeOf(req.Context(), hash)
	if errors.Is(err, store.ErrAgentUnauthorized) {
		i.refuse(w, http.StatusUnauthorized, Unauthorized, revokedMessage(node))
		return true
	}
	return false // valid, or the store failed: the refusal that was coming stands
}

// otherNodesGPU is a GPU of r's topology that another node's agent has reported within the raw
// retention (a day) before now, by the service's clock whatever either node's clock says, and
// that node; both empty when there is none.
func (i *Ingest) otherNodesGPU(ctx context.Context, r report.Report, now time.Time) (node, gpu string, err error) {
	owners, err := i.cfg.Store.GPUNodes(ctx, now.Add(-i.cfg.RawRetention))
	if err != nil {
		return "", "", err
	}
	for _, g := range r.Topology.GPUs {
		if n, ok := owners[g.UUID]; ok && g.UUID != "" && !strings.EqualFold(n, r.Node) {
			return n, g.UUID, nil
		}
	}
	return "", "", nil
}

// revokedMessage is the 401 for a token the service does not know (any more), naming the command
// that makes node a new one.
func revokedMessage(node string) string {
	return "this token is unknown or revoked; create a new one with `quartermaster agent-token create " + node + "` and give it to the node's agent"
}

// claimedNode is the node a refused request's report names, for the refusal to name the command
// that mends it; NODE when the body (read up to report.MaxBytes) names no node.
func claimedNode(w http.ResponseWriter, req *http.Request) string {
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, report.MaxBytes))
	var head struct {
		Node string `json:"node"`
	}
	if err != nil || json.Unmarshal(body, &head) != nil || report.NodeNameProblem(head.Node) != "" {
		return "NODE"
	}
	return head.Node
}

// clockSkew is how far the node's clock was ahead of the service's (negative: behind) when a
// report taken at at (by the node's clock) came in at received: the node's clock when the agent
// sent it (report.SentAtHeader) less received. The report may have waited in the agent's outbox,
// so its own time alone cannot tell. The time on the way counts as the node's clock behind. ok is
// false when there is no sending time, it does not read as one, or it comes before the report
// was taken. skew stops at the longest time.Duration (about 292 years) either way; secs is the
// same in seconds, however far off (a clock set to the year 9999 is 7972 years ahead).
func clockSkew(at time.Time, sentAt string, received time.Time) (skew time.Duration, secs float64, ok bool) {
	sent, err := time.Parse(time.RFC3339Nano, sentAt)
	if sentAt == "" || err != nil || sent.Before(at) {
		return 0, 0, false
	}
	secs = float64(sent.Unix()-received.Unix()) + float64(sent.Nanosecond()-received.Nanosecond())/1e9
	return sent.Sub(received), secs, true
}

// howFarAhead says how far later is ahead of now: in whole years from a year on (a duration
// holds no more than about 292 years, and hours say little past a few days), else as a duration.
func howFarAhead(later, now time.Time) string {
	later, now = later.UTC(), now.UTC()
	years := later.Year() - now.Year()
	if later.AddDate(-years, 0, 0).Before(now) {
		years--
	}
	switch {
	case years == 1:
		return "1 year"
	case years > 1:
		return fmt.Sprintf("%d years", years)
	}
	return later.Sub(now).Round(time.Second).String()
}

// onServiceClock places a report's time (by the node's clock) on the service's: less the node's
// clock skew (clockSkew; zero when not measured). Whatever the node says, the result is never
// later than the moment the report came in.
func onServiceClock(at time.Time, skew time.Duration, received time.Time) time.Time {
	at = at.Add(-skew)
	if at.After(received) {
		return received
	}
	return at
}

// noteClock logs once when node's clock goes more than MaxSkew off the service's, and once when
// it is back within; secs is skew in seconds, however far off (clockSkew).
func (i *Ingest) noteClock(node string, skew time.Duration, secs float64) {
	off := skew > i.cfg.MaxSkew || skew < -i.cfg.MaxSkew
	key := strings.ToLower(node)
	i.tokMu.Lock()
	was := i.clockOff[key]
	if off {
		if len(i.clockOff) > 100000 {
			clear(i.clockOff)
		}
		i.clockOff[key] = true
	} else {
		delete(i.clockOff, key)
	}
	i.tokMu.Unlock()
	how := "ahead of"
	if skew < 0 {
		how = "behind"
	}
	switch {
	case off && !was:
		i.log.Warn("a node's clock is off the service's: its reports are placed on the service's clock by the difference, but check the node's NTP",
			"node", node, "skew", report.Skew(secs, time.Second), "clock", how)
	case !off && was:
		i.log.Info("a node's clock is back within the service's", "node", node, "skew", report.Skew(secs, time.Millisecond))
	}
}

// nodeOf is the node of a token hash, from a short cache or the store.
func (i *Ingest) nodeOf(ctx context.Context, hash string) (string, error) {
	i.tokMu.Lock()
	c, ok := i.tokens[hash]
	i.tokMu.Unlock()
	if ok && time.Since(c.at) < tokenCacheTTL {
		return c.node, nil
	}
	node, err := i.cfg.Store.AgentNode(ctx, hash)
	if err != nil {
		return "", err
	}
	i.tokMu.Lock()
	if len(i.tokens) > 100000 {
		clear(i.tokens)
	}
	i.tokens[hash] = cachedToken{node: node, at: time.Now()}
	i.tokMu.Unlock()
	return node, nil
}

// warnOtherNode logs, once per node and lease, that node's report listed a process of lease l,
// which runs on other nodes.
func (i *Ingest) warnOtherNode(node string, l *qm.Lease, p report.Process) {
	key := fmt.Sprintf("%s/%d", strings.ToLower(node), l.ID)
	i.tokMu.Lock()
	if len(i.otherWarned) > 10000 {
		clear(i.otherWarned)
	}
	seen := i.otherWarned[key]
	i.otherWarned[key] = true
	i.tokMu.Unlock()
	if !seen {
		i.log.Warn("a report listed a process of a lease that runs on other nodes; it does not count for the lease",
			"node", node, "lease", l.ID, "lease_nodes", l.Node, "job", p.Job, "pod", p.Pod)
	}
}

func (i *Ingest) forget(hash string) {
	i.tokMu.Lock()
	delete(i.tokens, hash)
	i.tokMu.Unlock()
}

// leaseSeen is what one report says of one lease.
type leaseSeen struct {
	lease *qm.Lease
	gpus  map[int]bool // the GPUs it has a process on, whole or through a MIG device
	// whole are the GPUs it has a process on outside any MIG device, judged by their utilization;
	// slices the MIG devices it has a process on, judged by their own activity.
	whole  map[int]bool
	slices map[string]*report.MIGDevice
	// sliceMem is its processes' memory on each MIG device, for a device whose memory in use
	// NVML did not give.
	sliceMem map[string]uint64
	mem      uint64
	active   bool
}

func newLeaseSeen(l *qm.Lease) *leaseSeen {
	return &leaseSeen{lease: l, gpus: map[int]bool{}, whole: map[int]bool{}, slices: map[string]*report.MIGDevice{}, sliceMem: map[string]uint64{}}
}

// addMem adds without wrapping: a report's memory figures are the agent's word, not bounded.
func addMem(a, b uint64) uint64 {
	if a+b < a {
		return math.MaxUint64
	}
	return a + b
}

// take maps the report onto leases and stores it; at is the report's time on the service's clock
// (onServiceClock), skew the node's clock skew in seconds where it was measured (clockSkew).
func (i *Ingest) take(ctx context.Context, hash string, r report.Report, now, at time.Time, skew *float64) (report.Response, error) {
	resp := report.Response{Accepted: true, Skipped: map[string]int{}}
	known, topo, err := i.knownGPUs(ctx, r)
	if err != nil {
		return resp, err
	}
	idx, err := i.index(ctx)
	if err != nil {
		return resp, err
	}
	seen := map[qm.LeaseID]*leaseSeen{}
	for _, l := range idx.byNode[strings.ToLower(r.Node)] {
		seen[l.ID] = newLeaseSeen(l)
	}
	util := map[int]*float64{}
	reported := make(map[string]bool, len(r.GPUs))
	for _, g := range r.GPUs {
		reported[g.UUID] = true
	}
	// A GPU of the node's topology that the report lacks (the agent could not read it, or marked it
	// lost at start, with or without a UUID) may be where a lease works: from such a report only
	// the leases it shows busy are judged.
	partial := false
	for u := range known {
		if !reported[u] {
			partial = true
			break
		}
	}
	// lacking is whether the report lacks a GPU of the node's topology (not only lists one it
	// lacks); readIndex the indexes of the node's GPUs it gives.
	lacking := partial
	readIndex := map[int]bool{}
	for _, g := range r.GPUs {
		if known[g.UUID] {
			readIndex[g.Index] = true
		}
	}
	// A busy GPU with no process of a job or pod (one the agent could not map, or MPS clients or
	// graphics processes of a driver that does not list them) is work the report cannot place: it may be
	// that of a lease on the node that shows no process of its own.
	unplacedBusy := false
	unplacedBusyN := 0 // such GPUs and MIG devices
	for _, g := range r.GPUs {
		if !known[g.UUID] {
			resp.Skipped[UnknownGPU]++
			continue
		}
		util[g.Index] = g.Util
		placed := func(p report.Process) bool { return p.Job != "" || p.Pod != "" }
		if g.Util != nil && *g.Util >= i.cfg.IdleBelow && !slices.ContainsFunc(g.Processes, placed) {
			unplacedBusy = true
			unplacedBusyN++
		}
		// owner is the running lease of a process; nil for the node's own (counted when it names
		// a job or pod no running lease owns).
		owner := func(p report.Process) *leaseSeen {
			var l *qm.Lease
			switch {
			case p.Job != "":
				l = idx.byJob[p.Job]
			case p.Pod != "":
				l = idx.byPod[p.Pod]
			default:
				return nil // a process of neither: the node's own
			}
			if l == nil {
				resp.Skipped[UnknownJob]++
				return nil
			}
			if !idx.mayRunOn(l, r.Node) {
				// Another node's lease: this node's word cannot keep it busy.
				resp.Skipped[OtherNode]++
				i.warnOtherNode(r.Node, l, p)
				return nil
			}
			s := seen[l.ID]
			if s == nil {
				s = newLeaseSeen(l)
				seen[l.ID] = s
			}
			s.gpus[g.Index] = true
			return s
		}
		// A process on a MIG device is that device's work: its slice says whether it is busy, not
		// the whole GPU, which gives no utilization in MIG mode. (The GPU lists it too.)
		onSlice := map[uint32]bool{}
		for k := range g.MIG {
			m := &g.MIG[k]
			if m.Util != nil && *m.Util >= i.cfg.IdleBelow && !slices.ContainsFunc(m.Processes, placed) {
				unplacedBusy = true
				unplacedBusyN++
			}
			for _, p := range m.Processes {
				onSlice[p.PID] = true
				if s := owner(p); s != nil {
					s.slices[m.UUID] = m
					s.sliceMem[m.UUID] = addMem(s.sliceMem[m.UUID], p.MemUsed)
				}
			}
		}
		for _, p := range g.Processes {
			if onSlice[p.PID] {
				continue
			}
			if s := owner(p); s != nil {
				s.whole[g.Index] = true
				s.mem = addMem(s.mem, p.MemUsed)
			}
		}
	}
	if resp.Skipped[UnknownGPU] > 0 {
		// A GPU the node's topology lacks may be where a lease's work runs: judging the node's
		// leases from the rest could call a busy lease idle. As for a report that lacks a GPU of
		// the node, only the leases it shows busy are judged; the others' GPU time is not
		// observed. The agent is asked for its topology.
		partial = true
		resp.TopologyWanted = true
	}
	// A report stands for at most the longest --interval, whatever its interval_s says: the
	// node's silence is noticed (TelemetryStaleAfter) by that, and usage counts no more.
	interval := min(time.Duration(r.Interval*float64(time.Second)), report.MaxInterval)
	rec := store.AgentReport{Node: r.Node, TokenHash: hash, At: r.At, Seen: at, Run: r.Run, Seq: r.Seq, Received: now, ClockSkewSecs: skew, TopologyHash: r.TopologyHash,
		Interval: interval}
	if rec.GPUs, err = json.Marshal(r.GPUs); err != nil {
		return resp, fmt.Errorf("ingest: %w", err)
	}
	if topo != nil {
		rec.Topology = topo
	}
	var rolls []qm.UsageRollup
	ids := make([]qm.LeaseID, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	for _, id := range ids {
		s := seen[id]
		var sum float64
		var n int
		unread := false
		// The lease's GPUs (and MIG devices) seen busy, seen idle with its process on them, and
		// with its process but no utilization: the showback counts its GPU time idle GPU by GPU.
		busyUnits, idleUnits, unreadUnits := 0, 0, 0
		judge := func(u *float64) bool {
			if u == nil {
				return false
			}
			sum += *u
			n++
			if *u >= i.cfg.IdleBelow {
				s.active = true
				busyUnits++
			} else {
				idleUnits++
			}
			return true
		}
		for g := range s.whole {
			if !judge(util[g]) {
				unread = true
				unreadUnits++
			}
		}
		// A MIG device is judged by its utilization where NVML gives one. Where it gives none (the
		// A100 and H100 give none for MIG devices), a process of the lease on it counts as work:
		// training whose memory in use never moves cannot be told from a notebook waiting with a
		// model loaded, and a lease is not reclaimed on a guess. Its memory is the slice's.
		for _, uuid := range slices.Sorted(maps.Keys(s.slices)) {
			m := s.slices[uuid]
			used := s.sliceMem[uuid]
			if m.MemUsed != nil {
				used = *m.MemUsed
			}
			s.mem = addMem(s.mem, used)
			switch {
			case judge(m.Util):
			case m.MemUsed != nil:
				s.active = true
				busyUnits++
			default:
				unread = true
				unreadUnits++
			}
		}
		mean := 0.0
		if n > 0 {
			mean = sum / float64(n)
		}
		// A lease with a process on a GPU that gave no utilization (MIG, or a failed reading), or on
		// a node whose report lacks a GPU or lists one its topology lacks, and none busy among the GPUs read, may be working where
		// the agent cannot see: its activity is unknown, not idle. It is not recorded, so the idle path treats the lease as
		// unobserved (never reclaimed; the platform channel is told), and its GPU time is not
		// counted as observed, idle or busy.
		// So may a lease with no process on any GPU while a GPU of the node is busy with no job's
		// process.
		unknown := (unread || partial || (len(s.gpus) == 0 && unplacedBusy)) && !s.active
		switch {
		case !unknown:
			rec.Activity = append(rec.Activity, store.LeaseActivity{Lease: id, Utilization: mean, MemUsed: s.mem, Active: s.active})
		case unread:
			// Its node reports, but a GPU it works on gives no utilization: the idle path says
			// that, not that its telemetry is missing.
			rec.Activity = append(rec.Activity, store.LeaseActivity{Lease: id, Unjudged: qm.UnjudgedNoUtilization})
		case lacking:
			// Its node reports, but not every GPU of it: the lease's own where it is known to
			// hold it, else one it may work on.
			why := qm.UnjudgedNodeGPUMissing
			if slices.ContainsFunc(s.lease.GPUIndex, func(g int) bool { return !readIndex[g] }) {
				why = qm.UnjudgedGPUMissing
			}
			rec.Activity = append(rec.Activity, store.LeaseActivity{Lease: id, Unjudged: why})
		case resp.Skipped[UnknownGPU] > 0:
			// Its node reports every GPU of its topology, and one more that the topology lacks
			// (skipped): the lease may work there.
			rec.Activity = append(rec.Activity, store.LeaseActivity{Lease: id, Unjudged: qm.UnjudgedUnknownGPU})
		case len(s.gpus) == 0 && unplacedBusy:
			// Its node reports, and a GPU of it is busy with no job's process: whose work that is
			// cannot be told.
			rec.Activity = append(rec.Activity, store.LeaseActivity{Lease: id, Unjudged: qm.UnjudgedUnplacedBusy})
		}
		// A lease over several nodes is reported by each of them: each has its share of the GPUs.
		share := nodeShare(s.lease, r.Node, len(s.gpus))
		if share == 0 {
			continue
		}
		span := interval
		if st := s.lease.StartedAt; !st.IsZero() && at.Sub(st) < span {
			span = max(0, at.Sub(st)) // a lease that started within the interval ran only since then
		}
		if span <= 0 || unknown {
			// A lease that cannot be judged from the report (a GPU of it or of its node missing
			// from it, one giving no utilization, or busy work nobody's) was not observed: its time
			// is neither idle nor busy in the showback, which says its idle is not known, or a
			// lower bound, rather than count a lost GPU's lease busy for as long as it is lost.
			continue
		}
		gpuSecs := span.Seconds() * float64(share)
		// The lease's GPUs on the node with no process of it, where the report shows every GPU
		// of the node: unused, at 0 % for it; less the node's GPUs busy with no job's process,
		// which may be the lease's work.
		noProc := 0
		if !partial {
			noProc = max(0, share-busyUnits-idleUnits-unreadUnits-unplacedBusyN)
		}
		// Utilization is weighed by GPU-seconds, as the simulated cluster weighs it: each GPU
		// alike, whatever the lease's size and the agent's interval; a sample per GPU-second.
		roll := qm.UsageRollup{Lease: id, Hour: qm.HourStart(at, i.cfg.Location), GPUSeconds: gpuSecs}
		if units := n + noProc; units > 0 {
			roll.Samples = int64(math.Round(float64(units) * span.Seconds()))
			roll.UtilSum = sum / float64(units) * float64(roll.Samples)
		}
		switch {
		case s.active && n == 0:
			// Taken as busy from a slice that gives no utilization: no utilization to add up.
			roll.UtilSum, roll.Samples = 0, 0
		case !s.active:
			roll.IdleGPUSeconds = gpuSecs
		default:
			// A job that uses only some of its lease's GPUs keeps the lease from reclaim, but the
			// GPUs it leaves unused sat idle: those it runs on at under the threshold, and, where the
			// report shows every GPU of the node, its GPUs with no process of it. A GPU whose
			// utilization is unknown is not counted idle, nor one the report may lack.
			roll.IdleGPUSeconds = span.Seconds() * float64(min(idleUnits+noProc, share))
		}
		rolls = append(rolls, roll)
	}
	res, err := i.batch.do(rec)
	if err != nil {
		return resp, err
	}
	if res.Unauthorized {
		return resp, store.ErrAgentUnauthorized
	}
	if res.Replayed {
		i.count(Replayed, 1)
		return report.Response{Ignored: Replayed}, nil
	}
	if res.TooOld {
		i.count(TooOld, 1)
		return report.Response{Ignored: TooOld}, nil
	}
	if topo != nil {
		i.rememberTopology(r.Node, r.TopologyHash, topo)
	}
	i.usage.add(rolls)
	i.count(Accepted, 1)
	for k, v := range resp.Skipped {
		i.count(k, v)
	}
	if len(resp.Skipped) == 0 {
		resp.Skipped = nil
	}
	resp.TopologyWanted = resp.TopologyWanted || (topo == nil && res.TopologyHash != r.TopologyHash)
	return resp, nil
}

// nodeShare is how many of lease l's GPUs are on node, whose report shows the lease's processes
// on withProcs of its GPUs: all of them for a lease on one node. Over several nodes the
// scheduler does not say how it spread them, so they are split evenly in a way that adds up to
// the lease's GPUs, the nodes listed first taking one more where they do not divide evenly (3
// over 2 nodes: 2 and 1). A node the lease's node list lacks (its job's processes were found
// there, and the list may not say where the job runs: leaseIndex.mayRunOn) holds the GPUs it
// shows the lease's processes on.
func nodeShare(l *qm.Lease, node string, withProcs int) int {
	nodes := hostlist.Expand(l.Node)
	if len(nodes) <= 1 {
		return l.GPUs
	}
	k := slices.IndexFunc(nodes, func(n string) bool { return strings.EqualFold(n, node) })
	if k < 0 {
		return min(withProcs, l.GPUs)
	}
	share := l.GPUs / len(nodes)
	if k < l.GPUs%len(nodes) {
		share++
	}
	return share
}

// knownGPUs is the set of the node's GPU UUIDs from its topology: the report's own when it carries
// one (converted for the store), else the stored one.
func (i *Ingest) knownGPUs(ctx context.Context, r report.Report) (map[string]bool, *qm.Topology, error) {
	if r.Topology != nil {
		t := Topology(r.Node, r.At, *r.Topology)
		return uuidsOf(t), &t, nil
	}
	i.topoMu.Lock()
	k, ok := i.topos[r.Node]
	i.topoMu.Unlock()
	if ok && k.hash == r.TopologyHash {
		return k.uuids, nil, nil
	}
	t, hash, found, err := i.cfg.Store.NodeTopologyOf(ctx, r.Node)
	if err != nil {
		return nil, nil, err
	}
	if !found {
		return map[string]bool{}, nil, nil
	}
	u := uuidsOf(t)
	i.topoMu.Lock()
	i.topos[r.Node] = knownGPUs{hash: hash, uuids: u, count: len(t.GPUs)}
	i.topoMu.Unlock()
	return u, nil, nil
}

func (i *Ingest) rememberTopology(node, hash string, t *qm.Topology) {
	i.topoMu.Lock()
	i.topos[node] = knownGPUs{hash: hash, uuids: uuidsOf(*t), count: len(t.GPUs)}
	i.topoMu.Unlock()
}

func uuidsOf(t qm.Topology) map[string]bool {
	u := make(map[string]bool, len(t.GPUs))
	for _, g := range t.GPUs {
		u[g.UUID] = true
	}
	return u
}

// Topology converts a reported topology to the domain's, with its NVLink islands.
func Topology(node string, at time.Time, rt report.Topology) qm.Topology {
	t := qm.Topology{Node: node, At: at.UTC(), GPUs: make([]qm.TopologyGPU, len(rt.GPUs))}
	for i, g := range rt.GPUs {
		numa := -1
		if g.NUMA != nil {
			numa = *g.NUMA
		}
		pcie := make([]qm.PCIeLevel, len(g.PCIe))
		for j, p := range g.PCIe {
			pcie[j] = qm.PCIeLevel(p)
		}
		t.GPUs[i] = qm.TopologyGPU{Index: g.Index, UUID: g.UUID, NUMA: numa, CPUs: g.CPUs,
			NVLinks: append([]int(nil), g.NVLinks...), PCIe: pcie}
	}
	t.SetIslands()
	return t
}

// Flush adds the usage rollups gathered so far to the store.
func (i *Ingest) Flush(ctx context.Context) error {
	rs := i.usage.take()
	if len(rs) == 0 {
		return nil
	}
	if err := i.cfg.Store.AddUsage(ctx, rs); err != nil {
		i.usage.add(rs) // try again at the next flush
		return fmt.Errorf("ingest: add usage: %w", err)
	}
	return nil
}

// Prune forgets raw samples older than the retention, and the activity of long-gone leases.
func (i *Ingest) Prune(ctx context.Context) (int64, error) {
	now := i.cfg.Clock.Now()
	return i.cfg.Store.PruneAgentData(ctx, now.Add(-i.cfg.RawRetention), now.Add(-i.cfg.ActivityRetention))
}

// Run flushes the usage rollups and prunes old samples until ctx ends, then flushes once more.
func (i *Ingest) Run(ctx context.Context) {
	flush := time.NewTicker(i.cfg.FlushEvery)
	prune := time.NewTicker(i.cfg.PruneEvery)
	defer flush.Stop()
	defer prune.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := i.Flush(fctx); err != nil {
				i.log.Error("usage rollups lost at shutdown", "err", err)
			}
			cancel()
			return
		case <-flush.C:
			if err := i.Flush(ctx); err != nil && ctx.Err() == nil {
				i.log.Warn("adding usage rollups failed; will retry", "err", err)
			}
		case <-prune.C:
			if n, err := i.Prune(ctx); err != nil && ctx.Err() == nil {
				i.log.Warn("forgetting old agent samples failed", "err", err)
			} else if n > 0 {
				i.log.Info("forgot old agent samples", "rows", n)
			}
		}
	}
}

// rollups gathers hourly usage per lease between flushes, summing what falls in the same hour.
type rollups struct {
	mu sync.Mutex
	m  map[rollKey]qm.UsageRollup
}

type rollKey struct {
	lease qm.LeaseID
	hour  int64
}

func newRollups() *rollups { return &rollups{m: map[rollKey]qm.UsageRollup{}} }

func (r *rollups) add(rs []qm.UsageRollup) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, u := range rs {
		k := rollKey{u.Lease, u.Hour.Unix()}
		c := r.m[k]
		c.Lease, c.Hour = u.Lease, u.Hour
		c.GPUSeconds += u.GPUSeconds
		c.IdleGPUSeconds += u.IdleGPUSeconds
		c.UtilSum += u.UtilSum
		c.Samples += u.Samples
		r.m[k] = c
	}
}

func (r *rollups) take() []qm.UsageRollup {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]qm.UsageRollup, 0, len(r.m))
	for _, u := range r.m {
		out = append(out, u)
	}
	clear(r.m)
	sort.Slice(out, func(a, b int) bool {
		if out[a].Lease != out[b].Lease {
			return out[a].Lease < out[b].Lease
		}
		return out[a].Hour.Before(out[b].Hour)
	})
	return out
}
