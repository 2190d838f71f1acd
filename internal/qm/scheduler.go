package qm

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Backends whose scheduler places leases itself (Slurm, Kubernetes) report what became of each
// lease's job; the service polls them and reconciles. This file holds that side of the domain:
// the job model, the Watcher port, the transitions it drives and the reconcile pass.

// JobState is what a scheduler says of a lease's job, in the domain's words.
type JobState string

// Job states. Starting and Ending are on their way in or out: no transition until they settle.
const (
	JobPending   JobState = "pending"   // waiting in the scheduler's queue
	JobStarting  JobState = "starting"  // placed, not running yet (an image pull)
	JobRunning   JobState = "running"   // holds its GPUs
	JobEnding    JobState = "ending"    // finishing; its end state is not known yet
	JobCompleted JobState = "completed" // the workload ended by itself, successfully
	JobTimeout   JobState = "timeout"   // the scheduler ended it at its time limit
	JobCancelled JobState = "cancelled" // someone cancelled it in the scheduler
	JobFailed    JobState = "failed"    // the workload, its node or its start failed
)

// Ended reports whether the job is over.
func (s JobState) Ended() bool {
	return s == JobCompleted || s == JobTimeout || s == JobCancelled || s == JobFailed
}

// Job is one scheduler job that carries a lease id.
type Job struct {
	Lease  LeaseID
	Ref    string // the scheduler's id: a Slurm job id, a pod or Job name
	State  JobState
	Node   string // where it runs, once it runs
	Reason string // the scheduler's words: why it waits, how it ended
	// TimeLimit is the scheduler's limit on the job's run time; zero when it has none or does not say.
	TimeLimit time.Duration
	// StartedAt and EndedAt are when the scheduler says the job started and ended; zero when it
	// does not say. A job that ended while the service was down is dated by EndedAt.
	StartedAt time.Time
	EndedAt   time.Time
	// ExitCode is the workload's exit status in words ("127", "signal 9"); empty when unknown.
	ExitCode string
	// Output is the last lines of the job's output when the backend can read them, for a failed
	// workspace's owner; empty otherwise.
	Output string
	// Suspended reports a running job whose processes the scheduler stopped (Slurm's SUSPENDED,
	// STOPPED): it keeps its GPUs, and its workspace does not run until it is resumed.
	Suspended bool
	// SuspendedFree reports a waiting job (JobPending) that someone suspended and that gave its
	// GPUs back meanwhile (a suspended Kubernetes Job, whose pods Kubernetes deletes): it waits to
	// be resumed, not in the scheduler's queue. A running lease's time meanwhile is not billed, as
	// a requeued job's is not.
	SuspendedFree bool
	// HaltedAt is when the scheduler says a running job stopped running (a Kubernetes Job's
	// Suspended condition); zero when it does not say. A pause the service sees late (it was
	// down) begins then, not when it saw it.
	HaltedAt time.Time
	// GPUIndex is the GPUs a running job holds on its one node, by index, when the scheduler says
	// (Slurm does: it, not the service, picks a job's GPUs on the node); the lease adopts them.
	GPUIndex []int
	// Unplaced says why a waiting job can never run where the service placed it, where the
	// scheduler tells (a Kubernetes Job pinned to a node that was cordoned, or left the cluster,
	// before its pod was placed there: "its node gpu-b was cordoned before its pod was placed
	// there"); empty otherwise. The service deletes such a job of a lease that never ran and places
	// the lease again.
	Unplaced string
	// Refused reports a failed job that the scheduler (or the cluster's API) would not take, as a
	// start it refuses (Refused): a Kubernetes Job whose pod the API server refused. Its Reason is
	// their words on why; its lease's reason and its owner's notice read as a refused start's.
	Refused bool
	// Held reports a failed job whose workload the scheduler still holds, with its resources (a
	// Kubernetes pod that cannot pull its image waits on its node until its deadline): the service
	// cancels it once it has ended its lease, and cancels it as an orphan after a crash.
	Held bool
	// Kept reports a scheduler that keeps an ended job's objects until they are deleted (a
	// Kubernetes Job, its pods and their logs): the service deletes them KeepEnded after the job
	// ended, so that they do not pile up, while its owner has a day to read them.
	Kept bool
	// LimitEnd is when the scheduler's time limit ends a running job, where it says and counts
	// the limit from this run's start (Slurm's end_time: a requeued job's limit starts again when
	// it runs again, and suspended time does not count); zero elsewhere.
	LimitEnd time.Time
	// DeadlineFrom is when the scheduler counts a waiting job's time limit from, where that is
	// before it runs (a Kubernetes Job's activeDeadlineSeconds counts from the Job's start, its
	// wait included); zero where the limit counts from when the job runs (Slurm).
	DeadlineFrom time.Time
	// Restarted is when the scheduler started a running job's workload again after losing it (a
	// Kubernetes Job's replacement pod, its pod evicted, deleted or lost with its node); zero for
	// a job that runs as it was first started. A running lease whose job restarted after the
	// lease last saw it start is told so once.
	Restarted time.Time
}

// KeepEnded is how long an ended job the scheduler keeps (Job.Kept) is left before the service
// deletes it.
const KeepEnded = 24 * time.Hour

// Watcher is a Backend whose scheduler places and runs leases on its own (Inventory is nil). The
// service polls it to learn what became of each lease's job and to make the scheduler and the
// database agree after a crash.
type Watcher interface {
	Backend
	// Jobs lists every job of this service the scheduler knows, running, waiting or recently ended.
	Jobs(ctx context.Context) ([]Job, error)
	// Cancel ends a job that no live lease owns. Cancelling a job that is gone is not an error.
	Cancel(ctx context.Context, j Job) error
}

// GoneNamer is a Watcher that says in its scheduler's words which job of a live lease is gone
// ("its Job qm-l-7-jupyterlab in namespace qm-vision is gone from the cluster"), for its owner,
// where its Ref is the service's own reference and not a name they know.
type GoneNamer interface {
	GoneWords(ref string) string
}

// Sweeper is a Watcher whose jobs come with objects of their own that outlive them (a Kubernetes
// Job's Service, and its pods where the Job was deleted without its dependents): Sweep deletes
// what is left of a lease whose job is gone, so that nothing of it stays behind or holds GPUs.
type Sweeper interface {
	Sweep(ctx context.Context, l *Lease) error
}

// LeftoverFinder is a Sweeper that finds, in the scheduler, objects of leases that have no job
// there (a Kubernetes lease's Service, its pods whose Job was deleted without them): what a sweep
// missed when the service stopped between failing a lease and sweeping it. Leftovers lists those
// leases as the last call of Jobs found them, in a stable order; the reconcile pass sweeps those
// that have ended (or that the database does not know), a bounded number per pass.
type LeftoverFinder interface {
	Sweeper
	Leftovers() []LeaseID
}

// maxSweepsPerPass bounds how many leases' leftovers one reconcile pass deletes; the next pass
// goes on with the rest.
const maxSweepsPerPass = 10

// Retimer is a Watcher that can change a job's time limit, so an extended lease's job runs on.
type Retimer interface {
	SetTimeLimit(ctx context.Context, j Job, d time.Duration) error
}

// NoticeFinished tells a user that their job ended by itself.
const NoticeFinished NoticeKind = "finished"

// NodePlaceholder stands for the node in a Started.Connect given before the scheduler chose one;
// the service fills it in when the job runs.
const NodePlaceholder = "{node}"

// DefaultSubmitGrace is how long a lease may sit in provisioning without a job before the
// reconcile pass takes it that the service stopped before submitting it (Service.SubmitGrace).
const DefaultSubmitGrace = 2 * time.Minute

// SubmitGrace is DefaultSubmitGrace, as earlier callers name it.
const SubmitGrace = DefaultSubmitGrace

// reasonSubmitAgain is the audit reason of a job submitted again after the service stopped
// between writing a lease and submitting its job.
const reasonSubmitAgain = "submitting its job again: the service stopped before the job reached the scheduler"

func (s *Service) submitGrace() time.Duration {
	if s.SubmitGrace > 0 {
		return s.SubmitGrace
	}
	return DefaultSubmitGrace
}

// markQueued records that the scheduler holds a provisioning lease in its queue.
func (s *Service) markQueued(ctx context.Context, l *Lease, reason string) error {
	if l.State != Provisioning {
		return nil
	}
	if reason == "" {
		reason = "waiting in the scheduler's queue"
	}
	_, err := s.updateIf(ctx, l, func(tx Tx, c *Lease) ([]Notice, error) {
		if err := s.transition(ctx, tx, c, Queued, SystemActor, reason); err != nil {
			return nil, err
		}
		return []Notice{{Kind: NoticeQueued, To: []string{c.User}, Lease: c, Reason: reason}}, nil
	})
	return err
}

// rewordQueued keeps the reason of a lease whose job waits in the scheduler's queue, which its
// owner reads in /gpu status, to the scheduler's current word on its job (Slurm's pending reason
// moving from Priority to Resources, a multi-node lease's count of running pods; a requeued job
// held, released, then waiting for a drained node), without an event or a message: the lease's
// state has not changed. That is a queued lease, and a running one whose job is back in the queue
// (Requeued). A job that says nothing leaves the reason as it is.
func (s *Service) rewordQueued(ctx context.Context, l *Lease, j Job) error {
	if j.Reason == "" {
		return nil
	}
	waits := func(c *Lease) (string, bool) {
		switch {
		case c.State == Queued:
			return "waiting in the scheduler's queue: " + j.Reason, true
		case Requeued(c):
			return requeuedReason(j), true
		}
		return "", false
	}
	reason, ok := waits(l)
	if !ok || l.Reason == reason {
		return nil
	}
	_, err := s.updateIf(ctx, l, func(tx Tx, c *Lease) ([]Notice, error) {
		if now, ok := waits(c); !ok || now != reason || c.Reason == reason {
			return nil, errSkip
		}
		c.Reason = reason
		return nil, tx.UpdateLease(ctx, c, c.State)
	})
	return err
}

// reasonRequeued begins the reason of a running lease whose job the scheduler put back in its
// queue (an administrator's requeue or hold, a preemption, a node failure with requeue).
const reasonRequeued = "its job is back in the scheduler's queue"

// Requeued reports whether l is a running lease whose job the scheduler put back in its queue:
// its workspace does not run until the job runs again, it is not judged idle meanwhile, and the
// wait is not billed.
func Requeued(l *Lease) bool { return paused(l) == PauseRequeued }

// runningWith reports whether l is running with a reason that begins with mark.
func runningWith(l *Lease, mark string) bool {
	return (l.State == Active || l.State == IdleWarned) && strings.HasPrefix(l.Reason, mark)
}

// Halted reports whether l is a running lease whose workspace does not run for now: its job is
// back in the scheduler's queue (Requeued) or suspended (Suspended).
func Halted(l *Lease) bool { return Requeued(l) || Suspended(l) }

// markRequeued records that a running lease's job is back in the scheduler's queue and tells its
// owner once: the workspace is gone until the job runs again, when markRunning says where. The
// lease keeps its end; an idle warning it had is withdrawn, since nothing runs to be idle.
func (s *Service) markRequeued(ctx context.Context, l *Lease, j Job) error {
	return s.markHalted(ctx, l, requeuedReason(j), PauseRequeued, NoticeRequeued, j.HaltedAt)
}

// requeuedReason is the reason of a running lease whose job j is back in the scheduler's queue,
// with the scheduler's word on it.
func requeuedReason(j Job) string {
	if j.SuspendedFree {
		// Not in any queue: it waits for whoever suspended it to resume it.
		reason := reasonSuspendedFree
		if j.Reason != "" {
			reason += " (" + j.Reason + ")"
		}
		return reason
	}
	reason := reasonRequeued
	if j.Reason != "" {
		reason += ": " + j.Reason
	}
	return reason
}

// markHalted records that a running lease's workspace does not run for now (its job is back in
// the queue, or suspended: pause tells which, reason says it) and tells its owner once per pause,
// with a notice of kind: the pause is recorded on the lease, so that what else changes the lease
// meanwhile (an extension, a keep, a restart of the service) does not make it news again. An idle
// warning the lease had is withdrawn, since nothing runs to be idle.
func (s *Service) markHalted(ctx context.Context, l *Lease, reason string, pause PauseKind, kind NoticeKind, at time.Time) error {
	_, err := s.updateIf(ctx, l, func(tx Tx, c *Lease) ([]Notice, error) {
		if c.State != Active && c.State != IdleWarned {
			return nil, errSkip
		}
		if p := openPause(c); p != nil && p.Kind == pause {
			return nil, errSkip
		}
		// A lease paused before pauses were recorded was told already: it gets its record only.
		told := openPause(c) == nil && legacyPause(c) == pause
		beginPause(c, pause, haltedFrom(c, at, s.Clock.Now()))
		c.WarnedAt = time.Time{}
		if err := s.transition(ctx, tx, c, Active, SystemActor, reason); err != nil {
			return nil, err
		}
		if told {
			return nil, nil
		}
		return []Notice{{Kind: kind, To: []string{c.User}, Lease: c, Reason: reason}}, nil
	})
	return err
}

// haltedFrom is when l's pause begins: when the scheduler says its job stopped (at), where that
// is after the lease started and after its last pause ended; else now, when the service saw it.
func haltedFrom(l *Lease, at, now time.Time) time.Time {
	if at.IsZero() || !at.Before(now) || !at.After(l.StartedAt) {
		return now
	}
	if n := len(l.Pauses); n > 0 && (l.Pauses[n-1].To.IsZero() || !at.After(l.Pauses[n-1].To)) {
		return now
	}
	return at
}

// reasonSuspendedFree is the reason of a running lease whose job someone suspended where that
// gives its GPUs back (a Kubernetes Job suspended: its pods are deleted). Like a requeued job it
// holds no GPU until it runs again, and that time is not billed.
const reasonSuspendedFree = "its job was suspended outside Quartermaster and gave its GPUs back until it is resumed"

// reasonSuspended begins the reason of a running lease whose job the scheduler suspended (an
// administrator's scontrol suspend, gang scheduling or preemption by suspension, a SIGSTOP).
const reasonSuspended = "its job is suspended in the scheduler"

// Suspended reports whether l is a running lease whose job the scheduler suspended: the job keeps
// its GPUs, so the lease goes on and is billed to its end as before, but its workspace does not
// run until the job is resumed, and it is not judged idle meanwhile.
func Suspended(l *Lease) bool { return paused(l) == PauseSuspended }

// markSuspended records that a running lease's job is suspended and tells its owner once. The
// lease keeps its end and its bill (the job holds its GPUs); an idle warning it had is withdrawn,
// since nothing runs to be idle. markRunning says when the job runs again.
func (s *Service) markSuspended(ctx context.Context, l *Lease, j Job) error {
	reason := reasonSuspended
	if j.Reason != "" {
		reason += " (" + j.Reason + ")"
	}
	return s.markHalted(ctx, l, reason, PauseSuspended, NoticeSuspended, j.HaltedAt)
}

// markEnded ends a live lease whose job the scheduler ended (to is Released, Expired or Failed),
// dated when the scheduler says the job ended (at; zero: now), and tells its owner, with the last
// lines of the job's output when there are any. The job is over already, so nothing is stopped.
// A lease that moved on meanwhile is left as it is.
func (s *Service) markEnded(ctx context.Context, l *Lease, to State, reason, output string, at time.Time) error {
	if !to.Ended() {
		return fmt.Errorf("qm: markEnded to %s, which is not an end state", to)
	}
	if !l.State.Live() {
		return nil
	}
	kind := NoticeFailed
	switch to {
	case Released:
		kind = NoticeFinished
	case Expired:
		kind = NoticeExpired
	case Reclaimed:
		kind = NoticeReclaimed
	}
	_, err := s.updateIf(ctx, l, func(tx Tx, cur *Lease) ([]Notice, error) {
		if err := s.transitionAt(ctx, tx, cur, to, SystemActor, reason, at); err != nil {
			return nil, err
		}
		return []Notice{{Kind: kind, To: []string{cur.User}, Lease: cur, Reason: reason, Detail: output}}, nil
	})
	return err
}

// markRunning records that a lease's job runs: it adopts the job (Ref), fills the node into the
// connect details and makes a waiting lease active from when the scheduler started it, telling
// its owner. It reports whether the lease became active.
func (s *Service) markRunning(ctx context.Context, l *Lease, j Job) (bool, error) {
	activated := false
	cur, err := s.updateIf(ctx, l, func(tx Tx, c *Lease) ([]Notice, error) {
		activated = false
		c.Ref = j.Ref
		s.follow(c, j)
		if Halted(c) {
			// Running again after the scheduler put it back in its queue or suspended it: its
			// owner hears where. Its idle period starts over: it could not be busy meanwhile.
			// The pause ends when the scheduler says the job started again, where it says.
			now := s.Clock.Now()
			back := now
			if p := openPause(c); p != nil && j.StartedAt.After(p.From) && j.StartedAt.Before(now) {
				back = j.StartedAt
			}
			endPause(c, back)
			c.KeptAt, c.WarnedAt = latest(now, j.Restarted), time.Time{}
			if err := s.transition(ctx, tx, c, Active, SystemActor, "workspace ready again"); err != nil {
				return nil, err
			}
			return []Notice{{Kind: NoticeGranted, To: []string{c.User}, Lease: c}}, nil
		}
		if c.State != Queued && c.State != Provisioning {
			return nil, tx.UpdateLease(ctx, c, c.State)
		}
		now := s.Clock.Now()
		start := now
		if !j.StartedAt.IsZero() && j.StartedAt.Before(now) && j.StartedAt.After(c.CreatedAt) {
			start = j.StartedAt
		}
		c.StartedAt, c.ExpiresAt = start, start.Add(c.Duration)
		if !j.Restarted.IsZero() {
			// Its job had restarted before it ran for its owner: that is no restart to tell.
			c.KeptAt = latest(now, j.Restarted)
		}
		activated = true
		if err := s.transitionAt(ctx, tx, c, Active, SystemActor, "workspace ready", start); err != nil {
			return nil, err
		}
		return []Notice{{Kind: NoticeGranted, To: []string{c.User}, Lease: c}}, nil
	})
	if err != nil || cur == nil || !activated {
		return false, err
	}
	return true, nil
}

// follow puts a lease where its running job is: its node(s), its connect details' host (the
// job moved: requeued, restarted elsewhere) and the GPUs the scheduler says it holds.
func (s *Service) follow(c *Lease, j Job) {
	if j.Node != "" {
		if old := firstNode(c.Node); c.Node != "" && old != firstNode(j.Node) {
			// The job moved (requeued and started elsewhere): the address follows it.
			c.Connect = regexp.MustCompile(`\b`+regexp.QuoteMeta(old)+`\b`).ReplaceAllLiteralString(c.Connect, firstNode(j.Node))
		}
		c.Node = j.Node
		c.Connect = strings.ReplaceAll(c.Connect, NodePlaceholder, firstNode(j.Node))
	}
	s.adoptGPUs(c, j)
}

// restartedSince reports whether a running lease's job restarted after the lease last saw it
// start: after it became active, and after it last ran again (its KeptAt).
func restartedSince(l *Lease, j Job) bool {
	return !j.Restarted.IsZero() && j.Restarted.After(l.StartedAt) && j.Restarted.After(l.KeptAt)
}

// reasonRestarted begins the reason of a running lease whose job the scheduler started again
// after losing its workload.
const reasonRestarted = "its workspace restarted"

// markRestarted records that a running lease's job was lost and started again between two
// passes, where it runs now, and tells its owner once: what was not saved to storage is gone. An
// idle warning it had is withdrawn, and its idle period starts over.
func (s *Service) markRestarted(ctx context.Context, l *Lease, j Job) error {
	reason := reasonRestarted
	if j.Reason != "" {
		reason += ": " + j.Reason
	}
	_, err := s.updateIf(ctx, l, func(tx Tx, c *Lease) ([]Notice, error) {
		if (c.State != Active && c.State != IdleWarned) || Halted(c) || !restartedSince(c, j) {
			return nil, errSkip
		}
		c.Ref = j.Ref
		s.follow(c, j)
		c.WarnedAt = time.Time{}
		c.KeptAt = latest(s.Clock.Now(), j.Restarted)
		if err := s.transition(ctx, tx, c, Active, SystemActor, reason); err != nil {
			return nil, err
		}
		return []Notice{{Kind: NoticeRestarted, To: []string{c.User}, Lease: c, Reason: reason}}, nil
	})
	return err
}

// latest is the later of two times.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// firstNode is the first host of a scheduler's node list: "gpu01" of "gpu01,gpu02" or "gpu[01-02]".
func firstNode(nodes string) string {
	n := strings.SplitN(nodes, ",", 2)[0]
	if i := strings.IndexByte(n, '['); i >= 0 {
		inner := strings.TrimSuffix(n[i+1:], "]")
		inner = strings.SplitN(strings.SplitN(inner, ",", 2)[0], "-", 2)[0]
		return n[:i] + inner
	}
	return n
}

// ReconcileReport says what one reconcile pass saw and did.
type ReconcileReport struct {
	Leases      int // live workspace leases looked at
	Jobs        int // jobs the scheduler reported
	Activated   int // waiting leases whose job runs
	Queued      int // provisioning leases the scheduler queued
	Ended       int // leases ended because their job ended (finished, timed out, cancelled, failed)
	Vanished    int // leases failed because their job is gone
	Adopted     int // jobs found for a lease that had not recorded them
	Cancelled   int // jobs cancelled because no live lease owns them
	Removed     int // ended jobs deleted KeepEnded after they ended
	Resubmitted int // jobs submitted again for leases whose job never reached the scheduler
	Retimed     int // jobs whose time limit was raised to an extended lease's
	Swept       int // ended leases whose leftovers (a Service, orphaned pods) were deleted
	Replaced    int // waiting leases whose job could never run where they were placed, placed again
}

func (r ReconcileReport) String() string {
	return fmt.Sprintf("%d leases, %d jobs: %d activated, %d queued, %d ended, %d vanished, %d adopted, %d cancelled, %d retimed, %d resubmitted, %d removed, %d swept, %d placed again",
		r.Leases, r.Jobs, r.Activated, r.Queued, r.Ended, r.Vanished, r.Adopted, r.Cancelled, r.Retimed, r.Resubmitted, r.Removed, r.Swept, r.Replaced)
}

// Reconcile makes the scheduler and the database agree, whatever happened in between (a crash
// between submitting a job and recording it, a job cancelled behind the service's back, a lease
// released while its job kept running). It is safe to run at any time and from several replicas:
// every change is a conditional update, and a lease that moved on is left alone.
//
//   - A job runs or waits: its lease becomes active or queued, and adopts the job if it had not
//     recorded it.
//   - A job ended: its live lease ends the same way (finished -> released, time limit -> expired,
//     cancelled outside Quartermaster or failed -> failed), and the owner is told.
//   - A live lease whose job is gone from the scheduler fails, and the owner is told.
//   - A job that no live lease owns is cancelled.
//
// It first refreshes the backend's inventory (InventoryRefresher) and, at most every
// TopologyRefresh, the node agents' topology (Service.Topology). With a backend that is not a
// Watcher it does nothing more.
func (s *Service) Reconcile(ctx context.Context) (ReconcileReport, error) {
	var rep ReconcileReport
	if r, ok := BackendAs[InventoryRefresher](s.Backend); ok {
		// A failed refresh keeps the last inventory; the next pass tries again.
		if err := r.RefreshInventory(ctx); err != nil {
			s.inventoryFailed(err)
		} else {
			s.inventorySucceeded()
			s.schedulerAway.Store(false)
			if s.inventoryErr.Swap(nil) != nil {
				s.log().Info("read the scheduler's inventory again")
			}
		}
	}
	if err := s.RefreshTopology(ctx, false); err != nil {
		s.log().Warn("read the node agents' topology", "err", err)
	}
	w, ok := BackendAs[Watcher](s.Backend)
	if !ok {
		return rep, nil
	}
	// Leases first, jobs second: a lease that had recorded its job when the leases were read had
	// submitted it before, so the scheduler's list shows it unless it is really gone.
	live, err := s.List(ctx, LeaseFilter{States: LiveStates})
	if err != nil {
		return rep, err
	}
	jobs, err := w.Jobs(ctx)
	if err != nil {
		return rep, err
	}
	rep.Jobs = len(jobs)
	byLease := make(map[LeaseID][]Job, len(jobs))
	for _, j := range jobs {
		byLease[j.Lease] = append(byLease[j.Lease], j)
	}
	owned := make(map[string]bool, len(live)) // job refs that a live lease owns
	swept := map[LeaseID]bool{}               // leases whose leftovers this pass deleted
	var errs []error
	now := s.Clock.Now()
	for _, l := range live {
		if l.Kind != KindWorkspace {
			continue
		}
		rep.Leases++
		j, found := jobOf(l, byLease[l.ID])
		if !found {
			if l.Ref == "" {
				if l.State != Provisioning || submitting(l, now) || !s.stalled(ctx, l, now) {
					continue // its start is still in flight
				}
				switch again, err := s.submitAgain(ctx, l); {
				case err != nil:
					errs = append(errs, err)
					continue
				case again:
					rep.Resubmitted++
					continue
				}
				rep.Vanished++
				errs = append(errs, s.markEnded(ctx, l, Failed, "its job never reached the scheduler (the service stopped before submitting it)", "", time.Time{}))
				continue
			}
			if l.State.Running() && !l.ExpiresAt.IsZero() && !now.Before(l.ExpiresAt) {
				// Its end passed before this pass saw it (the service was down longer than the
				// scheduler keeps an ended job): the job's time limit ended it, at its end.
				rep.Ended++
				errs = append(errs, s.markEnded(ctx, l, Expired, "the lease reached its end time", "", l.ExpiresAt))
				continue
			}
			rep.Vanished++
			gone := fmt.Sprintf("its job %s is gone from the scheduler", l.Ref)
			if n, ok := BackendAs[GoneNamer](s.Backend); ok {
				gone = n.GoneWords(l.Ref)
			}
			if err := s.markEnded(ctx, l, Failed, gone, "", time.Time{}); err != nil {
				errs = append(errs, err)
				continue
			}
			if sw, ok := BackendAs[Sweeper](s.Backend); ok {
				swept[l.ID] = true
				if err := sw.Sweep(ctx, l); err != nil {
					errs = append(errs, fmt.Errorf("delete what is left of %s: %w", l.ID, err))
				}
			}
			continue
		}
		owned[j.Ref] = true
		if l.Ref == "" && l.State == Provisioning {
			// Its Start may run, here or in another replica, and record the job with how to
			// reach the workspace (a pass adopting it first would make it active with no
			// address to connect to). The lease is read again: its submission may have been
			// claimed since the list above, its job submitted since.
			if _, ok := s.starting.Load(l.ID); ok {
				continue
			}
			cur, err := s.Get(ctx, l.ID)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if submitting(cur, now) || cur.Ref != "" || cur.State != Provisioning {
				continue // being submitted, or recorded since: the next pass takes it as it is
			}
		}
		if l.Ref == "" && (j.State == JobPending || j.State == JobStarting || j.State == JobRunning) {
			// apply records a waiting, starting or running job on its lease; one that ended
			// (or is ending) ends the lease, or is left for the next pass, and is no adoption.
			rep.Adopted++
		}
		if err := s.apply(ctx, w, l, j, &rep); err != nil {
			errs = append(errs, err)
		}
	}
	for _, j := range jobs {
		if owned[j.Ref] {
			continue
		}
		if j.State.Ended() && !j.Held {
			if j.Kept && !j.EndedAt.IsZero() && now.Sub(j.EndedAt) >= KeepEnded {
				if err := w.Cancel(ctx, j); err != nil {
					errs = append(errs, fmt.Errorf("delete ended job %s of %s: %w", j.Ref, j.Lease, err))
					continue
				}
				s.log().Info("deleted a job a day after it ended", "job", j.Ref, "lease", j.Lease, "ended", j.EndedAt)
				rep.Removed++
			}
			continue
		}
		// Read the lease again: one created after the list above is not an orphan.
		cur, err := s.Get(ctx, j.Lease)
		if err == nil && cur.State.Live() && cur.Kind == KindWorkspace && (cur.Ref == "" || cur.Ref == j.Ref) {
			continue
		}
		if err != nil && ErrorCode(err) != ENOTFOUND {
			errs = append(errs, err)
			continue
		}
		if err := w.Cancel(ctx, j); err != nil {
			errs = append(errs, fmt.Errorf("cancel orphan job %s of %s: %w", j.Ref, j.Lease, err))
			continue
		}
		s.log().Info("cancelled a job no live lease owns", "job", j.Ref, "lease", j.Lease)
		rep.Cancelled++
	}
	if f, ok := BackendAs[LeftoverFinder](s.Backend); ok {
		errs = append(errs, s.sweepLeftovers(ctx, f, swept, &rep))
	}
	return rep, errors.Join(errs...)
}

// sweepLeftovers deletes what is left in the scheduler of leases that have ended (or that the
// database does not know) and have no job there: what a sweep missed. A lease that has not ended
// is left alone (its start may be making its objects just now), and at most maxSweepsPerPass
// leases are swept per pass. A lease whose sweep failed waits before it is tried again, longer
// after each failure (sweepBackoff), and the pass takes the next ones meanwhile: leftovers that
// cannot be deleted (the scheduler refuses, a namespace stuck terminating) do not keep the others
// waiting. One that failed sweepFailsToSay times is said once in the log, as a warning with what
// to do; its later failures are no error of the pass, so the log does not repeat it every pass.
func (s *Service) sweepLeftovers(ctx context.Context, f LeftoverFinder, swept map[LeaseID]bool, rep *ReconcileReport) error {
	now := s.Clock.Now()
	ids := f.Leftovers()
	s.sweepMu.Lock()
	listed := make(map[LeaseID]bool, len(ids))
	for _, id := range ids {
		listed[id] = true
	}
	for id := range s.sweepFails {
		if !listed[id] { // deleted, by hand or by a later Stop: forget it
			delete(s.sweepFails, id)
		}
	}
	// Those that never failed first, in the finder's order; then those whose wait is over.
	var fresh, again []LeaseID
	for _, id := range ids {
		switch fl := s.sweepFails[id]; {
		case fl == nil:
			fresh = append(fresh, id)
		case !now.Before(fl.next):
			again = append(again, id)
		}
	}
	s.sweepMu.Unlock()

	var errs []error
	n := 0
	for _, id := range append(fresh, again...) {
		if n == maxSweepsPerPass {
			break
		}
		if swept[id] {
			continue
		}
		l, err := s.Get(ctx, id)
		switch {
		case err == nil && !l.State.Ended():
			continue
		case err != nil && ErrorCode(err) != ENOTFOUND:
			errs = append(errs, err)
			continue
		case err != nil:
			l = &Lease{ID: id}
		}
		n++
		if err := f.Sweep(ctx, l); err != nil {
			if err := s.sweepFailed(f, id, err, now); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		s.sweepMu.Lock()
		fl := s.sweepFails[id]
		delete(s.sweepFails, id)
		s.sweepMu.Unlock()
		if fl != nil && fl.said {
			s.log().Warn("deleted at last what was left of an ended lease", "lease", id, "failures", fl.n)
		} else {
			s.log().Info("deleted what was left of an ended lease", "lease", id)
		}
		rep.Swept++
	}
	return errors.Join(errs...)
}

// sweepFail is a lease whose leftovers could not be deleted: how many sweeps failed in a row,
// when the next may try, and whether the log has said it.
type sweepFail struct {
	n    int
	next time.Time
	said bool
}

// sweepFailsToSay is how many sweeps of a lease fail in a row before the log says it, once.
const sweepFailsToSay = 3

// sweepBackoff is how long a lease whose sweep failed n times in a row waits before the next
// try: a minute, doubled after each failure, at most an hour.
func sweepBackoff(n int) time.Duration {
	d := time.Minute
	for i := 1; i < n && d < time.Hour; i++ {
		d *= 2
	}
	return min(d, time.Hour)
}

// SweepAdviser is a LeftoverFinder that says what an operator can do about a lease whose
// leftovers keep failing to delete (err is the last failure).
type SweepAdviser interface {
	SweepAdvice(id LeaseID, err error) string
}

// sweepFailed records a failed sweep of a lease's leftovers. It returns the error for the pass to
// report until the lease has failed sweepFailsToSay times; then it warns once, with what to do,
// and returns nil from then on.
func (s *Service) sweepFailed(f LeftoverFinder, id LeaseID, err error, now time.Time) error {
	s.sweepMu.Lock()
	if s.sweepFails == nil {
		s.sweepFails = map[LeaseID]*sweepFail{}
	}
	fl := s.sweepFails[id]
	if fl == nil {
		fl = &sweepFail{}
		s.sweepFails[id] = fl
	}
	fl.n++
	fl.next = now.Add(sweepBackoff(fl.n))
	n, said := fl.n, fl.said
	say := !said && n >= sweepFailsToSay
	if say {
		fl.said = true
	}
	s.sweepMu.Unlock()
	switch {
	case say:
		advice := "delete them by hand; Quartermaster tries again less often, up to once an hour"
		if a, ok := BackendAs[SweepAdviser](s.Backend); ok {
			advice = a.SweepAdvice(id, err)
		}
		s.log().Warn("deleting what is left of an ended lease keeps failing; the next leftovers are swept meanwhile",
			"lease", id, "failures", n, "err", err, "advice", advice)
		return nil
	case said:
		return nil
	}
	return fmt.Errorf("delete what is left of %s: %w", id, err)
}

// jobOf picks a lease's job: the one it recorded, else (a lease that crashed before recording
// it) the newest one not ended, else the newest.
func jobOf(l *Lease, js []Job) (Job, bool) {
	if len(js) == 0 {
		return Job{}, false
	}
	if l.Ref != "" {
		for _, j := range js {
			if j.Ref == l.Ref {
				return j, true
			}
		}
		return Job{}, false
	}
	sorted := append([]Job(nil), js...)
	sort.SliceStable(sorted, func(a, b int) bool {
		if sorted[a].State.Ended() != sorted[b].State.Ended() {
			return !sorted[a].State.Ended()
		}
		return refLess(sorted[b].Ref, sorted[a].Ref)
	})
	return sorted[0], true
}

// refLess orders numeric refs (Slurm job ids) numerically, others as text.
func refLess(a, b string) bool {
	if len(a) != len(b) && strings.Trim(a, "0123456789") == "" && strings.Trim(b, "0123456789") == "" {
		return len(a) < len(b)
	}
	return a < b
}

// stalled reports whether a provisioning lease without a job has waited longer than SubmitGrace
// since it last changed state.
func (s *Service) stalled(ctx context.Context, l *Lease, now time.Time) bool {
	ev, err := s.History(ctx, l.ID)
	if err != nil || len(ev) == 0 {
		return now.Sub(l.CreatedAt) > s.submitGrace()
	}
	return now.Sub(ev[len(ev)-1].At) > s.submitGrace()
}

// submitAgain submits once more the job of a provisioning lease whose job never reached the
// scheduler (the service stopped between writing the lease and submitting it), and tells its
// owner when it runs. It reports false when the job was submitted again before (that lease then
// fails); a lease that another replica is submitting again just now is left to it.
func (s *Service) submitAgain(ctx context.Context, l *Lease) (bool, error) {
	var tried, claimed bool
	cur, err := s.updateIf(ctx, l, func(tx Tx, c *Lease) ([]Notice, error) {
		if c.Ref != "" {
			return nil, errSkip
		}
		ev, err := tx.Events(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		now := s.Clock.Now()
		if len(ev) > 0 && now.Sub(ev[len(ev)-1].At) <= s.submitGrace() || submitting(c, now) {
			return nil, errSkip // another replica moved it just now, or submits it now
		}
		for _, e := range ev {
			if e.Reason == reasonSubmitAgain {
				tried = true
				return nil, errSkip
			}
		}
		claimed = true
		return nil, tx.AddEvent(ctx, &Event{Lease: c.ID, At: now, Actor: SystemActor, From: Provisioning, To: Provisioning, Reason: reasonSubmitAgain})
	})
	if err != nil || tried {
		return false, err
	}
	if !claimed || cur == nil {
		return true, nil
	}
	s.log().Info("submitting a job again: the service stopped before it reached the scheduler", "lease", cur.ID)
	if err := s.start(ctx, cur, true); err != nil {
		return true, err
	}
	return true, nil
}

// keepWaitingJob raises the time limit of a job that waits in the scheduler's queue where the
// limit counts from before the job runs (Job.DeadlineFrom): a job that waited longer than its
// lease lasts would otherwise be ended by its limit before it ever ran, and its lease reported
// expired. Within half an hour of the limit it is raised to the wait so far, the lease's length
// and an hour.
func (s *Service) keepWaitingJob(ctx context.Context, w Watcher, l *Lease, j Job, rep *ReconcileReport) error {
	r, ok := BackendAs[Retimer](s.Backend)
	if !ok || j.DeadlineFrom.IsZero() || j.TimeLimit <= 0 {
		return nil
	}
	if l.Node != "" && (l.State == Queued || l.State == Provisioning) {
		// Placed by the service on a node it found free: a long wait there means the node went
		// away, and the limit, as before, ends what would otherwise wait for it forever.
		return nil
	}
	waited := max(0, s.Clock.Now().Sub(j.DeadlineFrom))
	if j.TimeLimit >= waited+30*time.Minute {
		return nil // not near; once it runs, the pass gives it its lease's length (apply)
	}
	if err := r.SetTimeLimit(ctx, j, waited+l.Duration+time.Hour); err != nil {
		return fmt.Errorf("raise the time limit of waiting job %s of %s: %w", j.Ref, l.ID, err)
	}
	rep.Retimed++
	return nil
}

// adopt records on a lease that had not recorded its job (its submitter stopped before it could)
// the job the scheduler holds for it, waiting or starting, so that the lease owns it from now on.
func (s *Service) adopt(ctx context.Context, l *Lease, j Job) error {
	if l.Ref != "" {
		return nil
	}
	_, err := s.updateIf(ctx, l, func(tx Tx, c *Lease) ([]Notice, error) {
		if c.Ref != "" {
			return nil, errSkip
		}
		c.Ref = j.Ref
		return nil, tx.UpdateLease(ctx, c, c.State)
	})
	return err
}

// runLimit is the time limit a running lease's job should have, and whether it is a minute or
// more off the one it has. Where the scheduler says when the limit ends this run (LimitEnd), it
// should end the job when the lease ends: a job requeued (run again later than its lease started)
// or suspended for a while would otherwise run past its lease's end, which then cancels it before
// a warning the template asked for a lead before the limit (Slurm's --signal, a checkpoint) ever
// came; and a lease extended after its job ran gets the extension. Elsewhere the limit is at least
// the lease's length, as it was asked for.
func runLimit(l *Lease, j Job) (time.Duration, bool) {
	if j.LimitEnd.IsZero() || l.ExpiresAt.IsZero() {
		return l.Duration, j.TimeLimit < l.Duration.Truncate(time.Minute)
	}
	want := j.TimeLimit + l.ExpiresAt.Sub(j.LimitEnd)
	if want < time.Minute {
		return 0, false // its lease ends within the minute: the pass ends it
	}
	if want >= j.TimeLimit+time.Minute || want <= j.TimeLimit-time.Minute {
		return want, true
	}
	return 0, false
}

// apply moves one live lease to where its job is.
func (s *Service) apply(ctx context.Context, w Watcher, l *Lease, j Job, rep *ReconcileReport) error {
	if j.Unplaced != "" && (j.State == JobPending || j.State == JobStarting) && (l.State == Provisioning || l.State == Queued) && l.StartedAt.IsZero() {
		return s.placeAgain(ctx, w, l, j, rep)
	}
	switch j.State {
	case JobPending:
		if err := s.adopt(ctx, l, j); err != nil {
			return err
		}
		if err := s.keepWaitingJob(ctx, w, l, j, rep); err != nil {
			return err
		}
		if l.State == Provisioning {
			reason := "waiting in the scheduler's queue"
			if j.Reason != "" {
				reason += ": " + j.Reason
			}
			rep.Queued++
			return s.markQueued(ctx, l, reason)
		}
		if (l.State == Active || l.State == IdleWarned) && !recordedPause(l, PauseRequeued) {
			return s.markRequeued(ctx, l, j)
		}
		return s.rewordQueued(ctx, l, j)
	case JobStarting:
		if err := s.adopt(ctx, l, j); err != nil {
			return err
		}
		if (l.State == Active || l.State == IdleWarned) && !Halted(l) {
			// A running lease's job starting again: its workload was lost (a pod gone with its
			// node, and another one starting), so its workspace does not run until it runs again.
			return s.markRequeued(ctx, l, j)
		}
		// Placed and starting: a queued lease keeps waiting until its job runs, saying why
		// where the scheduler does (a multi-node lease with some of its pods still starting).
		return s.rewordQueued(ctx, l, j)
	case JobRunning:
		if l.State == Queued || l.State == Provisioning {
			ok, err := s.markRunning(ctx, l, j)
			if ok {
				rep.Activated++
			}
			return err
		}
		if j.Suspended {
			// Stopped where it runs, holding its GPUs: the lease goes on, paused.
			if l.Ref == "" || (j.Node != "" && l.Node != j.Node) {
				if _, err := s.markRunning(ctx, l, j); err != nil {
					return err
				}
			}
			return s.markSuspended(ctx, l, j)
		}
		if !Halted(l) && restartedSince(l, j) {
			// Lost and started again between two passes: its owner hears that it restarted.
			if err := s.markRestarted(ctx, l, j); err != nil {
				return err
			}
		} else if l.Ref == "" || (j.Node != "" && l.Node != j.Node) || gpusMoved(l, j) || Halted(l) {
			if _, err := s.markRunning(ctx, l, j); err != nil {
				return err
			}
		}
		if r, ok := BackendAs[Retimer](s.Backend); ok && j.TimeLimit > 0 {
			if d, retime := runLimit(l, j); retime {
				if err := r.SetTimeLimit(ctx, j, d); err != nil {
					return fmt.Errorf("set the time limit of job %s of %s: %w", j.Ref, l.ID, err)
				}
				rep.Retimed++
			}
		}
	case JobCompleted:
		rep.Ended++
		reason := "its job finished"
		if j.Reason != "" {
			reason += " (" + j.Reason + ")"
		}
		return s.markEnded(ctx, l, Released, reason, "", j.EndedAt)
	case JobTimeout:
		rep.Ended++
		reason := "its job reached the scheduler's time limit"
		if j.Reason != "" { // a deadline, not the time limit
			reason = "its job ended: " + j.Reason
		} else if l.StartedAt.IsZero() && (l.State == Queued || l.State == Provisioning) {
			// Its limit counted its wait (a Kubernetes Job's deadline): it never ran, and what
			// it waited for is why.
			reason = "its job reached the scheduler's time limit before it ever ran"
			if w := strings.TrimPrefix(l.Reason, "waiting in the scheduler's queue: "); w != l.Reason && w != "" {
				reason += ", waiting for " + strings.TrimRight(w, ".")
			}
		}
		return s.markEnded(ctx, l, Expired, reason, "", j.EndedAt)
	case JobCancelled:
		rep.Ended++
		return s.markEnded(ctx, l, Failed, "its job was cancelled in the scheduler, outside Quartermaster", j.Output, j.EndedAt)
	case JobFailed:
		rep.Ended++
		reason := "its job failed"
		if j.Refused {
			reason = strings.TrimSuffix(refusedWords, ": ")
		}
		if j.Reason != "" {
			reason += ": " + j.Reason
		}
		if w := ExitWords(j.ExitCode); w != "" && !strings.Contains(j.Reason, "exit code") && !strings.Contains(j.Reason, "by signal") {
			reason += " (" + w + ")"
		}
		if err := s.markEnded(ctx, l, Failed, reason, j.Output, j.EndedAt); err != nil || !j.Held {
			return err
		}
		// Its workload still holds its GPUs though it cannot run: free them now (a crash before
		// this leaves an orphan that the next pass cancels).
		if err := w.Cancel(ctx, j); err != nil {
			return fmt.Errorf("cancel failed job %s of %s: %w", j.Ref, l.ID, err)
		}
		rep.Cancelled++
		return nil
	}
	return nil
}

// placeAgain deletes the job of a lease that never ran and whose job can never run where the
// service placed it (Job.Unplaced: its node was cordoned or left the cluster before the job was
// placed there), and puts the lease back in the service's queue, keeping its place, with no node
// and no job, saying why; the lifecycle tick places it again on a node that takes it, or it waits
// for one. Its owner, told before that it was being started, is told that it waits; one told that
// it waits already is not told again. The job is deleted first: should that fail, the lease is
// left as it is, and the next pass tries again.
func (s *Service) placeAgain(ctx context.Context, w Watcher, l *Lease, j Job, rep *ReconcileReport) error {
	if err := w.Cancel(ctx, j); err != nil {
		return fmt.Errorf("delete job %s of %s to place it again: %w", j.Ref, l.ID, err)
	}
	reason := "waiting to be placed again: " + j.Unplaced
	s.log().Info("deleted a waiting job that cannot run where its lease was placed; placing the lease again", "lease", l.ID, "job", j.Ref, "why", j.Unplaced)
	_, err := s.updateIf(ctx, l, func(tx Tx, c *Lease) ([]Notice, error) {
		if !c.StartedAt.IsZero() {
			return nil, errSkip
		}
		was := c.State
		c.Ref, c.Node, c.GPUIndex, c.Connection, c.Connect = "", "", nil, ConnectionUnknown, ""
		if err := s.transition(ctx, tx, c, Queued, SystemActor, reason); err != nil {
			return nil, err
		}
		if was == Provisioning {
			return []Notice{{Kind: NoticeQueued, To: []string{c.User}, Lease: c, Reason: reason}}, nil
		}
		return nil, nil
	})
	if err == nil {
		rep.Replaced++
	}
	return err
}

// ExitWords says a job's exit status (Job.ExitCode) to its owner: "exit code 3", or for a
// workload a signal ended "killed by signal 15" ("killed by signal SIGKILL" where the scheduler
// names it); "" when it is not known.
func ExitWords(code string) string {
	switch {
	case code == "":
		return ""
	case strings.HasPrefix(code, "signal "):
		return "killed by " + code
	}
	return "exit code " + code
}
