package slurm_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/slurm"
	"github.com/acme/quartermaster/internal/workload"
)

// fakeSbatch puts an sbatch on PATH that prints stderr to its standard error and exits 1, as
// sbatch does when Slurm refuses a job.
func fakeSbatch(t *testing.T, stderr string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "stderr.txt"), []byte(stderr), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\ncat >/dev/null\ncat '" + filepath.Join(dir, "stderr.txt") + "' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "sbatch"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestSbatchRefusalReason: when sbatch refuses a job, Start's error carries Slurm's reason as the
// user should read it (qm.Refused): the first error line, without "sbatch: error:"; the error
// itself, for the log, keeps all sbatch said.
func TestSbatchRefusalReason(t *testing.T) {
	for _, c := range []struct{ name, stderr, want string }{
		{"account", "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified\n",
			"Batch job submission failed: Invalid account or account/partition combination specified"},
		{"warning first", "sbatch: warning: can't honor --ntasks-per-node set to 1\n\nsbatch: error: invalid partition specified: train\nsbatch: error: Batch job submission failed: Invalid partition name specified\n",
			"invalid partition specified: train"},
		{"no prefix", "\n  Something odd happened\nsecond line\n", "Something odd happened"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fakeSbatch(t, c.stderr)
			b, err := slurm.New(slurm.Config{Policy: examplePolicy(t), Catalog: testCatalog(t), Workload: workload.Settings{DefaultTemplate: "sleeper"},
				StartWait: 50 * time.Millisecond, Poll: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			l := &qm.Lease{ID: 9, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 2, Duration: time.Hour}
			_, err = b.Start(context.Background(), l)
			var refused *qm.Refused
			if !errors.As(err, &refused) {
				t.Fatalf("start: %v, not a refusal", err)
			}
			if refused.Reason != c.want {
				t.Errorf("reason %q, want %q", refused.Reason, c.want)
			}
			if !strings.Contains(err.Error(), "L-9") || !strings.Contains(err.Error(), strings.TrimSpace(strings.Split(strings.TrimSpace(c.stderr), "\n")[0])) {
				t.Errorf("the error for the log %q lost what sbatch said", err)
			}
		})
	}
}

// TestSbatchRefusalHidesToken: an interactive workspace's token never reaches the reason, even
// where sbatch quotes the script's line that holds it.
func TestSbatchRefusalHidesToken(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\nline=$(grep QM_TOKEN=)\necho \"sbatch: error: bad line: $line\" >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "sbatch"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	cat := catalogWith(t, map[string]string{"notebook.yaml": `name: notebook
version: 1
title: Notebook
description: An interactive workspace with a token, for tests.
tags: [test]
kind: interactive
resources: {gpus: 1, max_gpus: 8, cpus_per_gpu: 1, memory_gib_per_gpu: 1}
connect: {protocol: http, port: 8888, path: /lab, token: true, token_param: token}
example: ""
parameters: []
run: |
  exec sleep 600
`})
	b, err := slurm.New(slurm.Config{Policy: examplePolicy(t), Catalog: cat, Workload: workload.Settings{DefaultTemplate: "sleeper"},
		StartWait: 50 * time.Millisecond, Poll: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Start(context.Background(), &qm.Lease{ID: 9, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 2, Duration: time.Hour, Template: "notebook"})
	var refused *qm.Refused
	if !errors.As(err, &refused) {
		t.Fatalf("start: %v", err)
	}
	hex := regexp.MustCompile(`[0-9a-f]{32}`)
	if !strings.Contains(refused.Reason, "QM_TOKEN=") || hex.MatchString(refused.Reason) || hex.MatchString(err.Error()) {
		t.Errorf("reason %q, error %q", refused.Reason, err)
	}
}

// TestSbatchRefusalOnSlurm: on the test cluster, a lease whose class names a partition Slurm
// does not have is refused by sbatch; the requester reads Slurm's reason in one line, and the
// lease is failed with it.
func TestSbatchRefusalOnSlurm(t *testing.T) {
	e := newEnv(t)
	for _, c := range e.svc.Policy.Classes {
		if c.Name == "train" {
			c.Slurm.Partition = "nosuch"
		}
	}
	out, err := e.svc.Request(context.Background(), qm.LeaseRequest{User: "alice@acme.example", Team: "vision", GPUs: 1, Class: "train", Duration: time.Hour})
	if err == nil {
		t.Fatalf("a lease on a partition Slurm lacks started: %+v", out.Lease)
	}
	if out == nil || out.Lease == nil {
		t.Fatalf("no lease was made: %v", err)
	}
	msg := qm.ErrorMessage(err)
	if !strings.Contains(msg, "nosuch") || strings.Contains(msg, "sbatch: error") || strings.Contains(msg, "\n") || !strings.Contains(msg, "platform admins") {
		t.Errorf("the requester reads %q", msg)
	}
	l, gerr := e.svc.Get(context.Background(), out.Lease.ID)
	if gerr != nil {
		t.Fatal(gerr)
	}
	if l.State != qm.Failed || !strings.Contains(l.Reason, "nosuch") {
		t.Errorf("lease %s: %s, %q", l.ID, l.State, l.Reason)
	}
}
