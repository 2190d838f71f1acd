package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/sim"
)

// templates render previews a CPU-only template's Kubernetes Job as the backend makes it: none of
// the class's node selector, and a node affinity that keeps it off the GPU nodes (here the
// policy's simulated ones).
func TestTemplatesRenderACPUOnlyJobKeepsOffGPUNodes(t *testing.T) {
	clearEnv(t)
	const file = "../../docs/quartermaster.example.yaml"
	pol, err := policy.LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"templates", "render", "data-prep", "input=raw/images", "output=ds/images", "--policy", file, "--class", "train", "--backend", "kubernetes"}, nil, &out, &errb); code != 0 {
		t.Fatalf("render data-prep: exit %d: %s", code, errb.String())
	}
	m := out.String()
	if strings.Contains(m, "nodeSelector:") || strings.Contains(m, "gpu.acme/class") || strings.Contains(m, "podAntiAffinity") || !strings.Contains(m, "NotIn") {
		t.Errorf("the CPU-only Job picks the class's GPU nodes, or is not kept off them:\n%s", m)
	}
	for _, n := range sim.New(pol, sim.NewClock(time.Now())).Inventory() {
		if n.GPUs > 0 && !strings.Contains(m, `"`+n.Name+`"`) {
			t.Errorf("the CPU-only Job is not kept off GPU node %s:\n%s", n.Name, m)
		}
	}
}

// A CPU-only template's lease holds no GPU: render refuses --gpus for it in one sentence, with an
// example that renders.
func TestTemplatesRenderRefusesGPUsForACPUOnlyTemplate(t *testing.T) {
	t.Parallel()
	const file = "../../docs/quartermaster.example.yaml"
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"templates", "render", "data-prep", "input=a", "output=b", "--gpus", "2", "--policy", file}, nil, &out, &errb)
	msg := errb.String()
	if code == 0 || !strings.Contains(msg, "--gpus") || !strings.Contains(msg, "e.g. quartermaster templates render data-prep") {
		t.Fatalf("render data-prep --gpus 2: exit %d, %q; want a refusal of --gpus with an example", code, msg)
	}
	ex := strings.Fields(msg[strings.Index(msg, "e.g. ")+len("e.g. "):])
	if code := run(context.Background(), append(ex[1:], "--policy", file), nil, &out, &errb); code != 0 {
		t.Errorf("the example %v does not render: exit %d", ex, code)
	}
}
