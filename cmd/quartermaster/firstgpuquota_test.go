package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// harborPolicy has none of the example's names: its teams, classes, currency and zone.
const harborPolicy = `organization: Harbor Lab
currency: NZD
timezone: Pacific/Auckland
classes:
  - {name: slab, description: Shared L4, sku: L4, gpu_memory_gib: 24, price_per_gpu_hour: 0.90, isolation: shared, max_gpus: 2, max_duration: 12h}
default_quota: {gpus: {slab: 1}, gpu_hours_per_week: 10}
teams:
  - {name: kelp, idp_groups: [grp-kelp], budget_owners: [ora@harbor.example], quota: {gpus: {slab: 2}, gpu_hours_per_week: 40}}
  - {name: tides, idp_groups: [grp-tides], budget_owners: [ora@harbor.example], quota: {gpus: {slab: 2}, gpu_hours_per_week: 40}}
approvals: {timeout: 36h, fallback_approvers: [ora@harbor.example]}
backend: sim
directory:
  - {user: wiremu@harbor.example, groups: [grp-kelp]}
  - {user: aroha@harbor.example, groups: [grp-tides]}
  - {user: ora@harbor.example, groups: [grp-kelp, grp-tides]}
sim:
  nodes:
    - {name: l4, count: 2, class: slab, gpus: 4}
`

// A quota increase is not asking for GPUs: a team whose only request in the week was one is not
// a new team asking for GPUs for the first time. Its time to first GPU runs from its first
// request for a lease, not from the quota request made before it.
func TestAQuotaRequestAloneIsNotATeamsFirstRequestForGPUs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "harbor.yaml")
	if err := os.WriteFile(file, []byte(harborPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	// Tue 1 Dec 10:00 NZDT (2026-W49): kelp asks for a quota increase and nothing else; tides
	// asks for a quota increase too, and for a lease three hours later.
	runConsoleAt(t, dir, "2026-11-30T21:00:00Z", `wiremu@harbor.example: /gpu quota request +1 slab for 1d because tank survey
aroha@harbor.example: /gpu quota request +1 slab for 1d because tide model
:advance 3h
aroha@harbor.example: /gpu request 1 slab for 2h
`, "--policy", file)
	db := "sqlite:" + filepath.Join(dir, "quartermaster.db")
	out, stderr, code := runCLI("report", "--db", db, "--policy", file, "--now", "2026-12-08T12:00:00Z", "--week", "2026-W49")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	if strings.Contains(out, "New team: kelp") {
		t.Errorf("kelp asked only for a quota increase, yet the report names it a new team asking for GPUs:\n%s", out)
	}
	want := "New team: tides asked for GPUs for the first time on Tue 1 Dec 13:00 NZDT; time to first GPU 0m\n"
	if !strings.Contains(out, want) {
		t.Errorf("the report does not say %q:\n%s", want, out)
	}
}
