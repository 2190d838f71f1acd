package kube_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/templates"
)

// gpuPoolPolicy is a cluster unlike the example's: a class of MIG slices (the GPU operator's
// mixed strategy names each profile as a resource of its own), a class whose pods take several
// whole GPUs, node selectors on the operator's and the cloud's labels, and a team whose name a
// namespace cannot take as it is.
const gpuPoolPolicy = `organization: Lab
currency: EUR
timezone: Europe/Berlin
backend: kubernetes
classes:
  - name: mig-small
    description: A100 MIG 1g.10gb slices
    sku: A100-MIG
    gpu_memory_gib: 10
    price_per_gpu_hour: 0.3
    isolation: shared
    max_gpus: 2
    max_duration: 8h
    idle_timeout: 30m
    idle_grace: 10m
    kubernetes: {resource: nvidia.com/mig-1g.10gb, node_selector: {nvidia.com/gpu.product: A100-SXM4-80GB-MIG-1g.10gb, cloud.google.com/gke-nodepool: mig-pool}}
  - name: h100_big
    description: H100 nodes
    sku: H100
    gpu_memory_gib: 80
    price_per_gpu_hour: 3
    isolation: exclusive
    max_gpus: 16
    max_duration: 72h
    idle_timeout: 2h
    idle_grace: 30m
    kubernetes: {resource: nvidia.com/gpu, node_selector: {pool: h100}}
default_quota: {gpus: {mig-small: 1, h100_big: 0}, gpu_hours_per_week: 24}
teams:
  - name: ml_research
    idp_groups: [mlr]
    budget_owners: [a@lab.example]
    quota: {gpus: {mig-small: 4, h100_big: 16}, gpu_hours_per_week: 600}
    storage: {path: /data/mlr}
`

func gpuPool(t *testing.T) (*policy.Policy, string, *fake.Clientset) {
	t.Helper()
	p, err := policy.Load([]byte(gpuPoolPolicy), "gpu-pool.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ns := templates.TeamNamespace("ml_research")
	return p, ns, fake.NewClientset(pvc(ns, "team-storage"))
}

// TestAMIGClassToleratesTheGPUPoolTaint: a GPU pool is tainted nvidia.com/gpu (NoSchedule, with
// or without a value, as GKE and the GPU operator's users do) whatever resource its device
// plugin advertises; a class asking for a MIG slice (nvidia.com/mig-1g.10gb) or another
// nvidia.com resource must tolerate that taint, or its workspaces wait as unschedulable forever.
func TestAMIGClassToleratesTheGPUPoolTaint(t *testing.T) {
	p, ns, cs := gpuPool(t)
	b := newBackend(t, p, cs)
	st, err := b.Start(context.Background(), &qm.Lease{ID: 3, User: "kim@lab.example", Team: "ml_research", Class: "mig-small", GPUs: 2, Duration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	k, err := cs.BatchV1().Jobs(ns).Get(context.Background(), "qm-l-3-ssh-shell", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%+v: %v", st, err)
	}
	spec := k.Spec.Template.Spec
	if got := spec.Containers[0].Resources.Limits["nvidia.com/mig-1g.10gb"]; got.Value() != 2 {
		t.Errorf("MIG limit %v, want 2", got.String())
	}
	for _, taint := range []corev1.Taint{
		{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule},
		{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule},
		{Key: "nvidia.com/mig-1g.10gb", Effect: corev1.TaintEffectNoSchedule},
	} {
		ok := false
		for _, tol := range spec.Tolerations {
			ok = ok || tolerates(tol, taint)
		}
		if !ok {
			t.Errorf("a MIG workspace's pods do not tolerate the pool's taint %s=%s:%s: %+v", taint.Key, taint.Value, taint.Effect, spec.Tolerations)
		}
	}
	// Nothing broader: a taint of another key still keeps them off.
	other := corev1.Taint{Key: "dedicated", Value: "infra", Effect: corev1.TaintEffectNoSchedule}
	for _, tol := range spec.Tolerations {
		if tolerates(tol, other) {
			t.Errorf("toleration %+v lets the pods onto any tainted node", tol)
		}
	}
}

// tolerates is the scheduler's rule for Exists and Equal tolerations.
func tolerates(tol corev1.Toleration, taint corev1.Taint) bool {
	if tol.Effect != "" && tol.Effect != taint.Effect {
		return false
	}
	if tol.Key == "" {
		return tol.Operator == corev1.TolerationOpExists
	}
	if tol.Key != taint.Key {
		return false
	}
	return tol.Operator == corev1.TolerationOpExists || tol.Value == taint.Value
}

// TestAMultiNodeJobRunsWhenAllItsNodesDo: a 2-node training lease (16 H100s, 8 per pod) is one
// Indexed Job whose pods the scheduler binds one by one. While one pod runs and the other is
// unschedulable (another lease holds the second node's GPUs), the training cannot rendezvous:
// the lease is queued with the scheduler's reason, not active and charged for 16 GPUs. When the
// second pod runs the lease is active from then, not from when the first pod started, and the
// Job's deadline is raised by the whole wait.
func TestAMultiNodeJobRunsWhenAllItsNodesDo(t *testing.T) {
	ctx := context.Background()
	p, ns, cs := gpuPool(t)
	b := newBackend(t, p, cs)
	l := &qm.Lease{ID: 9, User: "kim@lab.example", Team: "ml_research", Class: "h100_big", GPUs: 16, Duration: 3 * time.Hour,
		Template: "pytorch-ddp", Params: map[string]string{"nnodes": "2"}}
	st, err := b.Start(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	name := st.Ref[strings.LastIndexByte(st.Ref, '/')+1:]
	k, err := cs.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := k.Spec.Template.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"]; g.Value() != 8 || *k.Spec.Parallelism != 2 {
		t.Fatalf("a 2-node lease of 16 GPUs is %d pods of %s GPUs", *k.Spec.Parallelism, g.String())
	}
	created := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	k.Status.StartTime = &metav1.Time{Time: created}
	if _, err := cs.BatchV1().Jobs(ns).UpdateStatus(ctx, k, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := func(i int, fn func(*corev1.Pod)) {
		t.Helper()
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%d-abcde", name, i), Labels: k.Spec.Template.Labels,
			UID: types.UID(fmt.Sprintf("uid-%d", i)), OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: name, APIVersion: "batch/v1"}}}}
		fn(p)
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
			_, err = cs.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
		} else if err != nil {
			t.Fatal(err)
		}
	}
	runningSince := func(node string, at time.Time) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			running(node)(p)
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: at}}}}}
		}
	}
	one := func() qm.Job {
		t.Helper()
		jobs, err := b.Jobs(ctx)
		if err != nil || len(jobs) != 1 {
			t.Fatalf("jobs %+v, %v", jobs, err)
		}
		return jobs[0]
	}
	pod(0, runningSince("h100-01", created.Add(2*time.Minute)))
	pod(1, unschedulable)
	if j := one(); j.State != qm.JobPending || !strings.Contains(j.Reason, "Insufficient nvidia.com/gpu") || !strings.Contains(j.Reason, "1 of 2") {
		t.Errorf("one pod of two running, the other unschedulable: %s %q; want queued with the scheduler's reason", j.State, j.Reason)
	}
	second := created.Add(40 * time.Minute)
	pod(1, runningSince("h100-02", second))
	j := one()
	if j.State != qm.JobRunning || !j.StartedAt.Equal(second) {
		t.Errorf("both pods running: %s since %v, want running since %v", j.State, j.StartedAt, second)
	}
	if want := 3*time.Hour - 40*time.Minute; j.TimeLimit != want {
		t.Errorf("time limit %v, want %v: the deadline counts the 40 minutes' wait for the second node", j.TimeLimit, want)
	}
	if err := b.SetTimeLimit(ctx, j, 3*time.Hour); err != nil {
		t.Fatal(err)
	}
	k, _ = cs.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
	if got, want := time.Duration(*k.Spec.ActiveDeadlineSeconds)*time.Second, 3*time.Hour+40*time.Minute; got != want {
		t.Errorf("deadline %v, want %v", got, want)
	}
}

// TestAClassOnAnotherClustersTaintedNodes: an AMD pool whose nodes the cluster taints for GPU work
// (dedicated=gpu:NoSchedule, amd.com/gpu:NoExecute) gets pods that tolerate exactly what its
// class lists, and the taint named after its resource as well; a taint of any other key still
// keeps them off.
func TestAClassOnAnotherClustersTaintedNodes(t *testing.T) {
	src := strings.Replace(gpuPoolPolicy, "kubernetes: {resource: nvidia.com/gpu, node_selector: {pool: h100}}",
		"kubernetes: {resource: amd.com/gpu, node_selector: {pool: mi300x}, tolerations: [{key: dedicated, value: gpu, effect: NoSchedule}, {key: amd.com/gpu, operator: Exists, effect: NoExecute}]}", 1)
	p, err := policy.Load([]byte(src), "amd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ns := templates.TeamNamespace("ml_research")
	cs := fake.NewClientset(pvc(ns, "team-storage"))
	b := newBackend(t, p, cs)
	if _, err := b.Start(context.Background(), &qm.Lease{ID: 4, User: "kim@lab.example", Team: "ml_research", Class: "h100_big", GPUs: 8, Duration: time.Hour}); err != nil {
		t.Fatal(err)
	}
	k, err := cs.BatchV1().Jobs(ns).Get(context.Background(), "qm-l-4-ssh-shell", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := k.Spec.Template.Spec
	if got := spec.Containers[0].Resources.Limits["amd.com/gpu"]; got.Value() != 8 {
		t.Errorf("amd.com/gpu limit %v, want 8", got.String())
	}
	for _, taint := range []corev1.Taint{
		{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
		{Key: "amd.com/gpu", Effect: corev1.TaintEffectNoExecute},
		{Key: "amd.com/gpu", Effect: corev1.TaintEffectNoSchedule},
	} {
		ok := false
		for _, tol := range spec.Tolerations {
			ok = ok || tolerates(tol, taint)
		}
		if !ok {
			t.Errorf("the pods do not tolerate %s=%s:%s: %+v", taint.Key, taint.Value, taint.Effect, spec.Tolerations)
		}
	}
	for _, other := range []corev1.Taint{{Key: "dedicated", Value: "infra", Effect: corev1.TaintEffectNoSchedule}, {Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}} {
		for _, tol := range spec.Tolerations {
			if tolerates(tol, other) {
				t.Errorf("toleration %+v lets the pods onto nodes tainted %s=%s", tol, other.Key, other.Value)
			}
		}
	}
}

// TestALeasePlacedOnTwoNodesIsOnePodPerNode: 16 GPUs the service placed on two whole nodes of 8,
// for pytorch-ddp with no nnodes, are two pods of 8 GPUs pinned to those nodes, with a world of
// two nodes, not one pod asking for 16 GPUs that no node holds.
func TestALeasePlacedOnTwoNodesIsOnePodPerNode(t *testing.T) {
	ctx := context.Background()
	p, ns, cs := gpuPool(t)
	b := newBackend(t, p, cs)
	l := &qm.Lease{ID: 11, User: "kim@lab.example", Team: "ml_research", Class: "h100_big", GPUs: 16, Duration: time.Hour,
		Node: "h100-a,h100-b", Template: "pytorch-ddp", Params: map[string]string{"script": "train.py"}}
	if _, err := b.Start(ctx, l); err != nil {
		t.Fatal(err)
	}
	k, err := cs.BatchV1().Jobs(ns).Get(ctx, "qm-l-11-pytorch-ddp", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := k.Spec.Template.Spec
	if g := spec.Containers[0].Resources.Limits["nvidia.com/gpu"]; g.Value() != 8 || k.Spec.Parallelism == nil || *k.Spec.Parallelism != 2 || *k.Spec.Completions != 2 {
		t.Errorf("16 GPUs on two nodes are %v pods of %s GPUs", k.Spec.Parallelism, g.String())
	}
	env := map[string]string{}
	for _, e := range spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	if env["QM_NNODES"] != "2" || env["QM_GPUS_PER_NODE"] != "8" || spec.Subdomain != "qm-l-11-pytorch-ddp" {
		t.Errorf("QM_NNODES=%s QM_GPUS_PER_NODE=%s subdomain %q", env["QM_NNODES"], env["QM_GPUS_PER_NODE"], spec.Subdomain)
	}
	terms := spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || len(terms[0].MatchFields) != 1 || strings.Join(terms[0].MatchFields[0].Values, ",") != "h100-a,h100-b" {
		t.Errorf("node affinity %+v", terms)
	}
	if _, err := cs.CoreV1().Services(ns).Get(ctx, "qm-l-11-pytorch-ddp", metav1.GetOptions{}); err != nil {
		t.Errorf("no headless Service for the rendezvous: %v", err)
	}

	// Running, it is on both nodes, as Slurm reports a job of two nodes: the service keeps both
	// taken, rather than taking h100-b for free and placing another lease there.
	for i, node := range []string{"h100-b", "h100-a"} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("qm-l-11-pytorch-ddp-%d-abcde", i), Labels: k.Spec.Template.Labels,
			UID: types.UID(fmt.Sprintf("uid-%d", i)), OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: k.Name, APIVersion: "batch/v1"}}}}
		running(node)(p)
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	jobs, err := b.Jobs(ctx)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("%v %+v", err, jobs)
	}
	if j := jobs[0]; j.State != qm.JobRunning || j.Node != "h100-a,h100-b" {
		t.Errorf("a Job running on two nodes reads %s on %q, want running on h100-a,h100-b", j.State, j.Node)
	}
}
