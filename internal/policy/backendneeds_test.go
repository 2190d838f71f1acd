package policy

import (
	"strings"
	"testing"
)

// lineOf is the line (from 1) of the first line of src that holds s.
func lineOf(t *testing.T, src, s string) int {
	t.Helper()
	i := strings.Index(src, s)
	if i < 0 {
		t.Fatalf("no %q in the policy", s)
	}
	return strings.Count(src[:i], "\n") + 1
}

// TestTheBackendsMappingIsNeededByEveryClass: backend: slurm places a class's leases in its
// slurm.partition, and backend: kubernetes on nodes of its kubernetes resource or node selector.
// A class without one is refused by policy check at its line, with a mapping that works, rather
// than accepted and then refused when serve or console starts, without a line.
func TestTheBackendsMappingIsNeededByEveryClass(t *testing.T) {
	noSlurm := []string{"backend: sim ", "backend: slurm ", `    slurm: {partition: train, gres: "gpu:h100"}` + "\n", ""}
	src := exampleWith(t, noSlurm...)
	pe := refused(t, noSlurm...)
	wantProblem(t, pe, lineOf(t, src, "- name: train"), `class train has no slurm.partition, which backend slurm needs to place its leases; e.g. slurm: {partition: train, gres: "gpu"}`)

	noKube := []string{"backend: sim ", "backend: kubernetes ", "    kubernetes: {resource: nvidia.com/gpu, node_selector: {gpu.acme/class: interactive}}\n", ""}
	src = exampleWith(t, noKube...)
	pe = refused(t, noKube...)
	wantProblem(t, pe, lineOf(t, src, "- name: interactive"), "class interactive has no kubernetes.resource or node_selector, which backend kubernetes needs to place its leases; e.g. kubernetes: {resource: nvidia.com/gpu}")

	// One of the two is enough for Kubernetes; a GRES is not needed for Slurm.
	for _, pairs := range [][]string{
		{"backend: sim ", "backend: kubernetes ", "kubernetes: {resource: nvidia.com/gpu, node_selector: {gpu.acme/class: train}}", "kubernetes: {node_selector: {gpu.acme/class: train}}"},
		{"backend: sim ", "backend: kubernetes ", "kubernetes: {resource: nvidia.com/gpu, node_selector: {gpu.acme/class: train}}", "kubernetes: {resource: nvidia.com/gpu}"},
		{"backend: sim ", "backend: slurm ", `slurm: {partition: train, gres: "gpu:h100"}`, "slurm: {partition: train}"},
		{`    slurm: {partition: train, gres: "gpu:h100"}` + "\n", "", "    kubernetes: {resource: nvidia.com/gpu, node_selector: {gpu.acme/class: train}}\n", ""},
	} {
		if _, err := Load([]byte(exampleWith(t, pairs...)), "p.yaml"); err != nil {
			t.Errorf("%q: %v", pairs, err)
		}
	}
}
