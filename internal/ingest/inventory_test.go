package ingest_test

import (
	"testing"

	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/qm"
)

// A policy's sku is compared with NVML's name of a GPU leniently, as people write it: the same
// GPU written shorter, with its form factor, or as the mock names it matches; another GPU,
// however alike its name, does not.
func TestAPolicysSKUIsComparedWithNVMLsNameLeniently(t *testing.T) {
	for _, c := range []struct {
		sku, name string
		want      bool
	}{
		{"L40S", "NVIDIA L40S", true},
		{"l40s", "NVIDIA L40S", true},
		{"H100", "NVIDIA H100 80GB HBM3", true},
		{"H100-SXM5", "NVIDIA H100 80GB HBM3", true},
		{"H100 80GB", "NVIDIA H100 80GB HBM3", true},
		{"A100", "Mock NVIDIA A100-SXM4-40GB", true},
		{"A100-80GB", "NVIDIA A100-SXM4-80GB", true},
		{"RTX 6000 Ada", "NVIDIA RTX 6000 Ada Generation", true},
		{"RTX6000", "NVIDIA RTX 6000 Ada Generation", true},
		{"V100", "Tesla V100-SXM2-32GB", true},
		{"NVIDIA L4", "NVIDIA L4", true},
		{"", "NVIDIA A100-SXM4-40GB", true},       // no sku: nothing to compare
		{"Hopper", "NVIDIA H100 80GB HBM3", true}, // names no model
		{"A100", "NVIDIA L40S", false},
		{"L40S", "Mock NVIDIA A100-SXM4-40GB", false},
		{"A10", "NVIDIA A100-SXM4-40GB", false},
		{"L4", "NVIDIA L40S", false},
		{"L40S", "NVIDIA L40", false},
		{"H200", "NVIDIA H100 80GB HBM3", false},
		{"H100", "NVIDIA GH200 480GB", false},
	} {
		if got := ingest.ModelMatches(c.sku, c.name); got != c.want {
			t.Errorf("sku %q against %q: %v, want %v", c.sku, c.name, got, c.want)
		}
	}
}

// A node's GPUs are all its classes' together, case aside; two classes that offer the same GPUs
// (the same GRES or resource) count them once.
func TestANodesGPUsAreAllItsClassesTogether(t *testing.T) {
	inv := []qm.Node{
		{Name: "Split-01", Class: "a100", GPUs: 4}, {Name: "split-01", Class: "l40s", GPUs: 4},
		{Name: "shared-01", Class: "notebook", GPUs: 8}, {Name: "shared-01", Class: "train", GPUs: 8},
	}
	sku := map[string]string{"a100": "A100", "l40s": "L40S", "notebook": "H100", "train": "H100"}
	shares := map[string]string{"a100": "gpu:a100", "l40s": "gpu:l40s", "notebook": "gpu:h100", "train": "gpu:h100"}
	got := ingest.NodeInventories(inv, func(c string) string { return sku[c] }, func(c string) string { return shares[c] })
	if n := got["split-01"]; n == nil || n.GPUs != 8 || len(n.Classes) != 2 || n.Classes[1].SKU != "L40S" {
		t.Errorf("split-01: %+v; want 8 GPUs of two classes", n)
	}
	if n := got["shared-01"]; n == nil || n.GPUs != 8 || len(n.Classes) != 2 {
		t.Errorf("shared-01: %+v; want 8 GPUs, offered by two classes", n)
	}
}

// A node the inventory lacks under the agent's name is pointed to the inventory's node of the same
// short name, whichever side is fully qualified; where two share it, to neither.
func TestANodeNamedOtherwiseIsPointedToTheInventorysName(t *testing.T) {
	byNode := map[string]*ingest.NodeInventory{
		"rtx-07":                {GPUs: 4, Classes: []ingest.InventoryClass{{Name: "viz", GPUs: 4}}},
		"a40-3.cluster.example": {GPUs: 2, Classes: []ingest.InventoryClass{{Name: "batch", GPUs: 2}}},
		"l4-1.east.example":     {GPUs: 1, Classes: []ingest.InventoryClass{{Name: "infer", GPUs: 1}}},
		"l4-1.west.example":     {GPUs: 1, Classes: []ingest.InventoryClass{{Name: "infer", GPUs: 1}}},
	}
	for _, c := range []struct{ node, named string }{
		{"RTX-07.Cluster.Example", "rtx-07"},
		{"A40-3", "a40-3.cluster.example"},
		{"l4-1", ""},
		{"gpu-99.cluster.example", ""},
	} {
		ni := ingest.LookupInventory(byNode, c.node)
		if len(ni.Classes) != 0 || ni.Named != c.named {
			t.Errorf("%s: %+v; want no classes and the name %q", c.node, ni, c.named)
		}
	}
	if ni := ingest.LookupInventory(byNode, "Rtx-07"); len(ni.Classes) != 1 || ni.Named != "" {
		t.Errorf("rtx-07 in other case: %+v; want its own", ni)
	}
}
