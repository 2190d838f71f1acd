package kube_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/qm/qmtest"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// lumenPolicy has classes of its own names whose nodes overlap: skiss finds its nodes by a label,
// render by its resource alone (no node selector), so a node of skiss is render's too and both
// count its nvidia.com/gpu; rocm counts amd.com/gpu, and the two MIG classes each a profile of
// their own, on nodes that have both.
const lumenPolicy = `
organization: Lumen Works
currency: CHF
timezone: America/Santiago
classes:
  - name: skiss
    sku: RTX-6000
    price_per_gpu_hour: 3.5
    isolation: shared
    max_gpus: 4
    max_duration: 8h
    kubernetes: {node_selector: {lumen.example/tier: atelier}}
  - name: render
    sku: RTX-6000
    price_per_gpu_hour: 4
    isolation: shared
    max_gpus: 4
    max_duration: 8h
    kubernetes: {resource: nvidia.com/gpu}
  - name: rocm
    sku: MI210
    price_per_gpu_hour: 2.5
    isolation: shared
    max_gpus: 4
    max_duration: 8h
    kubernetes: {resource: amd.com/gpu}
  - name: sliver
    sku: A100-MIG-1g
    price_per_gpu_hour: 1
    isolation: shared
    max_gpus: 4
    max_duration: 8h
    kubernetes: {resource: nvidia.com/mig-1g.10gb}
  - name: wedge
    sku: A100-MIG-3g
    price_per_gpu_hour: 2
    isolation: shared
    max_gpus: 4
    max_duration: 8h
    kubernetes: {resource: nvidia.com/mig-3g.40gb}
default_quota: {gpus: {skiss: 8, render: 8, rocm: 8, sliver: 8, wedge: 8}, gpu_hours_per_week: 0}
teams:
  - name: prisma
    idp_groups: [g-prisma]
    budget_owners: [vale@lumen.example]
    storage: {path: /data/prisma, pvc: prisma-vol}
backend: kubernetes
directory:
  - {user: tomas@lumen.example, groups: [g-prisma]}
  - {user: vale@lumen.example, groups: [g-prisma]}
`

// lumenNode is a ready node with the given allocatable extended resources and labels.
func lumenNode(name string, lbls map[string]string, res map[string]int64) *corev1.Node {
	n := &corev1.Node{Status: corev1.NodeStatus{
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64")},
		Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
	}}
	n.Name = name
	n.Labels = map[string]string{"kubernetes.io/hostname": name}
	for k, v := range lbls {
		n.Labels[k] = v
	}
	for r, q := range res {
		n.Status.Allocatable[corev1.ResourceName(r)] = *resource.NewQuantity(q, resource.DecimalSI)
	}
	return n
}

// newLumen is the lease service on policy text (lumenPolicy or a variant) and a fake cluster of
// nodes; its inventory is read.
func newLumen(t *testing.T, text string, nodes ...runtime.Object) *kaskade {
	t.Helper()
	p, err := policy.Load([]byte(text), "lumen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cs := fake.NewClientset(append(nodes, pvc("qm-prisma", "prisma-vol"))...)
	k := &kaskade{world: &world{t: t, cs: cs, notes: &qmtest.NoticeLog{}}, p: p, tel: fakeTelemetry{},
		clock: sim.NewClock(time.Date(2026, 7, 14, 13, 0, 0, 0, time.UTC))}
	k.store = storetest.Open(t, storetest.SQLite(t))
	k.svc = k.service()
	k.reconcile()
	return k
}

// runLease plays the Job controller, scheduler and kubelet for a lease's Job: its pod runs on
// node; the next pass reads it.
func (k *kaskade) runLease(l *qm.Lease, node string) {
	k.t.Helper()
	jobs := k.jobs("qm-prisma")
	name := ""
	for _, j := range jobs {
		if j.Labels["quartermaster.io/lease"] == l.ID.String() {
			name = j.Name
		}
	}
	if name == "" {
		k.t.Fatalf("%s has no Job", l.ID)
	}
	k.runPod("qm-prisma", name, node, k.clock.Now())
	k.reconcile()
	if got := k.lease(l.ID); got.State != qm.Active || got.Node != node {
		k.t.Fatalf("%s is %s on %q; the test needs it running on %s", l.ID, got.State, got.Node, node)
	}
}

func freeOf(t *testing.T, k *kaskade, class string) int {
	t.Helper()
	st, err := k.svc.Catalog(context.Background(), "tomas@lumen.example")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.Class.Name == class {
			return s.Free
		}
	}
	t.Fatalf("the catalog has no class %s", class)
	return 0
}

// TestALeaseHoldsItsGPUsInEveryClassThatCountsThem: on a node that two classes find (one by its
// label, the other by its resource alone), both counting nvidia.com/gpu (one by default), a running lease of one
// holds its GPUs on the other's side too: the backend leaves the service's own pods out of what
// is used in every class, so the service must count them. The other class's catalog shows one
// GPU fewer free, a quote for as many GPUs as the node has waits until that lease ends, and such
// a request waits instead of being handed a node whose GPUs are taken; one that fits what is left
// is placed.
func TestALeaseHoldsItsGPUsInEveryClassThatCountsThem(t *testing.T) {
	k := newLumen(t, lumenPolicy, lumenNode("atelier-01", map[string]string{"lumen.example/tier": "atelier"}, map[string]int64{"nvidia.com/gpu": 3}))
	if r, s := freeOf(t, k, "render"), freeOf(t, k, "skiss"); r != 3 || s != 3 {
		t.Fatalf("before anything runs, render shows %d free and skiss %d; the test needs 3 and 3", r, s)
	}
	sk := k.ask("tomas@lumen.example", 1, "skiss", "ssh-shell", 2*time.Hour)
	k.runLease(sk, "atelier-01")

	if got := freeOf(t, k, "render"); got != 2 {
		t.Errorf("with a skiss lease of 1 GPU running on atelier-01, render shows %d free; want 2 (the node's 3, less the lease's)", got)
	}
	if got := freeOf(t, k, "skiss"); got != 2 {
		t.Errorf("skiss shows %d free; want 2", got)
	}
	// The quote for all 3 waits until the skiss lease ends, 2 hours on (the clock stands still), as
	// placement does.
	est, err := k.svc.EstimateRequest(context.Background(), "vale@lumen.example", "render", 3, time.Hour, false)
	if err != nil {
		t.Fatal(err)
	}
	if w := est.Wait; w.Unknown || w.Median != 2*time.Hour {
		t.Errorf("the quote for 3 render GPUs waits %s (unknown %v); want 2h, until the skiss lease ends", w.Median, w.Unknown)
	}
	big := k.ask("vale@lumen.example", 3, "render", "ssh-shell", time.Hour)
	if big.State != qm.Queued {
		t.Errorf("a render request for 3 GPUs, with 1 of atelier-01's 3 held by skiss, is %s on %q; want queued", big.State, big.Node)
	}
	small := k.ask("vale@lumen.example", 2, "render", "ssh-shell", time.Hour)
	if small.State != qm.Provisioning || small.Node != "atelier-01" {
		t.Errorf("a render request for the 2 GPUs left is %s on %q %q; want placed on atelier-01", small.State, small.Node, small.Reason)
	}
}

// TestClassesOfOtherResourcesOnOneNodeHoldNothingOfEachOther: classes that count other
// resources of one node (nvidia.com/gpu and amd.com/gpu; two MIG profiles) hold none of each
// other's: a lease of one leaves the other's free count and placement as they were.
func TestClassesOfOtherResourcesOnOneNodeHoldNothingOfEachOther(t *testing.T) {
	for _, tc := range []struct {
		name, class, other string
		res                map[string]int64
	}{
		{"nvidia and amd", "skiss", "rocm", map[string]int64{"nvidia.com/gpu": 2, "amd.com/gpu": 2}},
		{"two MIG profiles", "sliver", "wedge", map[string]int64{"nvidia.com/mig-1g.10gb": 2, "nvidia.com/mig-3g.40gb": 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newLumen(t, lumenPolicy, lumenNode("duo-01", map[string]string{"lumen.example/tier": "atelier"}, tc.res))
			l := k.ask("tomas@lumen.example", 2, tc.class, "ssh-shell", 2*time.Hour)
			k.runLease(l, "duo-01")
			if got := freeOf(t, k, tc.other); got != 2 {
				t.Errorf("with a %s lease of 2 running on duo-01, %s shows %d free; want 2 (its own resource is untouched)", tc.class, tc.other, got)
			}
			o := k.ask("vale@lumen.example", 2, tc.other, "ssh-shell", time.Hour)
			if o.State != qm.Provisioning || o.Node != "duo-01" {
				t.Errorf("a %s request for its 2 GPUs is %s on %q %q; want placed on duo-01", tc.other, o.State, o.Node, o.Reason)
			}
		})
	}
}

// TestACapacityShareCountsANodeOfTwoClassesOnce: render may hold half the cluster's GPUs. Its
// only node is skiss's too, both counting its nvidia.com/gpu, so the cluster has that node's 4
// GPUs, not 8, and render may hold 2; a running skiss lease of 1 there holds one of them, so a
// render request for 2 waits, saying why, and one for 1 is placed.
func TestACapacityShareCountsANodeOfTwoClassesOnce(t *testing.T) {
	shared := strings.Replace(lumenPolicy, "    kubernetes: {resource: nvidia.com/gpu}\n",
		"    kubernetes: {resource: nvidia.com/gpu}\n    capacity_share: 0.5\n", 1)
	k := newLumen(t, shared, lumenNode("atelier-02", map[string]string{"lumen.example/tier": "atelier"}, map[string]int64{"nvidia.com/gpu": 4}))
	if c, _ := k.p.Class("render"); c == nil || c.CapacityShare != 0.5 {
		t.Fatalf("render's capacity share is not 0.5: %+v", c)
	}
	sk := k.ask("tomas@lumen.example", 1, "skiss", "ssh-shell", 2*time.Hour)
	k.runLease(sk, "atelier-02")

	two := k.ask("vale@lumen.example", 2, "render", "ssh-shell", time.Hour)
	if two.State != qm.Queued || !strings.Contains(two.Reason, "may hold 2 GPUs") || !strings.Contains(two.Reason, "skiss") {
		t.Errorf("a render request for 2, with render's share of the node's 4 GPUs 2 and 1 held by skiss, is %s on %q %q; want queued, saying render may hold 2 and skiss holds one",
			two.State, two.Node, two.Reason)
	}
	if got := freeOf(t, k, "render"); got != 1 {
		t.Errorf("render shows %d free; want 1 (its share of 2, less skiss's lease)", got)
	}
	one := k.ask("vale@lumen.example", 1, "render", "ssh-shell", time.Hour)
	if one.State != qm.Provisioning || one.Node != "atelier-02" {
		t.Errorf("a render request for the 1 GPU its share leaves is %s on %q %q; want placed on atelier-02", one.State, one.Node, one.Reason)
	}
}
