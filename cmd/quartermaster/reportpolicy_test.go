package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ownPolicy is a policy with none of the example's names: its teams, classes, currency and zone.
const ownPolicy = `organization: Nordlicht Forschung
currency: EUR
timezone: Europe/Berlin
classes:
  - {name: notebook, description: Shared A10, sku: A10, gpu_memory_gib: 24, price_per_gpu_hour: 1.37, isolation: shared, max_gpus: 1, max_duration: 6h}
default_quota: {gpus: {notebook: 1}, gpu_hours_per_week: 10}
teams:
  - {name: genomik, idp_groups: [grp-genomik], budget_owners: [ute@nordlicht.example], quota: {gpus: {notebook: 2}, gpu_hours_per_week: 40}}
approvals: {timeout: 36h, fallback_approvers: [it@nordlicht.example]}
reports:
  showback: {schedule: "TUE 07:30", channel: "#gpu-kosten", dm_budget_owners: true}
backend: sim
directory:
  - {user: jan@nordlicht.example, groups: [grp-genomik]}
  - {user: ute@nordlicht.example, groups: [grp-genomik]}
sim:
  nodes:
    - {name: a10, count: 1, class: notebook, gpus: 4}
`

// A report asked for without a policy reads the database with the embedded example's: where the
// database was written under another policy (its leases are of teams and classes the example does
// not have), it is refused with a sentence that names --policy, not answered in the example's
// organization, currency and time zone with the classes and quotas of teams that are not there.
func TestReportWithoutThePolicyOfItsDatabaseIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "nordlicht.yaml")
	if err := os.WriteFile(file, []byte(ownPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	runConsoleAt(t, dir, "2026-11-24T09:00:00Z", "jan@nordlicht.example: /gpu request 1 notebook for 2h\n:advance 3h\n", "--policy", file)
	db := "sqlite:" + filepath.Join(dir, "quartermaster.db")
	base := []string{"report", "--db", db, "--now", "2026-12-01T12:00:00Z", "--week", "2026-W48"}
	out, stderr, code := runCLI(base...)
	if code != 2 || out != "" || !strings.Contains(stderr, "genomik") || !strings.Contains(stderr, "--policy") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("report without --policy: exit %d, %q, %q; want exit 2 and one line naming team genomik and --policy", code, out, stderr)
	}
	out, stderr, code = runCLI(append(base, "--policy", file)...)
	if code != 0 || !strings.HasPrefix(out, "Nordlicht Forschung GPU showback, 2026-W48") || !strings.Contains(out, "2.00 GPU-hours, 2.74 EUR") {
		t.Errorf("report --policy %s: exit %d, %s\n%s", file, code, stderr, out)
	}
}
