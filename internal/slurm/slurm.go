// Package slurm is the Slurm backend: every lease is a Slurm job, submitted, watched and
// cancelled through Slurm's own commands (sbatch --parsable, squeue --json, scontrol, scancel).
// The class gives the partition and GRES, the lease its time limit, the team its account (where
// accounting is on), and the job's comment carries the lease id (qm:L-42), so the service's
// reconcile pass can tell its jobs from everyone else's.
//
// Slurm places the jobs, so Inventory is nil: the service hands a lease over at once and learns
// what became of it from Jobs (qm.Watcher).
package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
)

// Defaults for Config fields left empty.
const (
	// DefaultInstance prefixes the lease id in job comments: qm:L-42.
	DefaultInstance = "qm"
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
	if strings.ContainsAny(cfg.Instance, ": \t\n") {
		return nil, fmt.Errorf("slurm: instance %q must not contain a colon or spaces", cfg.Instance)
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

// Inventory is nil: Slurm places the jobs.
func (b *Backend) Inventory() []qm.Node { return nil }

// Comment is the job comment that carries a lease id: INSTANCE:L-42.
func (b *Backend) Comment(id qm.LeaseID) string { return b.cfg.Instance + ":" + id.String() }

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
// (Queued, with Slurm's reason). A job that already ended is left to the reconcile pass.
func (b *Backend) Start(ctx context.Context, l *qm.Lease) (qm.Started, error) {
	w, err := workload.Render(b.cfg.Catalog, b.cfg.Policy, l, b.cfg.Workload)
	if err != nil {
		return qm.Started{}, err
	}
	// sbatch does not create the --output directory.
	if err := os.MkdirAll(w.JobDir, 0o755); err != nil {
		return qm.Started{}, fmt.Errorf("slurm: job directory of %s: %w", l.ID, err)
	}
	out, err := b.run(ctx, []byte(w.SlurmScript), "sbatch", "--parsable", "--comment="+b.Comment(l.ID), "--chdir="+w.JobDir)
	if err != nil {
		return qm.Started{}, fmt.Errorf("slurm: sbatch for %s: %w", l.ID, err)
	}
	ref, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	if _, err := strconv.ParseUint(ref, 10, 64); err != nil {
		return qm.Started{}, fmt.Errorf("slurm: sbatch for %s printed %q, not a job id", l.ID, clip(string(out)))
	}
	b.log.Info("submitted", "lease", l.ID, "job", ref, "template", w.Template.Name, "partition", w.Input.Slurm.Partition)
	connect := func(node string) string {
		if w.SlurmConnect == nil {
			return ""
		}
		return w.SlurmConnect.Address(node, w.Input.Token)
	}
	st := qm.Started{State: qm.Queued, Ref: ref, Connect: connect(qm.NodePlaceholder), Reason: "Slurm has not placed it yet"}
	deadline := time.Now().Add(b.cfg.StartWait)
	for {
		j, err := b.Job(ctx, ref)
		switch {
		case err != nil:
			b.log.Warn("scontrol show job", "job", ref, "err", err)
		case j.State == qm.JobRunning:
			st.State, st.Node, st.Connect, st.Reason = qm.Active, j.Node, connect(firstHost(j.Node)), ""
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

// Ping checks that slurmctld answers (scontrol ping), for the service's readiness check.
func (b *Backend) Ping(ctx context.Context) error {
	out, err := b.run(ctx, nil, "scontrol", "ping")
	if err == nil && strings.Contains(string(out), "DOWN") {
		err = errors.New(strings.TrimSpace(string(out)))
	}
	if err != nil {
		return fmt.Errorf("slurm: slurmctld does not answer scontrol ping: %w", err)
	}
	return nil
}

// Jobs lists this service's jobs that slurmctld knows: pending, running, and those that ended
// within its MinJobAge, through squeue --json.
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
	for _, sj := range all {
		id, ok := b.leaseOf(sj.Comment)
		if !ok {
			continue
		}
		jobs = append(jobs, sj.job(id))
	}
	return jobs, nil
}

// Job reads one job with scontrol show job -o, which answers for one job however many the
// cluster holds. Lease is left zero.
func (b *Backend) Job(ctx context.Context, ref string) (qm.Job, error) {
	out, err := b.run(ctx, nil, "scontrol", "show", "job", "-o", ref)
	if err != nil {
		return qm.Job{}, fmt.Errorf("slurm: scontrol show job %s: %w", ref, err)
	}
	kv := parseKeyValues(string(out))
	sj := SqueueJob{JobID: ref, State: kv["JobState"], Reason: kv["Reason"], Nodes: kv["NodeList"], Comment: kv["Comment"]}
	return sj.job(0), nil
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
		return stdout.Bytes(), fmt.Errorf("%w: %s", err, clip(strings.TrimSpace(stderr.String())))
	}
	return stdout.Bytes(), nil
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

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
