package qm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
)

// TestRefusedJobSaysWhy: when the scheduler refuses a lease's job, the user reads the
// scheduler's reason in one clean line and what to do, in the reply (and no failed notice besides);
// the lease's history keeps it too. Only the reason's first line reaches chat, without control
// characters and cut short when long.
func TestRefusedJobSaysWhy(t *testing.T) {
	svc, f, _, notes := schedService(t, qm.Started{State: qm.Queued})
	f.startErr = &qm.Refused{
		Reason: "Batch job submission failed: Invalid account or account/partition combination specified\x1b[31m\nsecret=hunter2\n",
		Err:    errors.New("slurm: sbatch for L-1: exit status 1: sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified"),
	}
	ctx := context.Background()
	out, err := svc.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", GPUs: 1, Class: "interactive", Duration: 0})
	if err == nil {
		t.Fatal("a refused job was not reported")
	}
	msg := qm.ErrorMessage(err)
	const why = "Invalid account or account/partition combination specified"
	if !strings.Contains(msg, why) || !strings.Contains(msg, "nothing is charged") || !strings.Contains(msg, "platform admins") {
		t.Errorf("reply %q does not say the scheduler's reason and what to do", msg)
	}
	if strings.ContainsAny(msg, "\n\x1b") || strings.Contains(msg, "hunter2") || strings.Contains(msg, "[31m") {
		t.Errorf("reply %q carries more than the reason's clean first line", msg)
	}
	l := mustGet(t, svc, out.Lease.ID)
	if l.State != qm.Failed || !strings.Contains(l.Reason, why) || strings.ContainsAny(l.Reason, "\n\x1b") {
		t.Errorf("lease %s: %s, reason %q", l.ID, l.State, l.Reason)
	}
	// The reply says it all: no failed notice tells the requester the same a second time.
	if failed := notes.Of(qm.NoticeFailed, l.ID); len(failed) != 0 {
		t.Errorf("after the reply the requester was also sent failed notices %+v", failed)
	}

	// A long reason is cut; an error that is not the scheduler's refusal shows no details.
	f.startErr = &qm.Refused{Reason: strings.Repeat("x", 5000), Err: errors.New("boom")}
	if _, err := svc.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", GPUs: 1, Class: "interactive"}); err == nil || len(qm.ErrorMessage(err)) > 600 {
		t.Errorf("long reason: %d characters", len(qm.ErrorMessage(err)))
	}
	f.startErr = errors.New("slurm: sbatch for L-3: exit status 1: connection refused to 10.0.0.7")
	_, err = svc.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", GPUs: 1, Class: "interactive"})
	if msg := qm.ErrorMessage(err); err == nil || strings.Contains(msg, "10.0.0.7") || !strings.Contains(msg, "could not be started") {
		t.Errorf("plain backend error: %q", msg)
	}
}

// TestReasonLine: a scheduler's text becomes one short line fit for chat.
func TestReasonLine(t *testing.T) {
	for in, want := range map[string]string{
		"\n\n  Invalid account\r\nmore":           "Invalid account",
		"bad\x00 \u202eword\ttab":                 "bad word tab",
		"\x1b[1;31mred\x1b[0m \x1b]0;title\x07ok": "red ok",
		"":                                 "",
		" \n\t ":                           "",
		strings.Repeat("é", 300) + "\nxyz": strings.Repeat("é", 200) + "…",
	} {
		if got := qm.ReasonLine(in); got != want {
			t.Errorf("ReasonLine(%q) = %q, want %q", in, got, want)
		}
	}
}
