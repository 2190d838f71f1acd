// Package slurm is the Slurm backend: every lease is a Slurm job, submitted, watched and
// cancelled through Slurm's own commands (sbatch --parsable, squeue --json, scontrol, scancel).
// The class gives the partition and GRES, the lease its time limit, the team its account (where
// accounting is on), and the job's comment carries the lease id (qm:L-42), so the service's
// reconcile pass can tell its jobs from everyone else's.
//
// The inventory comes from Slurm itself: RefreshInventory (called by the service's reconcile
// loop) reads the nodes, their partitions and GRES with sinfo --json and maps them to the
// policy's classes, so the service can cap, count and place. A lease the service placed is
// pinned to its node (--nodelist); until the first refresh Inventory is nil and Slurm places.
// The service learns what became of each lease's job from Jobs (qm.Watcher), including the GPUs
// Slurm gave it on its node: no sbatch option names GPU indexes, so Slurm picks them.
package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
)

// Defaults for Config fields left empty.
const (
	// DefaultInstance prefixes the lease id in job comments: qm:L-42.
	DefaultInstance = templates.DefaultInstance
	// DefaultStartWait is how long Start waits for Slurm's first decision on a new job. A submit
	// makes slurmctld try to schedule at once; this covers that attempt on a loaded controller.
	DefaultStartWait = 3 * time.Second
	// DefaultPoll is how often Start asks about a new job while it waits.
	DefaultPoll = 100 * time.Millisecond
	// commandTimeout bounds one Slurm command.
	commandTimeout = 30 * time.Second
)

// Runner runs one Slurm command with stdin and returns its standard output. An error carries the
// command's standard error.
type Runner func(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error)

// Config configures the backend.
type Config struct {
	Policy   *policy.Policy
	Catalog  *templates.Catalog
	Workload workload.Settings
	// Instance prefixes the lease id in each job's comment (INSTANCE:L-42); the reconcile pass
	// touches only jobs with this prefix. Services sharing a cluster need different instances.
	Instance string
	// Env is extra environment for the Slurm commands (SLURM_CONF=…). The commands, and so the
	// jobs they submit, get only PATH, HOME, USER, LOGNAME, LANG, TZ, SLURM_CONF and these: the
	// service's own secrets never reach a job.
	Env []string
	// StartWait and Poll: see DefaultStartWait and DefaultPoll.
	StartWait time.Duration
	Poll      time.Duration
	Logger    *slog.Logger
	// Run runs a Slurm command; nil runs the real one. Tests and benchmarks stub it.
	Run Runner
}

// Backend submits, watches and cancels leases' jobs on a Slurm cluster.
type Backend struct {
	cfg Config
	log *slog.Logger
	run Runner

	inv atomic.Pointer[[]qm.Node] // the last good inventory; nil before the first
	// slots is where each GPU type lies among each node's GPUs, by node, from the last refresh.
	slots atomic.Pointer[map[string]gpuSlots]
	// away says, per exclusive class every node of which takes no jobs now, why (NodesAway).
	away atomic.Pointer[map[string]string]
	// lastMissing is the classes the last refresh found no nodes for, so it warns once.
	mu          sync.Mutex
	lastMissing string
	outputs     map[string]string // the output tail of failed jobs, by job id, read once
}

// New checks the configuration and makes a backend. It does not talk to Slurm.
func New(cfg Config) (*Backend, error) {
	if cfg.Policy == nil || cfg.Catalog == nil {
		return nil, errors.New("slurm: a policy and a template catalog are required")
	}
	for _, c := range cfg.Policy.Classes {
		if c.Slurm.Partition == "" {
			return nil, fmt.Errorf("slurm: class %s has no slurm.partition in the policy", c.Name)
		}
	}
	if cfg.Instance == "" {
		cfg.Instance = DefaultInstance
	}
	cfg.Workload.Instance = cfg.Instance
	if cfg.Workload.RunAs == "" {
		// Jobs run as the account that submits them, this process's: an SSH workspace logs in
		// only that account.
		if u, err := user.Current(); err == nil {
			cfg.Workload.RunAs = u.Username
		}
	}
	if strings.ContainsAny(cfg.Instance, ": \t\n") {
		return nil, fmt.Errorf("slurm: QM_SLURM_INSTANCE=%q must not contain a colon or spaces, which would split the job comment it begins (INSTANCE:L-42); example: QM_SLURM_INSTANCE=qm-prod", cfg.Instance)
	}
	if cfg.StartWait == 0 {
		cfg.StartWait = DefaultStartWait
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	b := &Backend{cfg: cfg, log: cfg.Logger, run: cfg.Run}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	if b.run == nil {
		b.run = b.exec
	}
	return b, nil
}

var _ qm.Watcher = (*Backend)(nil)
var _ qm.Retimer = (*Backend)(nil)
var _ qm.InventoryRefresher = (*Backend)(nil)
var _ qm.NodesAwayTeller = (*Backend)(nil)

// NodesAway says why no node of an exclusive class takes jobs, where the last refresh found the
// class's nodes and every one drained, down or reserved: "every node of class train is drained,
// down or reserved in Slurm (gpu01: DRAIN)"; "" otherwise. A request of such a class then waits
// in the service's queue and is placed when a node is back: handed to Slurm unplaced, its job
// would ask for whole nodes (--exclusive) and hold every GPU of one, other classes' too. A shared
// class's request is handed to Slurm and waits in its queue with Slurm's reason.
func (b *Backend) NodesAway(class string) string {
	if p := b.away.Load(); p != nil {
		return (*p)[class]
	}
	return ""
}

// Inventory is the GPU nodes of every class as the last successful RefreshInventory found them;
// nil before the first. The slice is shared: callers must not change it. Safe for concurrent use.
func (b *Backend) Inventory() []qm.Node {
	if p := b.inv.Load(); p != nil {
		return *p
	}
	return nil
}

// RefreshInventory reads the cluster's nodes (sinfo -N --json; scontrol show node -d -o where
// sinfo cannot print JSON) and this service's jobs that hold GPUs (squeue), and makes them the
// inventory. On an error the last inventory stays.
func (b *Backend) RefreshInventory(ctx context.Context) error {
	nodes, err := b.Nodes(ctx)
	if err != nil {
		return err
	}
	out, err := b.run(ctx, nil, "squeue", "-h", "-t", "RUNNING,COMPLETING,SUSPENDED,STOPPED,CONFIGURING", "-o", "%N|%b|%k")
	if err != nil {
		return fmt.Errorf("slurm: squeue of this service's running jobs: %w", err)
	}
	own := ParseOwnJobs(out, func(comment string) bool { _, ok := b.leaseOf(comment); return ok })
	inv := BuildInventory(b.cfg.Policy, nodes, own)
	slots := make(map[string]gpuSlots, len(nodes))
	for _, n := range nodes {
		slots[n.Name] = gpuSlotsOf(n.GRES)
	}
	b.slots.Store(&slots)
	away := AwayNodes(b.cfg.Policy, nodes)
	b.away.Store(&away)
	b.inv.Store(&inv)
	var missing []string
	for _, c := range b.cfg.Policy.Classes {
		found := false
		for _, n := range inv {
			if n.Class == c.Name {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, c.Name)
		}
	}
	b.mu.Lock()
	changed := strings.Join(missing, ",") != b.lastMissing
	b.lastMissing = strings.Join(missing, ",")
	b.mu.Unlock()
	if changed && len(missing) > 0 {
		b.log.Warn("no usable Slurm node has the partition and GRES of these classes; their requests wait",
			"classes", missing, "nodes", len(nodes))
	}
	return nil
}

// Nodes reads every node of the cluster with sinfo -N --json, or, where that fails (Slurm built
// without its JSON plugins), with scontrol show node -d -o.
func (b *Backend) Nodes(ctx context.Context) ([]SinfoNode, error) {
	out, err := b.run(ctx, nil, "sinfo", "-N", "--json")
	if err == nil {
		nodes, perr := ParseSinfo(out)
		if perr == nil {
			return nodes, nil
		}
		err = perr
	} else {
		err = fmt.Errorf("slurm: sinfo -N --json: %w", err)
	}
	out, err2 := b.run(ctx, nil, "scontrol", "show", "node", "-d", "-o")
	if err2 != nil {
		return nil, errors.Join(err, fmt.Errorf("slurm: scontrol show node: %w", err2))
	}
	nodes, err2 := ParseScontrolNodes(out)
	if err2 != nil {
		return nil, errors.Join(err, err2)
	}
	b.log.Debug("read the nodes with scontrol", "sinfo", err)
	return nodes, nil
}

// Comment is the job comment that carries a lease id: INSTANCE:L-42.
// The script rendered for the job says the same (templates.SlurmComment), so the script a user is
// shown is the one Slurm runs.
func (b *Backend) Comment(id qm.LeaseID) string {
	return templates.SlurmComment(b.cfg.Instance, id.String())
}

// leaseOf reads a job comment this backend wrote; ok is false for anyone else's.
func (b *Backend) leaseOf(comment string) (qm.LeaseID, bool) {
	rest, ok := strings.CutPrefix(comment, b.cfg.Instance+":")
	if !ok || !strings.HasPrefix(rest, "L-") {
		return 0, false
	}
	id, err := qm.ParseLeaseID(rest)
	return id, err == nil
}

// Start renders the lease's template, makes its job directory, submits the script with sbatch
// and waits a moment for Slurm's first decision: running (Active, with the node), or waiting
// (Queued, with Slurm's reason). A job that already ended is left to the reconcile pass. The
// script carries the lease's placement (workload.Render): --nodelist where the service placed it,
// --exclusive for a reservation and for an exclusive class's lease that Slurm places itself.
func (b *Backend) Start(ctx context.Context, l *qm.Lease) (qm.Started, error) {
	w, err := workload.Render(b.cfg.Catalog, b.cfg.Policy, l, b.cfg.Workload)
	if err != nil {
		return qm.Started{}, err
	}
	// The job reaches only its team's storage, symlinks followed; checked before anything is made.
	if err := b.checkStorage(w); err != nil {
		return qm.Started{}, err
	}
	// sbatch does not create the --output directory.
	if err := os.MkdirAll(w.JobDir, 0o755); err != nil {
		return qm.Started{}, fmt.Errorf("slurm: job directory of %s: %w", l.ID, err)
	}
	out, err := b.run(ctx, []byte(w.SlurmScript), "sbatch", "--parsable", "--comment="+b.Comment(l.ID), "--chdir="+w.JobDir)
	if err != nil {
		return qm.Started{}, sbatchError(l.ID, err, w.Input.Token)
	}
	ref, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	if _, err := strconv.ParseUint(ref, 10, 64); err != nil {
		return qm.Started{}, fmt.Errorf("slurm: sbatch for %s printed %q, not a job id", l.ID, clip(string(out)))
	}
	b.log.Info("submitted", "lease", l.ID, "job", ref, "template", w.Template.Name, "partition", w.Input.Slurm.Partition,
		"nodelist", w.Input.Slurm.NodeList, "exclusive", w.Input.Slurm.Exclusive)
	connect := func(node string) string {
		if w.SlurmConnect == nil {
			return ""
		}
		return w.SlurmConnect.Address(node, w.Input.Token)
	}
	// Slurm picks the GPUs on the node: the lease shows those Slurm names, none before.
	st := qm.Started{State: qm.Queued, Ref: ref, Connect: connect(qm.NodePlaceholder), Reason: "Slurm has not placed it yet", PicksGPUs: true}
	deadline := time.Now().Add(b.cfg.StartWait)
	for {
		j, err := b.Job(ctx, ref)
		switch {
		case err != nil:
			b.log.Warn("scontrol show job", "job", ref, "err", err)
		case j.State == qm.JobRunning:
			st.State, st.Node, st.Connect, st.Reason, st.GPUIndex = qm.Active, j.Node, connect(firstHost(j.Node)), "", j.GPUIndex
			return st, nil
		case j.State == qm.JobPending:
			if j.Reason != "" {
				st.Reason = j.Reason
			}
		default: // ending or ended at once: the reconcile pass records how
			st.State, st.Reason = qm.Provisioning, ""
			return st, nil
		}
		if !time.Now().Add(b.cfg.Poll).Before(deadline) {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, nil // submitted: the reconcile pass takes it from here
		case <-time.After(b.cfg.Poll):
		}
	}
}

// Stop cancels the lease's job; a job that is gone or over is not an error. A lease that never
// recorded its job has it cancelled by its comment.
func (b *Backend) Stop(ctx context.Context, l *qm.Lease) error {
	if l.Ref != "" {
		return b.Cancel(ctx, qm.Job{Lease: l.ID, Ref: l.Ref})
	}
	jobs, err := b.Jobs(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, j := range jobs {
		if j.Lease == l.ID && !j.State.Ended() {
			errs = append(errs, b.Cancel(ctx, j))
		}
	}
	return errors.Join(errs...)
}

var (
	_ qm.GoneNamer = (*Backend)(nil)
	_ qm.Sweeper   = (*Backend)(nil)
)

// GoneWords says what became of a live lease's job that squeue no longer lists as this
// service's. Mostly it is gone (it ended longer ago than slurmctld's MinJobAge); but a job whose
// comment was changed outside Quartermaster (scontrol update comment=…) is still there, running
// or waiting under its lease's job name, and its owner reads that, as squeue shows it, rather
// than that it is gone. Sweep then cancels it.
func (b *Backend) GoneWords(ref string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, ok := b.uncommented(ctx, ref); ok {
		return fmt.Sprintf("its job %s is still in Slurm but its comment no longer names its lease (changed outside Quartermaster), so it is no longer watched and is cancelled", ref)
	}
	return fmt.Sprintf("its job %s is gone from the scheduler", ref)
}

// Sweep cancels the job of a live lease that failed because squeue no longer lists its job as
// this service's, where the job is still there under the lease's job name (its comment changed
// outside Quartermaster): it would otherwise run on, holding its GPUs, for a lease that is over
// and no longer billed. A job that is gone or over, or that Slurm now gives the id to another
// job (a controller started afresh numbers jobs from 1 again), is left alone.
func (b *Backend) Sweep(ctx context.Context, l *qm.Lease) error {
	if l.Ref == "" {
		return nil
	}
	if id, ok := b.uncommented(ctx, l.Ref); !ok || id != l.ID {
		return nil
	}
	return b.Cancel(ctx, qm.Job{Lease: l.ID, Ref: l.Ref})
}

// leaseJobName reads the lease of a job name the service gives its jobs: qm-l-42-<template>.
var leaseJobName = regexp.MustCompile(`^qm-l-([0-9]+)-`)

// uncommented reads job ref with scontrol and reports whether it is still waiting or running
// (any task of an array) under a lease's job name, and that lease.
func (b *Backend) uncommented(ctx context.Context, ref string) (qm.LeaseID, bool) {
	if _, err := strconv.ParseUint(ref, 10, 64); err != nil {
		return 0, false
	}
	out, err := b.run(ctx, nil, "scontrol", "show", "job", "-o", ref)
	if err != nil {
		return 0, false
	}
	var id qm.LeaseID
	live := false
	for _, line := range strings.Split(string(out), "\n") {
		kv := parseKeyValues(line)
		if kv["JobId"] == "" {
			continue
		}
		m := leaseJobName.FindStringSubmatch(kv["JobName"])
		if m == nil {
			return 0, false
		}
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return 0, false
		}
		id = qm.LeaseID(n)
		if !(SqueueJob{JobID: kv["JobId"], State: kv["JobState"]}).job(id).State.Ended() {
			live = true
		}
	}
	return id, live
}

// Cancel cancels one job with scancel.
func (b *Backend) Cancel(ctx context.Context, j qm.Job) error {
	if _, err := strconv.ParseUint(j.Ref, 10, 64); err != nil {
		return fmt.Errorf("slurm: %q is not a job id", j.Ref)
	}
	_, err := b.run(ctx, nil, "scancel", j.Ref)
	if err != nil && (strings.Contains(err.Error(), "Invalid job id") || strings.Contains(err.Error(), "already completing or completed")) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("slurm: scancel %s: %w", j.Ref, err)
	}
	return nil
}

// SetTimeLimit raises a job's time limit to d (rounded up to a minute), after an extension.
// Slurm lets only operators and administrators raise a limit.
func (b *Backend) SetTimeLimit(ctx context.Context, j qm.Job, d time.Duration) error {
	mins := int64((d + time.Minute - 1) / time.Minute)
	_, err := b.run(ctx, nil, "scontrol", "update", "JobId="+j.Ref, "TimeLimit="+strconv.FormatInt(mins, 10))
	return err
}

// Ping checks that slurmctld answers (scontrol ping), for the service's readiness check. With a
// backup controller scontrol prints a line for each: the cluster answers while one is UP.
func (b *Backend) Ping(ctx context.Context) error {
	out, err := b.run(ctx, nil, "scontrol", "ping")
	said := pingLines(string(out))
	switch {
	case err == nil && !strings.Contains(string(out), " is UP"):
		err = errors.New(clip(strings.Join(said, "; ")))
	case err != nil && len(said) > 0:
		// scontrol prints "Slurmctld(primary) at head is DOWN" on its standard output and
		// errors on its standard error: the error keeps both.
		err = fmt.Errorf("%s; %w", clip(strings.Join(said, "; ")), err)
	}
	if err != nil {
		return fmt.Errorf("slurm: slurmctld does not answer scontrol ping: %w", err)
	}
	return nil
}

// pingLines are the lines of what scontrol ping printed that say something: not blank, and not
// its banner of asterisks ("** RESTORE SLURMCTLD DAEMON TO SERVICE **").
func pingLines(s string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "*") {
			out = append(out, line)
		}
	}
	return out
}

// Jobs lists this service's jobs that slurmctld knows: pending, running, and those that ended
// within its MinJobAge, through squeue --json. A failed job carries the last lines of its output
// file where this host can read it.
func (b *Backend) Jobs(ctx context.Context) ([]qm.Job, error) {
	out, err := b.run(ctx, nil, "squeue", "--json")
	if err != nil {
		return nil, fmt.Errorf("slurm: squeue --json: %w", err)
	}
	all, err := ParseSqueue(out)
	if err != nil {
		return nil, err
	}
	var jobs []qm.Job
	failed := map[string]bool{}
	// The tasks of a job array, by the array's id, in the order Slurm lists them.
	type array struct {
		at    int // where the array goes among jobs
		tasks []SqueueJob
		jobs  []qm.Job
	}
	arrays := map[string]*array{}
	for _, sj := range all {
		id, ok := b.leaseOf(sj.Comment)
		if !ok {
			continue
		}
		sj.loc = b.location()
		j := sj.job(id)
		if j.State == qm.JobRunning {
			j.GPUIndex = b.jobGPUs(sj, j.Node)
		}
		if j.State == qm.JobFailed {
			j.Output = b.output(sj.JobID, id, sj.StdOut)
			failed[sj.JobID] = true
		}
		if sj.ArrayJobID == "" {
			jobs = append(jobs, j)
			continue
		}
		a := arrays[sj.ArrayJobID]
		if a == nil {
			a = &array{at: len(jobs)}
			arrays[sj.ArrayJobID] = a
			jobs = append(jobs, qm.Job{})
		}
		a.tasks, a.jobs = append(a.tasks, sj), append(a.jobs, j)
	}
	for ref, a := range arrays {
		jobs[a.at] = arrayJob(ref, a.tasks, a.jobs)
	}
	b.mu.Lock()
	for ref := range b.outputs {
		if !failed[ref] {
			delete(b.outputs, ref)
		}
	}
	b.mu.Unlock()
	return jobs, nil
}

// jobGPUs is the GPUs a running job on one node holds there, as its class numbers them; nil when
// not known (no inventory refresh yet, a job on several nodes).
func (b *Backend) jobGPUs(sj SqueueJob, node string) []int {
	p := b.slots.Load()
	if p == nil || node == "" || strings.ContainsAny(node, ",[") {
		return nil
	}
	return jobGPUs(sj.GRESDetail, tresGRES(sj.TRESPerNode), (*p)[node])
}

// output is the last lines of a failed job's output file, read once per job. Only a regular
// file in the lease's own job directory (…/.quartermaster/L-42/) is read, whatever a job's
// comment claims; "" when there is none or it cannot be read here (the team storage is not
// mounted on this host).
func (b *Backend) output(ref string, lease qm.LeaseID, path string) string {
	b.mu.Lock()
	out, ok := b.outputs[ref]
	b.mu.Unlock()
	if ok {
		return out
	}
	out = readTail(path, lease)
	b.mu.Lock()
	if b.outputs == nil {
		b.outputs = map[string]string{}
	}
	b.outputs[ref] = out
	b.mu.Unlock()
	return out
}

// outputBytes is how much of the end of an output file is read for its last lines.
const outputBytes = 16 << 10

func readTail(path string, lease qm.LeaseID) string {
	if path == "" || filepath.Clean(path) != path || !strings.Contains(path, "/.quartermaster/"+lease.String()+"/") {
		return ""
	}
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	off := max(st.Size()-outputBytes, 0)
	buf := make([]byte, st.Size()-off)
	n, err := f.ReadAt(buf, off)
	if err != nil && n == 0 {
		return ""
	}
	text := string(buf[:n])
	if off > 0 { // the first line read is likely cut
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			text = text[i+1:]
		}
	}
	return workload.OutputTail(text, workload.OutputLines)
}

// Job reads one job with scontrol show job -d -o, which answers for one job however many the
// cluster holds, with the GPUs a running job holds on its node (GRES=gpu:h100:2(IDX:0-1)). Lease
// is left zero.
func (b *Backend) Job(ctx context.Context, ref string) (qm.Job, error) {
	out, err := b.run(ctx, nil, "scontrol", "show", "job", "-d", "-o", ref)
	if err != nil {
		return qm.Job{}, fmt.Errorf("slurm: scontrol show job %s: %w", ref, err)
	}
	// One line per job; a job array's are its tasks, one line for those not started yet.
	var tasks []SqueueJob
	var jobs []qm.Job
	array := false
	for _, line := range strings.Split(string(out), "\n") {
		kv := parseKeyValues(line)
		if kv["JobId"] == "" {
			continue
		}
		// Where Slurm has a description, scontrol prints it as the reason, spaces written as
		// underscores: "ReqNodeNotAvail,_UnavailableNodes:gpu01", or a sentence, which squeue
		// gives the reason Resources ("Nodes_required_for_job_are_DOWN,_DRAINED_or_…").
		reason, desc := kv["Reason"], ""
		if strings.Contains(reason, "_") {
			desc = strings.ReplaceAll(reason, "_", " ")
			if reason, _, _ = strings.Cut(reason, ","); strings.Contains(reason, "_") {
				reason = "Resources"
			}
		}
		sj := SqueueJob{JobID: kv["JobId"], State: kv["JobState"], Reason: reason, Description: desc, Nodes: nullable(kv["NodeList"]), Comment: kv["Comment"],
			Partition: kv["Partition"], Account: nullable(kv["Account"]), TimeLimit: scontrolLimit(kv["TimeLimit"]),
			StartTime: scontrolTime(kv["StartTime"]), EndTime: scontrolTime(kv["EndTime"]), ExitCode: scontrolExit(kv["ExitCode"]),
			EligibleTime: scontrolTime(kv["EligibleTime"]), loc: b.location()}
		if n, err := strconv.Atoi(kv["Restarts"]); err == nil && n > 0 {
			sj.Restarts = n
		}
		if a := kv["ArrayJobId"]; a != "" {
			sj.ArrayJobID, array = a, true
			if _, err := strconv.Atoi(kv["ArrayTaskId"]); err == nil {
				sj.ArrayTaskID = kv["ArrayTaskId"]
			}
		}
		j := sj.job(0)
		// -d adds each node's GRES (Nodes=gpu01 … GRES=…); the one of a job on one node is its GPUs.
		if g := kv["GRES"]; j.State == qm.JobRunning && g != "" && strings.Count(line, " GRES=") == 1 {
			sj.GRESDetail, sj.TRESPerNode = []string{g}, kv["TresPerNode"]
			j.GPUIndex = b.jobGPUs(sj, j.Node)
		}
		tasks, jobs = append(tasks, sj), append(jobs, j)
	}
	switch {
	case len(jobs) == 0:
		return qm.Job{}, fmt.Errorf("slurm: scontrol show job %s printed no job: %q", ref, clip(string(out)))
	case array:
		return arrayJob(ref, tasks, jobs), nil
	}
	j := jobs[0]
	j.Ref = ref
	return j, nil
}

// scontrolTime reads scontrol's local time, 2026-11-30T16:55:30; zero for Unknown, None or N/A.
func scontrolTime(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02T15:04:05", s, time.Local)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// location is the time zone reasons write times in: the policy's.
func (b *Backend) location() *time.Location {
	if b.cfg.Policy == nil || b.cfg.Policy.Location == nil {
		return time.UTC
	}
	return b.cfg.Policy.Location
}

// scontrolLimit reads scontrol's TimeLimit, [days-]hours:minutes:seconds; zero for UNLIMITED, and
// for a limit too large to be a duration (as squeue's), never a negative one.
func scontrolLimit(s string) time.Duration {
	days := 0
	if d, rest, ok := strings.Cut(s, "-"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return 0
		}
		days, s = n, rest
	}
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return 0
	}
	// In seconds, each step checked: days, then hours, minutes and seconds added in turn.
	const most = math.MaxInt64 / int64(time.Second)
	total := int64(days)
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 {
			return 0
		}
		unit := []int64{24, 60, 60}[i]
		if n > most || total > (most-n)/unit {
			return 0
		}
		total = total*unit + n
	}
	return time.Duration(total) * time.Second
}

// scontrolExit reads scontrol's ExitCode=127:0 (exit code, signal).
func scontrolExit(s string) string {
	code, sig, ok := strings.Cut(s, ":")
	if !ok {
		return ""
	}
	if sig != "0" && sig != "" {
		return "signal " + sig
	}
	if _, err := strconv.Atoi(code); err != nil {
		return ""
	}
	return code
}

// exec runs a real Slurm command with the restricted environment.
func (b *Backend) exec(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = b.environ()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), &commandError{err: err, stderr: stderr.String()}
	}
	return stdout.Bytes(), nil
}

// commandError is a Slurm command that failed, with what it wrote to its standard error.
type commandError struct {
	err    error
	stderr string
}

func (e *commandError) Error() string {
	return fmt.Sprintf("%v: %s", e.err, clip(strings.TrimSpace(e.stderr)))
}

func (e *commandError) Unwrap() error { return e.err }

// sbatchError is the error of a submission that failed. Where sbatch ran and refused the job
// (it exited non-zero), it is a qm.Refused whose reason is sbatch's first error line without
// its "sbatch: error:" prefix, which the user is shown; the error keeps all sbatch said, for the
// log. The workspace's token, in the script sbatch may quote, is blanked in both.
func sbatchError(id qm.LeaseID, err error, token string) error {
	hide := func(s string) string {
		if token == "" {
			return s
		}
		return strings.ReplaceAll(s, token, "[token]")
	}
	full := fmt.Errorf("slurm: sbatch for %s: %w", id, err)
	if msg := err.Error(); hide(msg) != msg {
		full = fmt.Errorf("slurm: sbatch for %s: %s", id, hide(msg))
	}
	// A command killed (a timeout) or never run is no answer from Slurm.
	var ce *commandError
	var ee *exec.ExitError
	if !errors.As(err, &ce) || !errors.As(err, &ee) || !ee.Exited() {
		return full
	}
	reason := sbatchReason(hide(ce.stderr))
	if reason == "" {
		return full
	}
	if unreachable(reason) {
		return &qm.Unreachable{Reason: reason, Err: full}
	}
	return &qm.Refused{Reason: reason, Err: full}
}

// unreachable reports whether sbatch's reason says that it never reached slurmctld, so nothing
// was submitted: a refused connection (a controller restarting, failing over, or down), or a
// backup controller in standby. A send or receive that timed out is not taken for one: the job
// may have been submitted.
func unreachable(reason string) bool {
	for _, s := range []string{"Unable to contact slurm controller", "backup controller in standby mode"} {
		if strings.Contains(reason, s) {
			return true
		}
	}
	return false
}

// sbatchReason is the line of sbatch's standard error that says why: the first error, else the
// first line that is neither blank nor a warning; its "sbatch: error: " prefix removed.
func sbatchReason(stderr string) string {
	var first string
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "sbatch: error:"); ok {
			if rest = strings.TrimSpace(rest); rest != "" {
				return rest
			}
			continue
		}
		if first == "" && line != "" && !strings.HasPrefix(line, "sbatch: warning:") {
			first = line
		}
	}
	return strings.TrimSpace(strings.TrimPrefix(first, "sbatch:"))
}

// environ is the environment of Slurm commands: a few basics from the service's own, then Env.
func (b *Backend) environ() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "TZ", "SLURM_CONF"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, b.cfg.Env...)
}

// parseKeyValues reads scontrol's one-line Key=Value output. A word without a key continues the
// value before it (a value with spaces).
func parseKeyValues(s string) map[string]string {
	kv := map[string]string{}
	key := ""
	for _, f := range strings.Fields(s) {
		if k, v, ok := strings.Cut(f, "="); ok && keyRE.MatchString(k) {
			key = k
			kv[key] = v
			continue
		}
		if key != "" {
			kv[key] += " " + f
		}
	}
	return kv
}

var keyRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_:/]*$`)

// firstHost is the first node of a Slurm host list: gpu01 of "gpu01,gpu02" or "gpu[01-02]".
func firstHost(nodes string) string {
	n := strings.SplitN(nodes, ",", 2)[0]
	if i := strings.IndexByte(n, '['); i >= 0 {
		inner := strings.TrimSuffix(n[i+1:], "]")
		inner = strings.SplitN(strings.SplitN(inner, ",", 2)[0], "-", 2)[0]
		return n[:i] + inner
	}
	return n
}

// clip shortens what Slurm printed to at most 300 bytes for a message, cut between letters.
func clip(s string) string {
	if len(s) <= 300 {
		return s
	}
	n := 300
	for n > 0 && !utf8.RuneStart(s[n]) { // between letters, never inside one
		n--
	}
	return s[:n] + "…"
}
