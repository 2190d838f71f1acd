package kube_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	_ "github.com/acme/quartermaster/internal/kube"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/qm/qmtest"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/reports/showback"
)

// kaskadePolicy is a platform team's own policy, with none of the example's names: classes found
// by their own node labels and taints, one of them a MIG slice, and teams with their own claims.
const kaskadePolicy = `
organization: Kaskade
currency: SEK
timezone: Europe/Stockholm
classes:
  - name: notebook
    description: A100 MIG slices for notebooks
    sku: A100-MIG-3g
    gpu_memory_gib: 40
    price_per_gpu_hour: 9
    isolation: shared
    max_gpus: 2
    max_duration: 8h
    idle_timeout: 1h
    idle_grace: 15m
    kubernetes:
      resource: nvidia.com/mig-3g.40gb
      node_selector: {kaskade.se/pool: mig}
      tolerations: [{key: kaskade.se/mig, operator: Exists, effect: NoSchedule}]
  - name: tung
    description: Whole H100 nodes
    sku: H100-SXM5
    gpu_memory_gib: 80
    price_per_gpu_hour: 40
    isolation: exclusive
    max_gpus: 8
    max_duration: 48h
    idle_timeout: 2h
    idle_grace: 30m
    kubernetes:
      resource: nvidia.com/gpu
      node_selector: {kaskade.se/pool: h100}
      tolerations: [{key: dedicated, value: training, effect: NoSchedule}]
default_quota: {gpus: {notebook: 1, tung: 0}, gpu_hours_per_week: 10}
teams:
  - name: fjord
    idp_groups: [g-fjord]
    budget_owners: [astrid@kaskade.example]
    quota: {gpus: {notebook: 4, tung: 16}, gpu_hours_per_week: 500}
    data_classes: [public]
    storage: {path: /data/fjord, quota_gib: 1024, pvc: fjord-data}
  - name: skog_lab
    idp_groups: [g-skog]
    budget_owners: [nils@kaskade.example]
    quota: {gpus: {notebook: 2, tung: 8}, gpu_hours_per_week: 200}
    data_classes: [public]
    storage: {path: /data/skog, quota_gib: 512, pvc: skog-vol}
exceptions:
  - name: over-quota
    when: usage.gpus_in_use + request.gpus > team.quota.gpus[class.name]
    why: Beyond the team's quota
approvals: {timeout: 24h, fallback_approvers: [ops@kaskade.example]}
backend: kubernetes
directory:
  - {user: erik@kaskade.example, groups: [g-fjord]}
  - {user: astrid@kaskade.example, groups: [g-fjord]}
  - {user: sara@kaskade.example, groups: [g-skog]}
  - {user: nils@kaskade.example, groups: [g-skog]}
  - {user: ops@kaskade.example, groups: [ops]}
`

// kaskadeNode is a node of one of Kaskade's pools, tainted as its pool is.
func kaskadeNode(name, pool, res string, gpus int64) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name, "kaskade.se/pool": pool}},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("96"), corev1.ResourceName(res): *resource.NewQuantity(gpus, resource.DecimalSI)},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		}}
	return n
}

type fakeTelemetry map[qm.LeaseID]qm.Activity

func (f fakeTelemetry) Activity(_ context.Context, l *qm.Lease) (qm.Activity, bool) {
	a, ok := f[l.ID]
	return a, ok
}

type kaskade struct {
	*world
	clock *sim.Clock
	p     *policy.Policy
	store *store.DB
	tel   fakeTelemetry
}

func newKaskade(t *testing.T) *kaskade {
	t.Helper()
	p, err := policy.Load([]byte(kaskadePolicy), "kaskade.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cs := fake.NewClientset(pvc("qm-fjord", "fjord-data"),
		kaskadeNode("mig-01", "mig", "nvidia.com/mig-3g.40gb", 2),
		kaskadeNode("h100-01", "h100", "nvidia.com/gpu", 8))
	k := &kaskade{world: &world{t: t, cs: cs, notes: &qmtest.NoticeLog{}}, p: p, tel: fakeTelemetry{},
		clock: sim.NewClock(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))} // a Monday, 09:00 in Stockholm
	k.store = storetest.Open(t, storetest.SQLite(t))
	k.svc = k.service()
	return k
}

// service is the lease service as it starts: a new backend on the same cluster and database.
func (k *kaskade) service() *qm.Service {
	return &qm.Service{Policy: k.p, Store: k.store, Backend: newBackend(k.t, k.p, k.cs), Clock: k.clock, Directory: k.p,
		Notifier: k.notes, Telemetry: k.tel, Logger: storetest.Logger(k.t)}
}

func (k *kaskade) ask(user string, gpus int, class, tmpl string, d time.Duration) *qm.Lease {
	k.t.Helper()
	out, err := k.svc.Request(context.Background(), qm.LeaseRequest{User: user, GPUs: gpus, Class: class, Duration: d, Template: tmpl})
	if err != nil {
		k.t.Fatal(err)
	}
	return out.Lease
}

func (k *kaskade) job(ns, name string) *batchv1.Job {
	k.t.Helper()
	j, err := k.cs.BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		k.t.Fatalf("job %s/%s: %v", ns, name, err)
	}
	return j
}

func (k *kaskade) jobs(ns string) []batchv1.Job {
	l, err := k.cs.BatchV1().Jobs(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		k.t.Fatal(err)
	}
	return l.Items
}

// runPod plays the Job controller, scheduler and kubelet: the Job's pod runs on node, its main
// container started at.
func (k *kaskade) runPod(ns, job, node string, at time.Time) {
	k.t.Helper()
	k.addJobPod(ns, job, corev1.PodPending, "")
	k.setPod(ns, job+"-x1", func(p *corev1.Pod) {
		running(node)(p)
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: at}}}}}
	})
	k.setJob(ns, job, func(j *batchv1.Job) { j.Status.StartTime = &metav1.Time{Time: at}; j.Status.Active = 1 })
}

// pass is one round of the service's loops: the reconcile pass and the lifecycle tick.
func (k *kaskade) pass() {
	k.t.Helper()
	k.reconcile()
	if err := k.svc.Tick(context.Background()); err != nil {
		k.t.Fatal(err)
	}
}

func TestKaskadeWalk(t *testing.T) {
	ctx := context.Background()
	k := newKaskade(t)
	k.reconcile() // reads the inventory

	// A notebook on a MIG slice.
	nb := k.ask("erik@kaskade.example", 1, "notebook", "jupyterlab", 4*time.Hour)
	if nb.State != qm.Provisioning {
		t.Fatalf("notebook lease %s %q", nb.State, nb.Reason)
	}
	j := k.job("qm-fjord", "qm-l-1-jupyterlab")
	spec := j.Spec.Template.Spec
	if q := spec.Containers[0].Resources.Limits["nvidia.com/mig-3g.40gb"]; q.Value() != 1 {
		t.Errorf("limits %v", spec.Containers[0].Resources.Limits)
	}
	if spec.NodeSelector["kaskade.se/pool"] != "mig" {
		t.Errorf("node selector %v", spec.NodeSelector)
	}
	tols := map[string]bool{}
	for _, tl := range spec.Tolerations {
		tols[tl.Key] = true
	}
	if !tols["kaskade.se/mig"] || !tols["nvidia.com/gpu"] {
		t.Errorf("tolerations %+v", spec.Tolerations)
	}
	claim := false
	for _, v := range spec.Volumes {
		claim = claim || v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "fjord-data"
	}
	if !claim {
		t.Errorf("volumes %+v", spec.Volumes)
	}
	start := k.clock.Now().Add(2 * time.Minute)
	k.clock.Set(start.Add(10 * time.Second))
	k.runPod("qm-fjord", "qm-l-1-jupyterlab", "mig-01", start)
	k.reconcile()
	l := k.lease(nb.ID)
	if l.State != qm.Active || l.Node != "mig-01" || !strings.HasPrefix(l.Connect, "http://qm-l-1-jupyterlab.qm-fjord.svc:8888/") {
		t.Fatalf("notebook %s on %q connect %q", l.State, l.Node, l.Connect)
	}
	if !l.StartedAt.Equal(start) {
		t.Errorf("notebook started at %s, its container at %s", l.StartedAt, start)
	}
	t.Logf("notebook %s, notices %v", l.State, k.notes.Kinds(nb.ID))

	// A training job that is OOMKilled.
	oom := k.ask("erik@kaskade.example", 8, "tung", "cuda-smoke", 3*time.Hour)
	oomStart := k.clock.Now()
	k.runPod("qm-fjord", "qm-l-2-cuda-smoke", "h100-01", oomStart)
	k.reconcile()
	k.clock.Advance(20 * time.Minute)
	died := k.clock.Now().Add(-5 * time.Minute)
	k.setPod("qm-fjord", "qm-l-2-cuda-smoke-x1", func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137, Reason: "OOMKilled", StartedAt: p.Status.ContainerStatuses[0].State.Running.StartedAt, FinishedAt: metav1.Time{Time: died}}}}}
	})
	k.setJob("qm-fjord", "qm-l-2-cuda-smoke", func(j *batchv1.Job) {
		j.Status.Active, j.Status.Failed = 0, 1
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: metav1.Time{Time: died.Add(time.Second)}}}
	})
	k.reconcile()
	l = k.lease(oom.ID)
	t.Logf("OOM lease: %s %q ended %s (died %s)", l.State, l.Reason, l.EndedAt, died)
	if l.State != qm.Failed || !strings.Contains(l.Reason, "OOMKilled") || !strings.Contains(l.Reason, "137") {
		t.Errorf("OOM: %s %q", l.State, l.Reason)
	}
	if !l.EndedAt.Before(died.Add(2 * time.Second)) {
		t.Errorf("OOM lease ended %s; its pod died at %s", l.EndedAt, died)
	}
	for _, n := range k.notes.Of(qm.NoticeFailed, oom.ID) {
		t.Logf("notice %s: %+v", n.Kind, n.Lease.Reason)
	}

	// A team whose claim is not there yet.
	out, err := k.svc.Request(ctx, qm.LeaseRequest{User: "sara@kaskade.example", GPUs: 1, Class: "notebook", Duration: time.Hour})
	if err == nil || !strings.Contains(err.Error(), "PersistentVolumeClaim skog-vol") || out == nil || out.Lease.State != qm.Failed {
		t.Errorf("skog_lab without its claim: %v", err)
	}

	// A training lease running, then its node cordoned and a second one asked for.
	a := k.ask("erik@kaskade.example", 4, "tung", "cuda-smoke", 3*time.Hour)
	aStart := k.clock.Now()
	k.runPod("qm-fjord", "qm-l-4-cuda-smoke", "h100-01", aStart)
	k.reconcile()
	if l := k.lease(a.ID); l.State != qm.Active {
		t.Fatalf("a: %s %q", l.State, l.Reason)
	}
	k.clock.Advance(10 * time.Minute)
	node, _ := k.cs.CoreV1().Nodes().Get(ctx, "h100-01", metav1.GetOptions{})
	node.Spec.Unschedulable = true
	node.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}}
	if _, err := k.cs.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	k.reconcile()
	if l := k.lease(a.ID); l.State != qm.Active {
		t.Errorf("a on a cordoned node: %s %q", l.State, l.Reason)
	}
	b := k.ask("erik@kaskade.example", 4, "tung", "cuda-smoke", 2*time.Hour)
	k.reconcile()
	lb := k.lease(b.ID)
	t.Logf("b while h100-01 is cordoned: %s %q ref %q; jobs %d", lb.State, lb.Reason, lb.Ref, len(k.jobs("qm-fjord")))

	// Drained: a's pod is evicted and deleted; its Job fails.
	k.clock.Advance(5 * time.Minute)
	evicted := k.clock.Now()
	now := metav1.Time{Time: evicted}
	k.setPod("qm-fjord", "qm-l-4-cuda-smoke-x1", func(p *corev1.Pod) {
		p.DeletionTimestamp = &now
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", LastTransitionTime: now})
	})
	k.reconcile()
	la := k.lease(a.ID)
	t.Logf("a while its pod is being evicted: %s %q", la.State, la.Reason)
	if err := k.cs.CoreV1().Pods("qm-fjord").Delete(ctx, "qm-l-4-cuda-smoke-x1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	k.setJob("qm-fjord", "qm-l-4-cuda-smoke", func(j *batchv1.Job) {
		j.Status.Active, j.Status.Failed = 0, 1
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: metav1.Time{Time: evicted.Add(30 * time.Second)}}}
	})
	k.clock.Advance(time.Minute)
	k.reconcile()
	la = k.lease(a.ID)
	t.Logf("a after the drain: %s %q ended %s", la.State, la.Reason, la.EndedAt)
	if la.State != qm.Failed || !strings.Contains(la.Reason, "EvictionByEvictionAPI") {
		t.Errorf("a after its pod was evicted: %s %q", la.State, la.Reason)
	}

	// Uncordoned: b starts.
	node, _ = k.cs.CoreV1().Nodes().Get(ctx, "h100-01", metav1.GetOptions{})
	node.Spec.Unschedulable, node.Spec.Taints = false, nil
	if _, err := k.cs.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	k.pass() // b waited in the service's queue: the node is back in the inventory, and b starts
	k.reconcile()
	lb = k.lease(b.ID)
	t.Logf("b after uncordon: %s %q ref %q", lb.State, lb.Reason, lb.Ref)
	bJob := "qm-l-" + strings.TrimPrefix(string(b.ID.String()), "L-") + "-cuda-smoke"
	bStart := k.clock.Now().Add(time.Minute)
	k.clock.Set(bStart.Add(5 * time.Second))
	k.runPod("qm-fjord", bJob, "h100-01", bStart)
	k.reconcile()
	if lb = k.lease(b.ID); lb.State != qm.Active || !lb.StartedAt.Equal(bStart) {
		t.Errorf("b: %s started %s, its pod at %s", lb.State, lb.StartedAt, bStart)
	}

	// Extension raises b's deadline.
	if _, err := k.svc.Extend(ctx, "erik@kaskade.example", b.ID, time.Hour); err != nil {
		t.Fatal(err)
	}
	if d := *k.job("qm-fjord", bJob).Spec.ActiveDeadlineSeconds; d < 3*3600 {
		t.Errorf("b's deadline after a 1h extension of 2h: %ds", d)
	}

	// The service restarts: a new backend on the same cluster and database.
	k.svc = k.service()
	k.clock.Advance(time.Minute)
	k.reconcile()
	k.reconcile()
	// The notebook's and b's, and the OOMKilled and evicted leases' Jobs, kept a day: no second
	// Job for any lease.
	if n := len(k.jobs("qm-fjord")); n != 4 {
		t.Errorf("%d Jobs after a restart, want 4", n)
	}
	if lb = k.lease(b.ID); lb.State != qm.Active {
		t.Errorf("b after a restart: %s %q", lb.State, lb.Reason)
	}

	// The notebook sat idle from its start: warned after 1h, reclaimed 15m later.
	k.tel[nb.ID] = qm.Activity{LastActive: start, Seen: k.clock.Now(), ObservedSince: start, Interval: time.Minute}
	for i := 0; i < 20; i++ {
		k.clock.Advance(5 * time.Minute)
		a := k.tel[nb.ID]
		a.Seen = k.clock.Now()
		k.tel[nb.ID] = a
		k.pass()
	}
	l = k.lease(nb.ID)
	t.Logf("notebook: %s %q ended %s", l.State, l.Reason, l.EndedAt)
	if l.State != qm.Reclaimed {
		t.Errorf("idle notebook: %s", l.State)
	}
	if _, err := k.cs.BatchV1().Jobs("qm-fjord").Get(ctx, "qm-l-1-jupyterlab", metav1.GetOptions{}); err == nil {
		t.Errorf("the reclaimed notebook's Job is still there")
	}

	// b reaches its end: its Job is deleted.
	k.clock.Set(lb.ExpiresAt.Add(10 * time.Second))
	k.pass()
	lb = k.lease(b.ID)
	t.Logf("b: %s %q ended %s expires %s", lb.State, lb.Reason, lb.EndedAt, lb.ExpiresAt)
	if _, err := k.cs.BatchV1().Jobs("qm-fjord").Get(ctx, bJob, metav1.GetOptions{}); err == nil {
		t.Errorf("the expired lease's Job is still there")
	}
	for _, j := range k.jobs("qm-fjord") {
		t.Logf("left: job %s", j.Name)
	}

	// The week's showback.
	sb := &showback.Service{Policy: k.p, Source: k.store, Clock: k.clock}
	k.clock.Set(time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC))
	r, err := sb.Report(ctx, showback.WeekOf(start, k.p.Location), showback.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	// What the pods held: the notebook's slice from its container's start to its reclaim, the
	// OOMKilled job's 8 GPUs until it died, the evicted job's 4 until its Job failed, and b's 4
	// for its 2h and the hour it was extended by; the lease that never started nothing.
	held := map[string]float64{
		"fjord/notebook": qm.GPUHours(1, k.lease(nb.ID).EndedAt.Sub(start)),
		"fjord/tung": qm.GPUHours(8, died.Add(time.Second).Sub(oomStart)) + qm.GPUHours(4, evicted.Add(30*time.Second).Sub(aStart)) +
			qm.GPUHours(4, 3*time.Hour),
	}
	for _, row := range r.Rows {
		t.Logf("showback %s/%s: %.3f GPU-h, %.2f %s", row.Team, row.Class, row.GPUHours, row.Cost, k.p.Currency)
		c, _ := k.p.Class(row.Class)
		want := held[row.Team+"/"+row.Class]
		if math.Abs(row.GPUHours-want) > 0.01 || math.Abs(row.Cost-want*c.PricePerGPUHour) > 0.1 {
			t.Errorf("showback %s/%s: %.3f GPU-hours, %.2f %s; the pods held %.3f", row.Team, row.Class, row.GPUHours, row.Cost, k.p.Currency, want)
		}
	}
	for _, id := range []qm.LeaseID{nb.ID, oom.ID, a.ID, b.ID} {
		l := k.lease(id)
		t.Logf("%s: %d GPUs %s from %s to %s = %.3f GPU-h", id, l.GPUs, l.Class, l.StartedAt.Format("15:04:05"), l.EndedAt.Format("15:04:05"), qm.GPUHours(l.GPUs, l.EndedAt.Sub(l.StartedAt)))
	}
}

// TestKaskadeQueueAndRestart: with the training node full a request waits in the service's
// queue with no Job; a restart in between makes no Job for it and no second Job for the running
// lease; when the running lease is released the queued one gets its Job, once.
func TestKaskadeQueueAndRestart(t *testing.T) {
	ctx := context.Background()
	k := newKaskade(t)
	k.reconcile()
	full := k.ask("erik@kaskade.example", 8, "tung", "cuda-smoke", 3*time.Hour)
	k.runPod("qm-fjord", "qm-l-1-cuda-smoke", "h100-01", k.clock.Now())
	k.reconcile()
	if l := k.lease(full.ID); l.State != qm.Active {
		t.Fatalf("full: %s %q", l.State, l.Reason)
	}
	k.clock.Advance(time.Minute)
	wait := k.ask("astrid@kaskade.example", 4, "tung", "cuda-smoke", time.Hour)
	k.reconcile()
	lw := k.lease(wait.ID)
	t.Logf("waiting: %s %q ref %q, jobs %d", lw.State, lw.Reason, lw.Ref, len(k.jobs("qm-fjord")))
	k.svc = k.service()
	k.clock.Advance(time.Minute)
	k.pass()
	k.pass()
	t.Logf("after restart: jobs %d", len(k.jobs("qm-fjord")))
	if n := len(k.jobs("qm-fjord")); n > 2 {
		t.Errorf("%d Jobs after a restart", n)
	}
	if _, err := k.svc.Release(ctx, "erik@kaskade.example", full.ID); err != nil {
		t.Fatal(err)
	}
	k.pass()
	k.pass()
	lw = k.lease(wait.ID)
	t.Logf("after release: %s %q ref %q", lw.State, lw.Reason, lw.Ref)
	for _, j := range k.jobs("qm-fjord") {
		t.Logf("job %s", j.Name)
	}
	if n := len(k.jobs("qm-fjord")); n != 1 || lw.Ref == "" {
		t.Errorf("after the release: %d Jobs, the waiting lease's ref %q", n, lw.Ref)
	}
	t.Logf("notices %v", k.notes.Kinds(wait.ID))
}

// TestAFullExclusiveNodeOfTheTeamsOwnIsNoOtherTeams: a lease of an exclusive class that waits
// because its team's own leases fill the class's nodes is not told it waits for nodes no other
// team uses; one that waits because another team holds the node is.
func TestAFullExclusiveNodeOfTheTeamsOwnIsNoOtherTeams(t *testing.T) {
	k := newKaskade(t)
	if _, err := k.cs.CoreV1().PersistentVolumeClaims("qm-skog-lab-d87affb1").Create(context.Background(), pvc("qm-skog-lab-d87affb1", "skog-vol"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	k.reconcile()
	k.ask("erik@kaskade.example", 8, "tung", "cuda-smoke", 3*time.Hour)
	own := k.ask("astrid@kaskade.example", 4, "tung", "cuda-smoke", time.Hour)
	if own.State != qm.Queued || strings.Contains(own.Reason, "other team") {
		t.Errorf("waiting behind its own team's lease: %s %q", own.State, own.Reason)
	}
	if _, err := k.svc.Release(context.Background(), "erik@kaskade.example", 1); err != nil {
		t.Fatal(err)
	}
	k.pass()
	other := k.ask("sara@kaskade.example", 2, "tung", "cuda-smoke", time.Hour)
	if other.State != qm.Queued || !strings.Contains(other.Reason, "no other team uses") {
		t.Errorf("waiting behind another team's lease on the only node: %s %q", other.State, other.Reason)
	}
}

// TestKaskadeJobDeletedOutside: a running lease whose Job someone deletes with kubectl fails,
// its owner reads which Job went, and its bill ends when the pass found it gone.
func TestKaskadeJobDeletedOutside(t *testing.T) {
	ctx := context.Background()
	k := newKaskade(t)
	k.reconcile()
	l := k.ask("erik@kaskade.example", 1, "notebook", "", 2*time.Hour)
	k.runPod("qm-fjord", "qm-l-1-ssh-shell", "mig-01", k.clock.Now())
	k.reconcile()
	k.clock.Advance(40 * time.Minute)
	if err := k.cs.BatchV1().Jobs("qm-fjord").Delete(ctx, "qm-l-1-ssh-shell", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	k.pass()
	got := k.lease(l.ID)
	t.Logf("%s %q ended %s", got.State, got.Reason, got.EndedAt)
	if got.State != qm.Failed || !strings.Contains(got.Reason, "qm-l-1-ssh-shell") || !strings.Contains(got.Reason, "qm-fjord") {
		t.Errorf("deleted Job: %s %q", got.State, got.Reason)
	}
	if got.EndedAt.Sub(got.StartedAt) > 41*time.Minute {
		t.Errorf("billed %s for a Job deleted after 40m", got.EndedAt.Sub(got.StartedAt))
	}
	// Its Service, and its pod where the Job was deleted without its dependents (the API's
	// default for a batch/v1 Job, kubectl delete --cascade=orphan), which still holds its slice.
	k.clock.Advance(5 * time.Second)
	k.pass()
	svcs, _ := k.cs.CoreV1().Services("qm-fjord").List(ctx, metav1.ListOptions{})
	pods, _ := k.cs.CoreV1().Pods("qm-fjord").List(ctx, metav1.ListOptions{})
	if len(svcs.Items)+len(pods.Items) != 0 {
		t.Errorf("left behind: %d Services, %d pods", len(svcs.Items), len(pods.Items))
	}
}
