package slurm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// SqueueJob is the part of one job in squeue --json that the backend reads. It reads the
// OpenAPI v0.0.38 shape of Slurm 22.05 (job_state a string, time_limit minutes, exit_code a
// number) and the later one (job_state a list, numbers as {set, infinite, number}).
type SqueueJob struct {
	JobID       string
	Name        string
	Comment     string
	State       string // PENDING, RUNNING, COMPLETED, CANCELLED, TIMEOUT, FAILED, NODE_FAIL, …
	Reason      string // state_reason: why it waits (Resources, Priority) or None
	Nodes       string
	Partition   string
	Account     string
	TRESPerNode string // tres_per_node, e.g. gres:gpu:h100:2 (22.05) or gres/gpu:h100=2
	TimeLimit   time.Duration
	ExitCode    string // "0", "3", "signal 15"; empty when unknown
}

type squeueOutput struct {
	Errors []json.RawMessage `json:"errors"`
	Jobs   []struct {
		JobID       json.RawMessage `json:"job_id"`
		Name        string          `json:"name"`
		Comment     string          `json:"comment"`
		JobState    json.RawMessage `json:"job_state"`
		StateReason string          `json:"state_reason"`
		Nodes       string          `json:"nodes"`
		Partition   string          `json:"partition"`
		Account     string          `json:"account"`
		TRESPerNode string          `json:"tres_per_node"`
		TimeLimit   json.RawMessage `json:"time_limit"`
		ExitCode    json.RawMessage `json:"exit_code"`
	} `json:"jobs"`
}

// ParseSqueue reads squeue --json output.
func ParseSqueue(data []byte) ([]SqueueJob, error) {
	var out squeueOutput
	if err := json.Unmarshal(data, &out); err != nil {
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
			State:       firstString(j.JobState),
			Reason:      j.StateReason,
			Nodes:       j.Nodes,
			Partition:   j.Partition,
			Account:     j.Account,
			TRESPerNode: j.TRESPerNode,
		}
		if m, ok := number(j.TimeLimit); ok && m > 0 {
			sj.TimeLimit = time.Duration(m) * time.Minute
		}
		sj.ExitCode = exitCode(j.ExitCode)
		jobs = append(jobs, sj)
	}
	return jobs, nil
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

// job maps a Slurm job to the domain's view of it.
func (sj SqueueJob) job(lease qm.LeaseID) qm.Job {
	j := qm.Job{Lease: lease, Ref: sj.JobID, TimeLimit: sj.TimeLimit}
	state := strings.ToUpper(strings.TrimSpace(sj.State))
	reason := sj.Reason
	if reason == "None" || reason == "(null)" {
		reason = ""
	}
	switch state {
	case "PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD":
		j.State, j.Reason = qm.JobPending, pendingReason(reason)
	case "RUNNING", "SUSPENDED", "CONFIGURING", "RESIZING", "SIGNALING", "STAGE_OUT":
		j.State, j.Node = qm.JobRunning, sj.Nodes
	case "COMPLETED":
		j.State = qm.JobCompleted
		if sj.ExitCode != "" {
			j.Reason = "exit code " + sj.ExitCode
		}
	case "CANCELLED":
		j.State = qm.JobCancelled
	case "TIMEOUT", "DEADLINE":
		j.State = qm.JobTimeout
	case "FAILED", "OUT_OF_MEMORY", "SPECIAL_EXIT":
		j.State = qm.JobFailed
		j.Reason = strings.ToLower(strings.ReplaceAll(state, "_", " "))
		if sj.ExitCode != "" {
			j.Reason = "exit code " + sj.ExitCode
		}
		if state == "OUT_OF_MEMORY" {
			j.Reason = "it ran out of memory"
		}
		if reason != "" && reason != "NonZeroExitCode" {
			j.Reason += " (" + reason + ")"
		}
	case "NODE_FAIL":
		j.State, j.Reason = qm.JobFailed, "its node failed (NODE_FAIL)"
	case "BOOT_FAIL":
		j.State, j.Reason = qm.JobFailed, "its node did not boot (BOOT_FAIL)"
	case "PREEMPTED":
		j.State, j.Reason = qm.JobFailed, "a higher-priority job preempted it"
	case "REVOKED":
		j.State, j.Reason = qm.JobFailed, "another cluster of the federation ran it (REVOKED)"
	default: // COMPLETING and anything new: wait for its end state
		j.State = qm.JobEnding
	}
	return j
}

// pendingReason says in words why Slurm holds a job, keeping Slurm's own word for searching its
// documentation; "" when Slurm gives none.
func pendingReason(reason string) string {
	switch reason {
	case "":
		return ""
	case "Resources":
		return "the GPUs it asks for are in use (Slurm: Resources)"
	case "Priority":
		return "jobs ahead of it in Slurm's queue (Slurm: Priority)"
	case "BeginTime":
		return "its start time has not come (Slurm: BeginTime)"
	}
	return "Slurm: " + reason
}
