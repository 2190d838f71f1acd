package slurm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/hostlist"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// SqueueJob is the part of one job in squeue --json that the backend reads. It reads the
// OpenAPI v0.0.38 shape of Slurm 22.05 (job_state a string, time_limit minutes, exit_code a
// number) and the later one (job_state a list, numbers as {set, infinite, number}).
type SqueueJob struct {
	JobID   string
	Name    string
	Comment string
	State   string // PENDING, RUNNING, COMPLETED, CANCELLED, TIMEOUT, FAILED, NODE_FAIL, …
	Reason  string // state_reason: why it waits (Resources, Priority) or None
	// Description is state_description, Slurm's sentence where the reason alone misleads: a job
	// whose nodes are all drained waits for Resources, "Nodes required for job are DOWN, DRAINED
	// or reserved for jobs in higher priority partitions".
	Description string
	Nodes       string // Slurm's host list, e.g. gpu[01-02]
	Partition   string
	Account     string
	TRESPerNode string // tres_per_node, e.g. gres:gpu:h100:2 (22.05) or gres/gpu:h100=2
	TimeLimit   time.Duration
	ExitCode    string // "0", "3", "signal 15"; empty when unknown
	// StartTime and EndTime are Slurm's: for a pending job when it expects to start it, for a
	// running one when its time limit ends it; zero when unset.
	StartTime, EndTime time.Time
	// EligibleTime is when Slurm lets a pending job start at the earliest (its begin time; a
	// requeued job's is a while after the requeue); zero when unset. Restarts counts the times the
	// job was requeued.
	EligibleTime time.Time
	Restarts     int
	// loc is the time zone a reason writes times in (the policy's); UTC when nil.
	loc *time.Location
	// StdOut is the job's --output file, its %j, %x, %u, %A, %a and %N filled in; empty when
	// it has a pattern this backend does not fill.
	StdOut string
	// GRESDetail is the GRES a job holds on each of its nodes, e.g. "gpu:h100:2(IDX:0-1)".
	GRESDetail []string
	// ArrayJobID is the job id of the array this job is a task of (the id sbatch printed), and
	// ArrayTaskID the task's index ("" where Slurm gives none, as for tasks not started yet);
	// both empty for a job that is not an array's.
	ArrayJobID, ArrayTaskID string
}

type squeueOutput struct {
	Errors []json.RawMessage `json:"errors"`
	Jobs   []struct {
		JobID       json.RawMessage `json:"job_id"`
		Name        string          `json:"name"`
		Comment     string          `json:"comment"`
		JobState    json.RawMessage `json:"job_state"`
		StateReason string          `json:"state_reason"`
		StateDesc   string          `json:"state_description"`
		Nodes       string          `json:"nodes"`
		Partition   string          `json:"partition"`
		Account     string          `json:"account"`
		TRESPerNode string          `json:"tres_per_node"`
		GRESDetail  []string        `json:"gres_detail"`
		TimeLimit   json.RawMessage `json:"time_limit"`
		ExitCode    json.RawMessage `json:"exit_code"`
		StartTime   json.RawMessage `json:"start_time"`
		EndTime     json.RawMessage `json:"end_time"`
		Eligible    json.RawMessage `json:"eligible_time"`
		RestartCnt  json.RawMessage `json:"restart_cnt"`
		StdOut      string          `json:"standard_output"`
		UserName    string          `json:"user_name"`
		ArrayJobID  json.RawMessage `json:"array_job_id"`
		ArrayTaskID json.RawMessage `json:"array_task_id"`
	} `json:"jobs"`
}

// ParseSqueue reads squeue --json output.
func ParseSqueue(data []byte) ([]SqueueJob, error) {
	var out squeueOutput
	if err := json.Unmarshal(data, &out); err != nil {
		// A value of another type names the whole job record's Go type: say only where it was.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("slurm: squeue --json: a %s where the field %s takes another type", te.Value, clip(te.Field))
		}
		return nil, fmt.Errorf("slurm: squeue --json: %w", err)
	}
	if len(out.Errors) > 0 && len(out.Jobs) == 0 {
		return nil, fmt.Errorf("slurm: squeue --json reported errors: %s", clip(string(bytes.Join(rawList(out.Errors), []byte(", ")))))
	}
	jobs := make([]SqueueJob, 0, len(out.Jobs))
	for _, j := range out.Jobs {
		id, _ := number(j.JobID)
		sj := SqueueJob{
			JobID:       strconv.FormatInt(id, 10),
			Name:        j.Name,
			Comment:     j.Comment,
			State:       jobState(j.JobState),
			Reason:      j.StateReason,
			Description: j.StateDesc,
			Nodes:       j.Nodes,
			Partition:   j.Partition,
			Account:     j.Account,
			TRESPerNode: j.TRESPerNode,
			GRESDetail:  j.GRESDetail,
		}
		// Slurm 22.05 prints INFINITE as 4294967295 minutes, more than a Duration holds: a limit
		// that large is no limit.
		if m, ok := number(j.TimeLimit); ok && m > 0 && m <= math.MaxInt64/int64(time.Minute) {
			sj.TimeLimit = time.Duration(m) * time.Minute
		}
		sj.ExitCode = exitCode(j.ExitCode)
		sj.StartTime, sj.EndTime = unixTime(j.StartTime), unixTime(j.EndTime)
		sj.EligibleTime = unixTime(j.Eligible)
		if n, ok := number(j.RestartCnt); ok && n > 0 && n < math.MaxInt32 {
			sj.Restarts = int(n)
		}
		arrayJob, _ := number(j.ArrayJobID)
		arrayTask, isTask := number(j.ArrayTaskID)
		if arrayJob > 0 {
			sj.ArrayJobID = strconv.FormatInt(arrayJob, 10)
			if isTask && arrayTask >= 0 && arrayTask < 4294967294 {
				sj.ArrayTaskID = strconv.FormatInt(arrayTask, 10)
			}
		}
		sj.StdOut = expandOutput(j.StdOut, sj, j.UserName, arrayJob, arrayTask, isTask && arrayJob > 0)
		jobs = append(jobs, sj)
	}
	return jobs, nil
}

// unixTime reads seconds since 1970 (a number or {set, number}); zero when unset or 0.
func unixTime(r json.RawMessage) time.Time {
	if n, ok := number(r); ok && n > 0 {
		return time.Unix(n, 0).UTC()
	}
	return time.Time{}
}

// expandOutput fills in the patterns of an --output file name that squeue prints as given: %j
// (job id), %x (name), %u (user), %A and %a (array job and task), %N (first node), %%. A name
// with any other pattern gives "".
func expandOutput(pattern string, sj SqueueJob, user string, arrayJob, arrayTask int64, isArray bool) string {
	if pattern == "" || !strings.HasPrefix(pattern, "/") {
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		if pattern[i] != '%' {
			b.WriteByte(pattern[i])
			continue
		}
		if i+1 == len(pattern) {
			return ""
		}
		i++
		switch pattern[i] {
		case '%':
			b.WriteByte('%')
		case 'j':
			b.WriteString(sj.JobID)
		case 'x':
			b.WriteString(sj.Name)
		case 'u':
			b.WriteString(user)
		case 'N':
			b.WriteString(firstHost(sj.Nodes))
		case 'A':
			if !isArray {
				b.WriteString(sj.JobID)
			} else {
				b.WriteString(strconv.FormatInt(arrayJob, 10))
			}
		case 'a':
			if !isArray {
				b.WriteString("4294967294") // Slurm's NO_VAL for a job that is not an array
			} else {
				b.WriteString(strconv.FormatInt(arrayTask, 10))
			}
		default:
			return ""
		}
	}
	return b.String()
}

func rawList(rs []json.RawMessage) [][]byte {
	out := make([][]byte, len(rs))
	for i, r := range rs {
		out[i] = r
	}
	return out
}

// number reads 42, or {"set": true, "infinite": false, "number": 42}; ok is false for unset,
// infinite or anything else.
func number(r json.RawMessage) (int64, bool) {
	var n int64
	if json.Unmarshal(r, &n) == nil {
		return n, true
	}
	var o struct {
		Set      bool  `json:"set"`
		Infinite bool  `json:"infinite"`
		Number   int64 `json:"number"`
	}
	if json.Unmarshal(r, &o) == nil && o.Set && !o.Infinite {
		return o.Number, true
	}
	return 0, false
}

// firstString reads "RUNNING" or ["RUNNING", "COMPLETING"].
func firstString(r json.RawMessage) string {
	var s string
	if json.Unmarshal(r, &s) == nil {
		return s
	}
	var l []string
	if json.Unmarshal(r, &l) == nil && len(l) > 0 {
		return l[0]
	}
	return ""
}

// jobState reads a job's state: "RUNNING", or the newer list of its state and flags,
// ["RUNNING", "STOPPED"], where a running job stopped by a SIGSTOP reads STOPPED, as 22.05 says.
func jobState(r json.RawMessage) string {
	state := firstString(r)
	var l []string
	if state == "RUNNING" && json.Unmarshal(r, &l) == nil {
		for _, f := range l[1:] {
			if f == "STOPPED" {
				return f
			}
		}
	}
	return state
}

// exitCode reads 768 (a wait status: exit code 3), or {"status": ["SIGNALED"], "return_code": {...}, "signal": {...}}.
func exitCode(r json.RawMessage) string {
	if len(r) == 0 {
		return ""
	}
	if n, ok := number(r); ok { // 22.05: the raw wait status
		if sig := n & 0x7f; sig != 0 {
			return "signal " + strconv.FormatInt(sig, 10)
		}
		return strconv.FormatInt(n>>8, 10)
	}
	var o struct {
		ReturnCode json.RawMessage `json:"return_code"`
		Signal     struct {
			ID   json.RawMessage `json:"id"`
			Name string          `json:"name"`
		} `json:"signal"`
	}
	if json.Unmarshal(r, &o) != nil {
		return ""
	}
	if o.Signal.Name != "" {
		return "signal " + o.Signal.Name
	}
	if n, ok := number(o.ReturnCode); ok {
		return strconv.FormatInt(n, 10)
	}
	return ""
}

// job maps a Slurm job to the domain's view of it. An ended job's reason gives Slurm's own state
// and reason besides the exit code: "exit code 127 (Slurm: FAILED, NonZeroExitCode)".
func (sj SqueueJob) job(lease qm.LeaseID) qm.Job {
	j := qm.Job{Lease: lease, Ref: sj.JobID, TimeLimit: sj.TimeLimit}
	state := strings.ToUpper(strings.TrimSpace(sj.State))
	reason := sj.Reason
	if reason == "None" || reason == "(null)" {
		reason = ""
	}
	slurmWords := func() string {
		w := "Slurm: " + state
		if reason != "" {
			w += ", " + reason
		}
		return w
	}
	ended := func(s qm.JobState) {
		j.State, j.Node, j.ExitCode = s, nodeList(sj.Nodes), sj.ExitCode
		j.StartedAt, j.EndedAt = sj.StartTime, sj.EndTime
	}
	switch state {
	case "PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD":
		j.State, j.Reason = qm.JobPending, pendingReason(reason, sj.Description)
		if reason == "BeginTime" {
			if w := sj.heldUntil(); w != "" {
				j.Reason = w
			}
		}
		if why := neverStarts(reason, sj); why != "" {
			// It would wait for ever, holding its lease's quota: a failed job whose pending job
			// the service cancels.
			j.State, j.Held = qm.JobFailed, true
			j.Reason = "Slurm will never start it: " + why + " (" + slurmWords() + ")"
		}
	case "RUNNING", "CONFIGURING", "RESIZING", "SIGNALING", "STAGE_OUT":
		j.State, j.Node, j.StartedAt = qm.JobRunning, nodeList(sj.Nodes), sj.StartTime
		j.LimitEnd = sj.EndTime // counted from this run's start, suspended time left out
	case "SUSPENDED", "STOPPED":
		// scontrol suspend, gang scheduling, preemption by suspension (SUSPENDED) or a SIGSTOP
		// (scancel -s STOP: STOPPED): the job keeps its GPUs, its processes do not run.
		j.State, j.Node, j.StartedAt, j.Suspended = qm.JobRunning, nodeList(sj.Nodes), sj.StartTime, true
		j.Reason = slurmWords()
	case "COMPLETED":
		ended(qm.JobCompleted)
		j.Reason = qm.ExitWords(sj.ExitCode)
	case "CANCELLED":
		ended(qm.JobCancelled)
	case "TIMEOUT":
		ended(qm.JobTimeout)
	case "DEADLINE":
		// sbatch --deadline passed: Slurm ended the job (or took it out of its queue) then,
		// whatever its time limit.
		ended(qm.JobTimeout)
		j.Reason = "its deadline passed (" + slurmWords() + ")"
	case "FAILED", "OUT_OF_MEMORY", "SPECIAL_EXIT":
		ended(qm.JobFailed)
		var what []string
		if state == "OUT_OF_MEMORY" {
			what = append(what, "it ran out of memory")
		}
		if w := qm.ExitWords(sj.ExitCode); w != "" {
			what = append(what, w)
		}
		j.Reason = slurmWords()
		if len(what) > 0 {
			j.Reason = strings.Join(what, ", ") + " (" + j.Reason + ")"
		}
	case "NODE_FAIL":
		ended(qm.JobFailed)
		j.Reason = "its node failed (" + slurmWords() + ")"
	case "BOOT_FAIL":
		ended(qm.JobFailed)
		j.Reason = "its node did not boot (" + slurmWords() + ")"
	case "PREEMPTED":
		ended(qm.JobFailed)
		j.Reason = "a higher-priority job preempted it (" + slurmWords() + ")"
	case "REVOKED":
		ended(qm.JobFailed)
		j.Reason = "another cluster of the federation ran it (" + slurmWords() + ")"
	default: // COMPLETING and anything new: wait for its end state
		j.State = qm.JobEnding
	}
	if j.State.Ended() && j.StartedAt.After(j.EndedAt) && !j.EndedAt.IsZero() {
		j.StartedAt = j.EndedAt // a job cancelled before it started: Slurm's start is its expected one
	}
	return j
}

// arrayJob maps the records of one job array (Slurm splits an array into a job per task it
// starts, the array's own id going to the task it starts last) to one job under the array's id,
// the id sbatch printed: running while any task runs (on the nodes of those that run), and
// suspended while every task that holds GPUs is suspended; waiting while none runs and some
// wait, ending while one ends, and once every task has ended, ended as the worst of them: failed
// (the first failed task's reason, naming the task), timed out, cancelled, or completed. tasks
// are the records with their jobs, in any order.
func arrayJob(ref string, tasks []SqueueJob, jobs []qm.Job) qm.Job {
	order := make([]int, len(tasks))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return taskLess(tasks[order[a]].ArrayTaskID, tasks[order[b]].ArrayTaskID) })
	has := func(states ...qm.JobState) []int {
		var out []int
		for _, i := range order {
			for _, s := range states {
				if jobs[i].State == s {
					out = append(out, i)
				}
			}
		}
		return out
	}
	out := qm.Job{Lease: jobs[order[0]].Lease, Ref: ref}
	for _, i := range order {
		if out.TimeLimit == 0 {
			out.TimeLimit = jobs[i].TimeLimit
		}
	}
	earliest := func(idx []int) time.Time {
		var first time.Time
		for _, i := range idx {
			if t := jobs[i].StartedAt; !t.IsZero() && (first.IsZero() || t.Before(first)) {
				first = t
			}
		}
		return first
	}
	nodes := func(idx []int) string {
		var names []string
		for _, i := range idx {
			for _, n := range strings.Split(jobs[i].Node, ",") {
				if n != "" && !contains(names, n) {
					names = append(names, n)
				}
			}
		}
		return strings.Join(names, ",")
	}
	if run := has(qm.JobRunning); len(run) > 0 {
		out.State, out.Node, out.StartedAt = qm.JobRunning, nodes(run), earliest(run)
		if len(run) == 1 {
			out.GPUIndex = jobs[run[0]].GPUIndex
		}
		// Suspended (scontrol suspend on the array, gang scheduling, a SIGSTOP) when none of
		// its tasks that hold GPUs runs: the tasks keep their GPUs, and nothing of it runs.
		out.Suspended = true
		for _, i := range run {
			out.Suspended = out.Suspended && jobs[i].Suspended
		}
		if out.Suspended {
			out.Reason = jobs[run[0]].Reason
		}
		return out
	}
	if wait := has(qm.JobPending); len(wait) > 0 {
		out.State, out.Reason = qm.JobPending, jobs[wait[0]].Reason
		return out
	}
	if has(qm.JobEnding) != nil {
		out.State = qm.JobEnding
		return out
	}
	all := has(qm.JobFailed, qm.JobTimeout, qm.JobCancelled, qm.JobCompleted)
	for _, i := range all {
		if t := jobs[i].EndedAt; t.After(out.EndedAt) {
			out.EndedAt = t
		}
	}
	out.Node, out.StartedAt = nodes(all), earliest(all)
	for _, i := range all {
		out.Held = out.Held || jobs[i].Held // tasks Slurm will never start: cancel them
	}
	for _, s := range []qm.JobState{qm.JobFailed, qm.JobTimeout, qm.JobCancelled, qm.JobCompleted} {
		if idx := has(s); len(idx) > 0 {
			j := jobs[idx[0]]
			out.State, out.ExitCode, out.Output, out.Reason = s, j.ExitCode, j.Output, j.Reason
			if s != qm.JobCompleted && tasks[idx[0]].ArrayTaskID != "" && len(tasks) > 1 {
				out.Reason = strings.TrimSuffix("array task "+tasks[idx[0]].ArrayTaskID+": "+j.Reason, ": ")
			}
			return out
		}
	}
	return out
}

// taskLess orders array task indexes numerically, those without one last.
func taskLess(a, b string) bool {
	if a == "" || b == "" {
		return a != "" && b == ""
	}
	x, _ := strconv.Atoi(a)
	y, _ := strconv.Atoi(b)
	return x < y
}

// nodeList writes a Slurm host list as the domain writes nodes: names joined by commas
// ("gpu[01-02]" is "gpu01,gpu02"), so a lease's node compares with the inventory's.
func nodeList(hosts string) string {
	if hosts == "" || hosts == "(null)" {
		return ""
	}
	return strings.Join(hostlist.Expand(hosts), ",")
}

// neverStarts says in words why Slurm will never start a job pending for reason, a limit the job
// itself goes over (the partition's, or a per-job limit of its account or QOS), an account or
// QOS it may not use, a dependency that cannot be met; "" for a reason that clears by itself
// (other jobs end, the start time comes) or that someone chose (a hold). Slurm keeps such jobs
// pending where EnforcePartLimits does not refuse them at submission.
func neverStarts(reason string, sj SqueueJob) string {
	in := func(what, name string) string {
		if name == "" {
			return what
		}
		return what + " " + name
	}
	switch {
	case reason == "PartitionTimeLimit":
		limit := "its time limit"
		if sj.TimeLimit > 0 {
			limit += " (" + policy.FormatDuration(sj.TimeLimit) + ")"
		}
		return limit + " is longer than " + in("partition", sj.Partition) + " allows; a shorter lease can start"
	case reason == "PartitionNodeLimit":
		return "it asks for more or fewer nodes than " + in("partition", sj.Partition) + " allows"
	case reason == "InvalidAccount", reason == "AccountNotAllowed":
		return in("account", sj.Account) + " may not run jobs in " + in("partition", sj.Partition) + "; an administrator must add it"
	case reason == "InvalidQOS", reason == "QOSNotAllowed":
		return "its QOS may not run jobs in " + in("partition", sj.Partition) + "; an administrator must allow it"
	case reason == "DependencyNeverSatisfied":
		return "a job it depends on ended in a way it cannot start after"
	case reason == "BadConstraints":
		return "no node of " + in("partition", sj.Partition) + " has what it asks for"
	case strings.HasPrefix(reason, "QOSMin"), strings.Contains(reason, "PerJob"):
		// QOSMaxWallDurationPerJobLimit, AssocMaxWallDurationPerJobLimit, QOSMaxGRESPerJob…
		return "it asks for more than one job may have under a limit of " + in("account", sj.Account) + " or its QOS"
	}
	return ""
}

// heldUntil says until when Slurm holds back a job pending for BeginTime, in the policy's time
// zone: after a requeue Slurm lets the job start again only a while later. "" when Slurm gives no
// time.
func (sj SqueueJob) heldUntil() string {
	at := sj.EligibleTime
	if at.IsZero() {
		at = sj.StartTime
	}
	if at.IsZero() {
		return ""
	}
	loc := sj.loc
	if loc == nil {
		loc = time.UTC
	}
	who := "it"
	if sj.Restarts > 0 {
		who = "a requeued job"
	}
	return "Slurm holds " + who + " back until " + at.In(loc).Format("Mon 2 Jan 15:04 MST") + "; it starts then if GPUs are free (Slurm: BeginTime)"
}

// pendingReason says in words why Slurm holds a job, keeping Slurm's own word for searching its
// documentation; "" when Slurm gives none. The description (state_description, or scontrol's
// Reason with its spaces as underscores) tells a job whose nodes take no jobs (down, drained,
// reserved) from one that waits for other jobs to end: Slurm gives both the reason Resources.
func pendingReason(reason, description string) string {
	if d := strings.ReplaceAll(description, "_", " "); strings.Contains(d, "DOWN, DRAINED") || reason == "ReqNodeNotAvail" {
		return "the nodes it can run on take no jobs now: an administrator has drained them, or they are down or reserved (Slurm: " + reason + ")"
	}
	switch reason {
	case "":
		return ""
	case "Resources":
		return "the GPUs it asks for are in use (Slurm: Resources)"
	case "Priority":
		return "jobs ahead of it in Slurm's queue (Slurm: Priority)"
	case "BeginTime":
		return "its start time has not come (Slurm: BeginTime)"
	case "JobHeldAdmin":
		return "an administrator holds it; it waits until they release it (Slurm: JobHeldAdmin)"
	case "JobHeldUser":
		return "it is held (scontrol hold or requeuehold); it waits until it is released (Slurm: JobHeldUser)"
	}
	return "Slurm: " + reason
}

// gpuSlots is where each GPU type's devices lie among a node's GPUs: Slurm numbers a node's GPUs
// (IDX) across all their types, in the order of the node's GRES, while the inventory numbers
// each type's (each class's) GPUs from 0.
type gpuSlots map[string]struct{ first, count int } // by type ("" for untyped GPUs)

// gpuSlotsOf reads a node's GRES, e.g. "gpu:h100:8(S:0-1),gpu:l40s:4": h100 at 0-7, l40s at 8-11.
func gpuSlotsOf(gres string) gpuSlots {
	slots := gpuSlots{}
	next := 0
	for _, e := range splitOutside(gres, ',', '(', ')') {
		e = strings.TrimSpace(e)
		if i := strings.IndexByte(e, '('); i >= 0 {
			e = e[:i]
		}
		parts := strings.Split(e, ":")
		if parts[0] != "gpu" {
			continue
		}
		typ, count := "", 1
		switch len(parts) {
		case 1:
		case 2:
			if n, err := strconv.Atoi(parts[1]); err == nil {
				count = n
			} else {
				typ = parts[1]
			}
		default:
			typ = strings.Join(parts[1:len(parts)-1], ":")
			n, err := strconv.Atoi(parts[len(parts)-1])
			if err != nil {
				return nil
			}
			count = n
		}
		if _, dup := slots[typ]; dup || count < 0 {
			return nil
		}
		slots[typ] = struct{ first, count int }{next, count}
		next += count
	}
	return slots
}

// jobGPUs is the GPUs a running job holds on its one node, numbered as the inventory numbers
// its class's GPUs there, from gres_detail ("gpu:h100:2(IDX:0-1)"), the GRES the job asked for
// (its class's: "gpu:h100:2" counts the h100s from 0, an untyped "gpu:2" every GPU of the node)
// and the node's GPU slots; nil when Slurm does not say, for a job on several nodes, or when the
// numbers do not fit the node.
func jobGPUs(detail []string, asked string, slots gpuSlots) []int {
	if len(detail) != 1 || slots == nil {
		return nil
	}
	e := detail[0]
	open := strings.Index(e, "(IDX:")
	if open < 0 || !strings.HasSuffix(e, ")") {
		return nil
	}
	parts := strings.Split(e[:open], ":")
	if parts[0] != "gpu" {
		return nil
	}
	typ := ""
	if len(parts) > 2 {
		typ = strings.Join(parts[1:len(parts)-1], ":")
	}
	slot, ok := slots[typ]
	if !ok {
		return nil
	}
	if a := strings.Split(strings.Split(asked, ",")[0], ":"); len(a) <= 2 { // untyped: the node's numbers
		slot.first, slot.count = 0, 0
		for _, s := range slots {
			slot.count += s.count
		}
	}
	var out []int
	seen := map[int]bool{} // an index named twice is a detail that cannot be trusted
	for _, r := range strings.Split(e[open+len("(IDX:"):len(e)-1], ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil
			}
		}
		for g := a; g <= b; g++ {
			if g < slot.first || g >= slot.first+slot.count || len(out) >= slot.count || seen[g] {
				return nil
			}
			seen[g] = true
			out = append(out, g-slot.first)
		}
	}
	return out
}
