package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// noSimPolicy has backend sim and no sim: section, as the policy of the product's contract is
// written: every class gets simulated nodes of its own, so the file loads and a request is placed.
const noSimPolicy = `organization: Kestrel Labs
currency: EUR
timezone: Europe/Oslo
classes:
  - name: notebook
    sku: A10
    gpu_memory_gib: 24
    price_per_gpu_hour: 0.50
    isolation: shared
    max_gpus: 1
    max_duration: 8h
  - name: bulk
    sku: A100
    gpu_memory_gib: 80
    price_per_gpu_hour: 2.75
    isolation: exclusive
    max_gpus: 16
    max_duration: 48h
default_quota: {gpus: {notebook: 1, bulk: 0}, gpu_hours_per_week: 24}
teams:
  - name: fjord
    idp_groups: [grp-fjord]
    budget_owners: [ola@kestrel.example]
    quota: {gpus: {notebook: 2, bulk: 16}, gpu_hours_per_week: 900}
directory:
  - {user: kari@kestrel.example, groups: [grp-fjord]}
  - {user: ola@kestrel.example, groups: [grp-fjord]}
backend: sim
`

func TestASimPolicyWithoutASimSectionLoadsAndPlaces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol := filepath.Join(dir, "kestrel.yaml")
	if err := os.WriteFile(pol, []byte(noSimPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI("policy", "check", pol)
	if code != 0 || !strings.Contains(out, "is valid") {
		t.Fatalf("policy check of a sim policy without sim: exit %d, %s%s", code, out, stderr)
	}
	if !strings.Contains(out+stderr, "no sim: section") {
		t.Errorf("policy check does not say which simulated nodes it made: %s%s", out, stderr)
	}
	msgs := runConsoleAt(t, dir, "2026-11-30T15:00:00Z",
		"kari@kestrel.example: /gpu request 1 notebook for 2h\nkari@kestrel.example: /gpu request 16 bulk for 4h\n", "--policy", pol)
	var texts []string
	for _, m := range msgs {
		texts = append(texts, m.Text)
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"L-1 is active: 1 × notebook", "L-2"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in:\n%s", want, all)
		}
	}
	if strings.Contains(all, "L-2 is queued") || strings.Contains(all, "cannot") {
		t.Errorf("16 GPUs of bulk, within its max_gpus, find no simulated nodes:\n%s", all)
	}
}

// --backend sim on a policy of another backend, which describes no simulated nodes, runs on
// simulated nodes of its classes too: a lease is placed on a node, and its connect line names it
// (it was "active on the cluster", with an ssh line naming no host).
func TestBackendSimOnAPolicyOfAnotherBackendPlacesOnSimulatedNodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol := filepath.Join("..", "..", "commands", "testdata", "borealis-kube.yaml")
	msgs := runConsoleAt(t, dir, "2026-11-30T15:00:00Z", "ines@borealis.example: /gpu request 1 slice for 2h\n", "--policy", pol, "--backend", "sim")
	if len(msgs) == 0 {
		t.Fatal("no reply")
	}
	text := msgs[0].Text
	if !strings.Contains(text, "L-1 is active") || !strings.Contains(text, " on slice-01") || strings.Contains(text, "ines@ ") || strings.Contains(text, "on the cluster") {
		t.Errorf("the lease is not placed on a simulated node: %s", text)
	}
}
