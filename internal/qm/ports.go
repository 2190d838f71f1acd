package qm

import (
	"context"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/policy"
)

// Clock tells the time; the domain never calls time.Now itself.
type Clock interface {
	Now() time.Time
}

// LeaseFilter selects leases; empty fields match everything, except Kind: the zero Kind selects
// workspace leases only, AnyKind selects all.
type LeaseFilter struct {
	Kind   Kind
	User   string
	Team   string
	Class  string
	States []State
	Parent LeaseID
	// EndedAfter keeps only leases that were open at or after this instant.
	EndedAfter time.Time
	Limit      int
	// Slim reads only ID, Kind, User, Team, Class, GPUs, Duration, State, Node, GPUIndex, the
	// created, started, expires and ended times and the pauses (the week's GPU-hours leave out
	// a requeued job's wait): what admission and placement need, cheaply.
	Slim bool
}

// AnyKind in a LeaseFilter selects leases of every kind.
const AnyKind Kind = "*"

// Tx is what the domain may do inside one transaction.
type Tx interface {
	// CreateLease inserts a lease and sets its ID. A RequestKey seen before gives ECONFLICT.
	CreateLease(ctx context.Context, l *Lease) error
	// CreateLeaseWithEvents is CreateLease followed by AddEvents for the lease's first events,
	// whose Lease it sets to the new ID: one statement where the database allows.
	CreateLeaseWithEvents(ctx context.Context, l *Lease, es []*Event) error
	// GetLease returns ErrNotFound when there is no such lease.
	GetLease(ctx context.Context, id LeaseID) (*Lease, error)
	// LeaseByRequestKey finds the lease a request key made, or ErrNotFound.
	LeaseByRequestKey(ctx context.Context, key string) (*Lease, error)
	// UpdateLease writes l if the stored lease is still in state from; otherwise ErrStale.
	UpdateLease(ctx context.Context, l *Lease, from State) error
	// UpdateLeaseWithEvent is UpdateLease followed by AddEvent for e (about l): one statement
	// where the database allows. Nothing is written when UpdateLease would fail.
	UpdateLeaseWithEvent(ctx context.Context, l *Lease, from State, e *Event) error
	// ListLeases returns matching leases ordered by ID.
	ListLeases(ctx context.Context, f LeaseFilter) ([]*Lease, error)
	// AddEvent appends to the audit trail.
	AddEvent(ctx context.Context, e *Event) error
	// AddEvents appends several events in order, in one statement.
	AddEvents(ctx context.Context, es []*Event) error
	// Events lists a lease's audit trail in order.
	Events(ctx context.Context, id LeaseID) ([]*Event, error)
	// AddNotices writes notices (one recipient each) into the outbox, made at at, and returns
	// their ids.
	AddNotices(ctx context.Context, ns []Notice, at time.Time) ([]int64, error)
	// CommandKey returns the lease the command with this delivery key acted on, if one did.
	CommandKey(ctx context.Context, key string) (LeaseID, bool, error)
	// AddCommandKey records the delivery key of a command with the lease it acted on; a key seen
	// before gives ECONFLICT.
	AddCommandKey(ctx context.Context, key string, id LeaseID, at time.Time) error
	// Held lists what the running workspace leases (provisioning, active, idle_warned) of the
	// given classes hold: placement reads only this.
	Held(ctx context.Context, classes []string) ([]Holding, error)
	// HeldGPUs sums the GPUs that the running workspace leases of each of the classes hold (as
	// Held, added up by class; a class with none may be missing).
	HeldGPUs(ctx context.Context, classes []string) (map[string]int, error)
	// TeamLeasesAndHeld is what an admission reads, in one statement where the database allows:
	// the team's leases of every kind open at or after since (as ListLeases with Team, EndedAfter
	// and Slim) and what the running workspace leases of the classes hold (as Held).
	TeamLeasesAndHeld(ctx context.Context, team string, since time.Time, classes []string) ([]*Lease, []Holding, error)
}

// Holding is the GPUs one running lease holds.
type Holding struct {
	Class    string
	Team     string
	GPUs     int
	Node     string // one node, or several joined by commas for whole-node leases
	GPUIndex []int
	Reserved bool // a reservation: its nodes are whole its own
}

// Store persists the domain. Update runs fn in one transaction that holds the named locks (taken in
// sorted order, released at commit), so checks and writes inside it are atomic across replicas.
type Store interface {
	Update(ctx context.Context, locks []string, fn func(Tx) error) error
	View(ctx context.Context, fn func(Tx) error) error
	Close() error
}

// Node is a GPU node of a class, as the backend's inventory knows it.
type Node struct {
	Name  string
	Class string
	GPUs  int
	// Used is how many of its GPUs the scheduler reported held, at the last refresh, by jobs
	// that are not this service's (its own leases the service counts itself); 0 on the sim.
	Used int
	// Island gives each GPU's NVLink island; GPUs in one island are well connected. Nil when
	// unknown.
	Island []int
	// NUMA gives each GPU's NUMA node; nil when unknown.
	NUMA []int
	// GRES is the resource the class counts on the node, as the scheduler names it: Slurm's
	// generic resource ("gpu:h100"; "gpu" for GPUs of every type), Kubernetes' extended resource
	// ("nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "amd.com/gpu"). Both leave the service's own
	// jobs out of Used in every class that counts those GPUs: a lease of another class on the
	// node whose GRES counts alike (CountsAlike) then holds GPUs of this class too, which the
	// service counts itself. Empty where the backend does not say (the simulated cluster); such
	// an entry counts alike with none.
	GRES string
}

// CountsAlike says whether two classes' entries of one node, by their GRES, count some of the
// same GPUs: GRES of one name ("gpu", "nvidia.com/gpu") and one type, or either of any type ("gpu"
// and "gpu:h100"). Kubernetes' resource names have no type: two count alike when they are the
// same resource. False where either is not known.
func CountsAlike(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	an, at, _ := strings.Cut(a, ":")
	bn, bt, _ := strings.Cut(b, ":")
	at, _, _ = strings.Cut(at, ":")
	bt, _, _ = strings.Cut(bt, ":")
	return an == bn && (at == "" || bt == "" || at == bt)
}

// Started is what a backend reports after starting a lease's workspace.
type Started struct {
	State   State // Active, or Queued/Provisioning while the scheduler has not started it
	Node    string
	Connect string
	Ref     string
	// Reason says why a Queued lease waits, in the scheduler's words.
	Reason string
	// PicksGPUs: the scheduler picks the GPUs of the workspace's node itself (Slurm), so the
	// GPUs the service chose (Lease.GPUIndex) are a guess. The lease records GPUIndex, the GPUs
	// the scheduler said at start that the workspace holds, in their place; where it said none
	// (the job does not run yet) the lease records none until the reconcile pass reads them.
	PicksGPUs bool
	GPUIndex  []int
}

// Backend runs workspaces on a scheduler.
type Backend interface {
	// Inventory lists the GPU nodes of every class: the service caps, counts free GPUs and places
	// leases with it. Nil when the backend does not know them (yet): the scheduler then places.
	Inventory() []Node
	// Start provisions the lease's workspace. A lease the service placed carries its choice:
	// Node (one node, or several joined by commas for whole-node leases) and GPUIndex; the
	// backend pins the workspace there (Slurm: --nodelist; Kubernetes: node affinity). A lease of
	// an exclusive class runs only on nodes without another team's leases of that class, and
	// Exclusive (a reservation) holds whole nodes for the one lease.
	Start(ctx context.Context, l *Lease) (Started, error)
	// Stop ends the lease's workspace; stopping one that is gone is not an error.
	Stop(ctx context.Context, l *Lease) error
}

// BackendWrapper is a backend that stands in front of another, the one it wraps (Unwrap), and
// passes every call on to it: one that counts and times the calls. The service never asks a
// wrapper itself for an optional port (a Watcher, a Retimer, a NodesAwayTeller...): BackendAs
// looks each up on the backend the wrapper wraps, so a wrapper can hide none, and Port then lets
// the wrapper stand in front of the port found too.
type BackendWrapper interface {
	Backend
	Unwrap() Backend
	// Port is given a pointer to an optional port of the wrapped backend (a *Watcher holding
	// it); it may replace it with one of the same port that passes each call on to it. It
	// leaves a port it does not know as it is.
	Port(p any)
}

// BackendAs is b's optional port T, and whether b has it: b's own where b wraps no other
// backend; else the port of the backend b wraps, as b's Port stands in front of it. Every
// optional port of a backend is asked for this way, never by a type assertion on the backend.
func BackendAs[T any](b Backend) (T, bool) {
	if w, ok := b.(BackendWrapper); ok {
		t, ok := BackendAs[T](w.Unwrap())
		if ok {
			w.Port(&t)
		}
		return t, ok
	}
	t, ok := b.(T)
	return t, ok
}

// InventoryRefresher is a backend whose inventory comes from the scheduler itself (Slurm's nodes,
// partitions and GRES; Kubernetes nodes' allocatable GPUs). The reconcile loop refreshes it; until
// the first refresh succeeds Inventory is nil.
type InventoryRefresher interface {
	RefreshInventory(ctx context.Context) error
}

// NodesAwayTeller is an InventoryRefresher whose inventory leaves out nodes that take no new work
// now (cordoned, not ready). NodesAway says why every node of a class is out, in a phrase
// ("every node of class train is cordoned or not ready (gpu-b cordoned, gpu-c not ready)"), where
// the class has nodes and none takes work; "" otherwise. A request of such a class waits in the
// service's queue, saying so, instead of being handed to a scheduler no node of which can take it.
type NodesAwayTeller interface {
	NodesAway(class string) string
}

// GPUIndexKnower is a backend that says whether the GPU indexes a lease of a class records
// (Lease.GPUIndex) name the devices its workload holds. On Kubernetes the device plugin picks them
// (a MIG slice, a GPU of the node) and never says which: the indexes are the service's own count
// of a node's GPUs, and no reply may show them as the lease's. A backend that does not implement
// it is taken to know them (the simulated cluster starts a lease on the GPUs the service chose;
// Slurm says which GPUs a running job holds, and the reconcile pass records them).
type GPUIndexKnower interface {
	KnowsGPUIndexes(class string) bool
}

// GPUIndexesKnown reports whether l's GPU indexes name the devices its workload holds, so that a
// reply may show them ("gpu01 GPU 0,1"); where they do not, a reply names its node and count only.
func (s *Service) GPUIndexesKnown(l *Lease) bool {
	if k, ok := BackendAs[GPUIndexKnower](s.Backend); ok {
		return k.KnowsGPUIndexes(l.Class)
	}
	return true
}

// InstantBackend is a backend whose Start is immediate, local and cannot be half-done (the
// simulated cluster), and needs no lease id: the service starts such workspaces inside the
// admission transaction, before writing the lease, so a grant is one insert.
type InstantBackend interface {
	Backend
	StartsInstantly() bool
}

// WaitRequest is what a wait prediction is for.
type WaitRequest struct {
	Lease    LeaseID // 0 for a quote
	Class    string
	User     string
	Team     string
	GPUs     int
	Duration time.Duration
	// Bounded says the request is placed by the service and starts within AtMost at the latest:
	// when the running leases have reached their expiries and the queue ahead has been placed
	// (placementWait). A prediction is never longer.
	Bounded bool
	AtMost  time.Duration
	// Unshown says the answer is not what the requester is told (the service answers from the
	// running leases' expiries): the predictor is asked only to keep its estimate with the lease
	// and learn from what the lease then waits.
	Unshown bool
}

// WaitPredictor predicts queue waits from the live pool and what it learned; the service tells it
// what becomes of leases. Implementations keep their state in memory and must be safe for
// concurrent use.
type WaitPredictor interface {
	// Predict estimates the wait of a request given the leases queued ahead of it, in order, and
	// the class's GPUs (0 when the scheduler does not say).
	Predict(now time.Time, req WaitRequest, ahead []*Lease, capacity int) WaitEstimate
	// Started: a lease began running after waiting since queuedAt. A zero queuedAt says only
	// that it runs, as it now is (after a restart, or when an extension made it longer).
	Started(l *Lease, queuedAt time.Time)
	// Ended: a running lease stopped.
	Ended(l *Lease)
	// Left: a queued lease left the queue without starting.
	Left(l *Lease, queuedAt time.Time)
}

// Activity is what telemetry knows of a lease's GPUs.
type Activity struct {
	// LastActive is the last time the GPUs showed activity.
	LastActive time.Time
	// Seen is when telemetry last reported; zero when it never has.
	Seen time.Time
	// Utilization is the last reported mean GPU utilization, percent.
	Utilization float64
	// Interval is how often the telemetry reports (a node agent's --interval); zero when unknown.
	Interval time.Duration
	// ObservedSince is when the unbroken run of reports up to Seen began: reports that stopped for
	// longer than TelemetryStaleAfter and came back start a new run, and the idle period starts
	// again with it (the time nobody saw is not idle). Zero when unknown or always observed.
	ObservedSince time.Time
	// Unjudged, when set, says why the newest report that covered the lease, at UnjudgedAt (after
	// Seen), could not judge it although its node reports: UnjudgedNoUtilization, or another
	// Unjudged below. Empty when the
	// newest report judged it, or none covered it.
	Unjudged   string
	UnjudgedAt time.Time
}

// UnjudgedNoUtilization is an Activity.Unjudged: a GPU the lease works on reports no utilization
// (NVML does not support it there, or its reading failed), so its idleness cannot be judged.
const UnjudgedNoUtilization = "no_utilization"

// The other Activity.Unjudged, each of a lease whose node reports: UnjudgedGPUMissing, a GPU the
// lease holds is missing from the report (lost, or unreadable); UnjudgedNodeGPUMissing, a GPU of
// its node is, on which the lease may work (it is not known to hold one the report gives);
// UnjudgedUnplacedBusy, the lease has no process on any GPU while a GPU of its node is busy with
// no job's process, so whose work that is cannot be told; UnjudgedUnknownGPU, its node's report
// lists a GPU the node's topology lacks (one swapped in since the topology was taken), on which
// the lease may work.
const (
	UnjudgedGPUMissing     = "gpu_missing"
	UnjudgedNodeGPUMissing = "node_gpu_missing"
	UnjudgedUnplacedBusy   = "unplaced_busy"
	UnjudgedUnknownGPU     = "unknown_gpu"
)

// Telemetry reports GPU activity per lease.
type Telemetry interface {
	Activity(ctx context.Context, l *Lease) (Activity, bool)
}

// Directory maps a chat user to an identity and its groups.
type Directory interface {
	Groups(ctx context.Context, user string) ([]string, bool)
}

// UnknownExplainer is a Directory that can say, in a sentence, why it does not know someone
// where that is more than their missing from it: with single sign-on, that they never signed in,
// or that their groups are no longer confirmed and /gpu login signs them in again. Unknown
// returns nil where it has nothing more to say.
type UnknownExplainer interface {
	Unknown(ctx context.Context, user string) error
}

// GroupsAsOf is a Directory whose groups were read from an identity provider at a time the
// person should know of: with single sign-on, their sign-in or the last re-check. A change made
// at the provider since then (added to a team's group) holds once the groups are read again,
// which /gpu login does at once, so a refusal for want of a team says when they were read.
type GroupsAsOf interface {
	GroupsAsOf(ctx context.Context, user string) (groups []string, readAt time.Time, ok bool)
}

// MemberLister is a Directory that can say who is in a group, so that approvers named by group
// hear of the exceptions they may decide. It must answer from memory: the service asks inside
// transactions.
type MemberLister interface {
	Members(group string) []string
}

// NoticeKind says what a notice is about.
type NoticeKind string

// Notices the domain sends on its own.
const (
	NoticeGranted          NoticeKind = "granted"           // a lease became active
	NoticeQueued           NoticeKind = "queued"            // a lease waits for capacity
	NoticeRequeued         NoticeKind = "requeued"          // a running lease's job is back in the scheduler's queue
	NoticeSuspended        NoticeKind = "suspended"         // a running lease's job is suspended, holding its GPUs
	NoticeRestarted        NoticeKind = "restarted"         // a running lease's workload was lost and runs again, restarted
	NoticeApprovalRequest  NoticeKind = "approval_request"  // to approvers
	NoticeApproved         NoticeKind = "approved"          // to the requester
	NoticeDenied           NoticeKind = "denied"            // to the requester
	NoticeDecided          NoticeKind = "decided"           // to approvers: someone decided
	NoticeWithdrawn        NoticeKind = "withdrawn"         // to the requester: an extension waiting for approval lost its lease
	NoticeExpired          NoticeKind = "expired"           // lease ran out
	NoticeExpiringSoon     NoticeKind = "expiring_soon"     // lease ends soon
	NoticeIdleWarning      NoticeKind = "idle_warning"      // keep or release?
	NoticeBusyAgain        NoticeKind = "busy_again"        // a warned lease's GPUs are busy again: no reclaim
	NoticeReclaimMoved     NoticeKind = "reclaim_moved"     // a warned lease's telemetry went missing: it is reclaimed later than the warning said
	NoticeReclaimed        NoticeKind = "reclaimed"         // idle reclaim happened
	NoticeFailed           NoticeKind = "failed"            // backend failed
	NoticeTelemetryMissing NoticeKind = "telemetry_missing" // to the platform channel
	// NoticeExtensionChanged tells a lease's owner that an extension of it began or stopped
	// waiting for a budget owner (asked; approved, denied, withdrawn or expired undecided): the
	// lease's earlier messages change what they offer (Extend, or who decides the one that
	// waits). It is an edit of those messages, never a message of its own.
	NoticeExtensionChanged NoticeKind = "extension_changed"
	// NoticeMessage is a message the chat layer made itself (Message, in its own encoding), to
	// go out through the outbox as it was made: what a change of someone's groups at the
	// identity provider means, for instance. It need not concern one lease (Lease may be nil).
	NoticeMessage NoticeKind = "message"
)

// Notice is something the domain tells people.
type Notice struct {
	Kind      NoticeKind
	To        []string
	Lease     *Lease
	Actor     string
	Reason    string
	Matches   []policy.Match
	Approvers []string
	// Detail is more for the owner to read, such as the last lines of a failed job's output.
	Detail string
	// Held, on an approval request that would take its team past its quota of the class, says
	// what the team held of it when it was asked (QuotaHeld.Text).
	Held string
	// Message is the message a NoticeMessage carries, as the chat layer encoded it.
	Message []byte
}

// LeaseID is the id of the lease the notice concerns; 0 for a message that concerns none.
func (n Notice) LeaseID() LeaseID {
	if n.Lease == nil {
		return 0
	}
	return n.Lease.ID
}

// Notifier delivers notices (rendered by the chat layer).
type Notifier interface {
	Notify(ctx context.Context, n Notice)
}

// CheckedNotifier is a Notifier that says whether a notice was delivered, so the outbox can try
// again one that was not.
type CheckedNotifier interface {
	NotifyChecked(ctx context.Context, n Notice) error
}

// NotifierFunc adapts a function to Notifier.
type NotifierFunc func(ctx context.Context, n Notice)

// Notify calls f.
func (f NotifierFunc) Notify(ctx context.Context, n Notice) { f(ctx, n) }
