package kube_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/workload"
)

// cpuOnlyPolicy has GPU classes an admin marks in every usual way: a pool with a label of its
// own and a taint of its own (tolerated by the class), an exclusive pool picked by two labels
// (one of which CPU nodes carry too) and tainted nvidia.com/gpu, and a class that names only a
// resource, whose nodes no label tells apart.
const cpuOnlyPolicy = `organization: Lab
currency: EUR
timezone: Europe/Berlin
backend: kubernetes
classes:
  - name: a10
    description: A10 nodes
    sku: A10
    gpu_memory_gib: 24
    price_per_gpu_hour: 0.5
    isolation: shared
    max_gpus: 4
    max_duration: 8h
    idle_timeout: 30m
    idle_grace: 10m
    kubernetes:
      resource: nvidia.com/gpu
      node_selector: {accel: a10}
      tolerations: [{key: dedicated, value: gpu, effect: NoSchedule}]
  - name: big
    description: H100 nodes
    sku: H100
    gpu_memory_gib: 80
    price_per_gpu_hour: 3
    isolation: exclusive
    max_gpus: 16
    max_duration: 72h
    idle_timeout: 2h
    idle_grace: 30m
    kubernetes: {resource: nvidia.com/gpu, node_selector: {pool: h100, zone: west}}
  - name: timeshared
    description: Time-shared GPUs
    sku: L4
    gpu_memory_gib: 24
    price_per_gpu_hour: 0.2
    isolation: shared
    max_gpus: 2
    max_duration: 8h
    idle_timeout: 30m
    idle_grace: 10m
    kubernetes: {resource: nvidia.com/gpu.shared}
default_quota: {gpus: {a10: 4, big: 16, timeshared: 2}, gpu_hours_per_week: 500}
teams:
  - name: data
    idp_groups: [data]
    budget_owners: [a@lab.example]
`

func node(name string, labels map[string]string, resource_ string, gpus int64, taints ...corev1.Taint) *corev1.Node {
	l := map[string]string{"kubernetes.io/hostname": name}
	for k, v := range labels {
		l[k] = v
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}, Spec: corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		}}
	if gpus > 0 {
		n.Status.Allocatable[corev1.ResourceName(resource_)] = *resource.NewQuantity(gpus, resource.DecimalSI)
	}
	return n
}

// schedulesOn is the scheduler's filter for what a pod spec says: its node selector, its required
// node affinity (terms ORed, a term's requirements ANDed; an empty term matches no node) and the
// node's NoSchedule and NoExecute taints.
func schedulesOn(spec corev1.PodSpec, n *corev1.Node) bool {
	for k, v := range spec.NodeSelector {
		if n.Labels[k] != v {
			return false
		}
	}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		any := false
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			if len(term.MatchExpressions)+len(term.MatchFields) == 0 {
				continue
			}
			ok := true
			for _, r := range term.MatchExpressions {
				ok = ok && requirementHolds(r, n.Labels)
			}
			for _, r := range term.MatchFields {
				ok = ok && r.Key == "metadata.name" && requirementHolds(r, map[string]string{"metadata.name": n.Name})
			}
			any = any || ok
		}
		if !any {
			return false
		}
	}
	for _, taint := range n.Spec.Taints {
		if taint.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		ok := false
		for _, tol := range spec.Tolerations {
			ok = ok || tolerates(tol, taint)
		}
		if !ok {
			return false
		}
	}
	return true
}

func requirementHolds(r corev1.NodeSelectorRequirement, labels map[string]string) bool {
	v, has := labels[r.Key]
	in := false
	for _, want := range r.Values {
		in = in || (has && v == want)
	}
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		return in
	case corev1.NodeSelectorOpNotIn:
		return !in
	case corev1.NodeSelectorOpExists:
		return has
	case corev1.NodeSelectorOpDoesNotExist:
		return !has
	}
	return false
}

// TestACPUOnlyJobKeepsOffGPUNodes: a CPU-only job (a template of gpus: 0) holds no GPU, so its pod
// must not take a GPU node's CPUs and memory that the node's GPU jobs need: it carries none of its
// class's node selector or tolerations, nor the GPU taint's toleration (clusters taint GPU pools
// precisely so that pods asking for no GPU stay off), nor the pin to a GPU node the service chose
// on an exclusive class, and it is kept off the GPU nodes the service knows, whichever way the
// class finds its nodes (labels, or a resource alone). It runs on a node without GPUs, even one
// that carries a label a class's selector also names. A GPU lease of the same class still lands
// on its class's nodes.
func TestACPUOnlyJobKeepsOffGPUNodes(t *testing.T) {
	ctx := context.Background()
	p, err := policy.Load([]byte(cpuOnlyPolicy), "cpu-only.yaml")
	if err != nil {
		t.Fatal(err)
	}
	gpuTaint := corev1.Taint{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}
	a10 := node("a10-1", map[string]string{"accel": "a10"}, "nvidia.com/gpu", 4,
		corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule})
	h100 := node("h100-1", map[string]string{"pool": "h100", "zone": "west"}, "nvidia.com/gpu", 8, gpuTaint)
	shared := node("l4-1", nil, "nvidia.com/gpu.shared", 8)
	cpu := node("cpu-1", map[string]string{"zone": "west", "pool": "general"}, "", 0)
	gpuNodes := []*corev1.Node{a10, h100, shared}
	cs := fake.NewClientset(pvc("qm-data", "team-storage"), a10, h100, shared, cpu)
	b := newBackend(t, p, cs)
	if err := b.RefreshInventory(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(b.Inventory()); got != 3 {
		t.Fatalf("inventory of %d nodes, want the 3 GPU nodes: %+v", got, b.Inventory())
	}

	for i, c := range []struct{ class, pinned string }{{"a10", ""}, {"big", "h100-1"}, {"timeshared", ""}} {
		l := &qm.Lease{ID: qm.LeaseID(10 + i), User: "dana@lab.example", Team: "data", Class: c.class, Duration: time.Hour,
			Node: c.pinned, Template: "data-prep", Params: map[string]string{"input": "raw", "output": "out"}}
		spec := podTemplate(t, b, cs, l).Spec
		for _, n := range gpuNodes {
			if schedulesOn(spec, n) {
				t.Errorf("a CPU-only job of class %s may run on GPU node %s: selector %v, tolerations %+v, affinity %+v",
					c.class, n.Name, spec.NodeSelector, spec.Tolerations, spec.Affinity)
			}
		}
		if !schedulesOn(spec, cpu) {
			t.Errorf("a CPU-only job of class %s cannot run on the CPU node: selector %v, tolerations %+v, affinity %+v",
				c.class, spec.NodeSelector, spec.Tolerations, spec.Affinity)
		}
		for _, ctr := range spec.Containers {
			for r := range ctr.Resources.Limits {
				if r != corev1.ResourceCPU && r != corev1.ResourceMemory {
					t.Errorf("a CPU-only job of class %s asks for %s", c.class, r)
				}
			}
		}
	}

	// The GPU leases of those classes still go to their nodes.
	for i, c := range []struct {
		class string
		on    *corev1.Node
	}{{"a10", a10}, {"big", h100}} {
		spec := podTemplate(t, b, cs, &qm.Lease{ID: qm.LeaseID(20 + i), User: "dana@lab.example", Team: "data", Class: c.class,
			GPUs: 1, Duration: time.Hour}).Spec
		if !schedulesOn(spec, c.on) || schedulesOn(spec, cpu) {
			t.Errorf("a GPU lease of class %s: on %s %v, on the CPU node %v", c.class, c.on.Name, schedulesOn(spec, c.on), schedulesOn(spec, cpu))
		}
	}
}

// A CPU-only job is made as its preview shows it (/gpu template, quartermaster templates render:
// workload.Render with the inventory's GPU nodes): the same node selector, tolerations and
// affinity, nothing added after.
func TestACPUOnlyJobIsMadeAsItsPreviewShows(t *testing.T) {
	ctx := context.Background()
	p, err := policy.Load([]byte(cpuOnlyPolicy), "cpu-only.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a10 := node("a10-1", map[string]string{"accel": "a10"}, "nvidia.com/gpu", 4)
	h100 := node("h100-1", map[string]string{"pool": "h100", "zone": "west"}, "nvidia.com/gpu", 8)
	cs := fake.NewClientset(pvc("qm-data", "team-storage"), a10, h100, node("cpu-1", nil, "", 0))
	b := newBackend(t, p, cs)
	if err := b.RefreshInventory(ctx); err != nil {
		t.Fatal(err)
	}
	for i, class := range []string{"a10", "big"} {
		l := &qm.Lease{ID: qm.LeaseID(30 + i), User: "dana@lab.example", Team: "data", Class: class, Duration: time.Hour,
			Template: "data-prep", Params: map[string]string{"input": "raw", "output": "out"}}
		w, err := workload.Render(catalog(t), p, l, workload.Settings{GPUNodes: func() []string { return workload.GPUNodes(b.Inventory()) }})
		if err != nil {
			t.Fatal(err)
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(w.KubernetesYAML), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := obj.(*batchv1.Job).Spec.Template.Spec
		got := podTemplate(t, b, cs, l).Spec
		if !reflect.DeepEqual(got.NodeSelector, want.NodeSelector) || !reflect.DeepEqual(got.Tolerations, want.Tolerations) || !reflect.DeepEqual(got.Affinity, want.Affinity) {
			t.Errorf("class %s: the Job is made with selector %v, tolerations %+v, affinity %+v; its preview shows %v, %+v, %+v",
				class, got.NodeSelector, got.Tolerations, got.Affinity, want.NodeSelector, want.Tolerations, want.Affinity)
		}
		if want.Affinity == nil || want.Affinity.NodeAffinity == nil {
			t.Errorf("class %s: the preview keeps the job off no GPU node:\n%s", class, w.KubernetesYAML)
		}
	}
}
