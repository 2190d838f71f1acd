package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/slurm/slurmtest"
)

// drainedPolicy is a policy of its own names: partitions made for the test, L40S for notebooks
// and exclusive H100 nodes, euros, a New Zealand time zone.
const drainedPolicy = `organization: Helios Lab
currency: EUR
timezone: Pacific/Auckland
classes:
  - name: nb
    description: Shared L40S for notebooks
    sku: L40S
    gpu_memory_gib: 48
    price_per_gpu_hour: 1.20
    isolation: shared
    max_gpus: 2
    max_duration: 6h
    idle_timeout: 40m
    idle_grace: 10m
    capacity_share: 0.2
    slurm: {partition: PART_NB, gres: "gpu:l40s"}
  - name: hopper
    description: Exclusive H100 nodes
    sku: H100
    gpu_memory_gib: 80
    price_per_gpu_hour: 4.10
    isolation: exclusive
    max_gpus: 8
    max_duration: 48h
    idle_timeout: 2h
    idle_grace: 30m
    slurm: {partition: PART_HOP, gres: "gpu:h100"}
default_quota: {gpus: {nb: 1, hopper: 0}, gpu_hours_per_week: 10}
teams:
  - name: astro
    idp_groups: [g-astro]
    budget_owners: [lead@helios.example]
    channel: "#astro"
    quota: {gpus: {nb: 4, hopper: 8}, gpu_hours_per_week: 400}
    data_classes: [open]
    storage: {path: STORAGE, quota_gib: 100}
exceptions:
  - name: big
    when: request.gpus > class.max_gpus
    why: More GPUs than the class gives without approval
approvals:
  timeout: 12h
  fallback_approvers: [ops@helios.example]
reports:
  showback: {schedule: "MON 08:00", channel: "#showback"}
backend: slurm
directory:
  - {user: ria@helios.example, groups: [g-astro]}
  - {user: lead@helios.example, groups: [g-astro]}
  - {user: ops@helios.example, groups: [ops]}
`

// With every node of the cluster drained by an administrator, the catalog, an estimate and a
// request's reply say that no node of a class takes jobs now, rather than that the scheduler places leases itself
// and that no wait is expected: a request would wait in Slurm's queue until the node is resumed.
func TestConsoleOnSlurmWithEveryNodeDrained(t *testing.T) {
	conf := slurmtest.Cluster(t)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	suffix := hex.EncodeToString(b)
	scontrol := func(args ...string) {
		t.Helper()
		cmd := exec.Command("scontrol", args...)
		cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("scontrol %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	host, _ := os.Hostname()
	node, _, _ := strings.Cut(host, ".")
	nb, hop := "qmt-nb-"+suffix, "qmt-hop-"+suffix
	for _, p := range []string{nb, hop} {
		scontrol("create", "PartitionName="+p, "Nodes="+node, "MaxTime=INFINITE", "State=UP")
		p := p
		t.Cleanup(func() { scontrol("delete", "PartitionName="+p) })
	}
	scontrol("update", "nodename="+node, "state=drain", "reason=qm-test")
	t.Cleanup(func() { scontrol("update", "nodename="+node, "state=resume") })

	dir := t.TempDir()
	storage := filepath.Join(dir, "astro")
	if err := os.MkdirAll(storage, 0o755); err != nil {
		t.Fatal(err)
	}
	pol := strings.NewReplacer("PART_NB", nb, "PART_HOP", hop, "STORAGE", storage).Replace(drainedPolicy)
	polFile := filepath.Join(dir, "helios.yaml")
	if err := os.WriteFile(polFile, []byte(pol), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLURM_CONF", conf)
	t.Setenv("QM_SLURM_INSTANCE", "qmc"+suffix)
	t.Setenv("QM_RECONCILE_INTERVAL", "1s")
	t.Setenv("QM_DATA_DIR", t.TempDir())
	t.Setenv("QM_POLICY", polFile)
	t.Setenv("QM_DATABASE_URL", "")
	script := "ria@helios.example: /gpu catalog\nria@helios.example: /gpu estimate 1 nb 1h\nria@helios.example: /gpu estimate 8 hopper 1h\n" +
		"ria@helios.example: /gpu request 1 nb for 1h\nria@helios.example: /gpu release L-1\n"
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"console"}, strings.NewReader(script), &out, &errb); code != 0 {
		t.Fatalf("console exited %d: %s", code, errb.String())
	}
	got := out.String()
	for _, bad := range []string{"the scheduler's to say", "none expected", "GPUs are free now"} {
		if strings.Contains(got, bad) {
			t.Errorf("with every node drained, a reply says %q:\n%s", bad, got)
		}
	}
	if n := strings.Count(got, "no node of this class takes jobs now"); n < 5 {
		t.Errorf("the catalog (free and wait of both classes), the two estimates and the queued request say %d times that no node of the class takes jobs now; want at least 5:\n%s", n, got)
	}
	// The queued request's reply says its wait as the estimate does: "Predicted wait: no
	// estimate: …", not "Predicted wait no estimate: …".
	queued := ""
	for _, line := range strings.Split(got, "\n") {
		if strings.Contains(line, "L-1 is queued") {
			queued = line
		}
	}
	if !strings.Contains(queued, "Predicted wait: no estimate: no node of this class takes jobs now") {
		t.Errorf("the request made while every node is drained is not queued with its wait said as \"Predicted wait: no estimate: …\":\n%s", got)
	}
}
