package kube_test

// No Kubernetes API server runs where these tests run, so they use client-go's fake clientset
// (k8s.io/client-go/kubernetes/fake): an in-memory object tracker behind the real typed client.
// It stores and lists objects (with label selectors) like the API server, but runs no
// controllers or scheduler: the tests play the scheduler and the kubelet by writing pod and Job
// status themselves.

import (
	"context"
	"fmt"
	"github.com/acme/quartermaster/internal/qm/qmtest"
	"reflect"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/acme/quartermaster/internal/kube"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/internal/templates"
	qmtemplates "github.com/acme/quartermaster/templates"
)

func examplePolicy(t *testing.T) *policy.Policy {
	t.Helper()
	p, err := policy.LoadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p.Backend = "kubernetes"
	return p
}

func catalog(t *testing.T) *templates.Catalog {
	t.Helper()
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func pvc(ns, name string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func newBackend(t *testing.T, p *policy.Policy, cs *fake.Clientset) *kube.Backend {
	t.Helper()
	b, err := kube.New(kube.Config{Policy: p, Catalog: catalog(t), Client: cs, Logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAnInstanceThatIsNoLabelValueIsRefusedAtStart: QM_KUBE_INSTANCE becomes the
// quartermaster.io/instance label of every object, so a value the API server would refuse (a
// space, a character labels do not take, over 63 characters) is refused when the backend is made,
// naming the variable, the rule and an example, instead of failing every lease later; a valid one
// is taken.
func TestAnInstanceThatIsNoLabelValueIsRefusedAtStart(t *testing.T) {
	for _, bad := range []string{"GPU pool", "prod/eu", "-edge", strings.Repeat("q", 64)} {
		_, err := kube.New(kube.Config{Policy: examplePolicy(t), Catalog: catalog(t), Client: fake.NewClientset(), Instance: bad})
		if err == nil || !strings.Contains(err.Error(), "QM_KUBE_INSTANCE") || !strings.Contains(err.Error(), fmt.Sprintf("%q", bad)) {
			t.Errorf("instance %q: %v; want a refusal naming QM_KUBE_INSTANCE and the value", bad, err)
		}
		// One sentence saying what a value may be, not the validator's regular expression.
		if msg := fmt.Sprint(err); strings.Contains(msg, "regex") || strings.Count(msg, "(") > 1 || !strings.Contains(msg, "63") || !strings.Contains(msg, "example: qm-prod") {
			t.Errorf("instance %q: %q is not one clear sentence with the rule and an example", bad, msg)
		}
	}
	if _, err := kube.New(kube.Config{Policy: examplePolicy(t), Catalog: catalog(t), Client: fake.NewClientset(), Instance: "qm-prod_2.eu"}); err != nil {
		t.Errorf("a valid instance: %v", err)
	}
}

// TestStartCreatesWorkloads: a workspace lease becomes a Job and a Service, a batch lease a Job,
// in the team's namespace, with the class's GPU limit and node selector, the team's PVC, the
// lease's deadline and labels carrying the lease id and team.
func TestStartCreatesWorkloads(t *testing.T) {
	ctx := context.Background()
	p := examplePolicy(t)
	p.Teams[1].Storage.PVC = "language-data"
	cs := fake.NewClientset()
	b := newBackend(t, p, cs)

	ws := &qm.Lease{ID: 7, User: "alice@acme.example", Team: "vision", Class: "interactive", GPUs: 1, Duration: time.Hour}
	if _, err := b.Start(ctx, ws); err == nil || !strings.Contains(err.Error(), "PersistentVolumeClaim team-storage") {
		t.Fatalf("start without the team's PVC: %v", err)
	}
	if _, err := cs.CoreV1().PersistentVolumeClaims("qm-vision").Create(ctx, pvc("qm-vision", "team-storage"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := b.Start(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, "qm-vision", metav1.GetOptions{})
	if err != nil || ns.Labels[kube.LabelTeam] != "vision" {
		t.Fatalf("team namespace: %v %v", ns, err)
	}
	want := qm.Started{State: qm.Provisioning, Ref: "job/qm-vision/qm-l-7-ssh-shell", Connect: "ssh -p 2222 alice@qm-l-7-ssh-shell.qm-vision.svc"}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("started %+v, want %+v", st, want)
	}
	wsJob, err := cs.BatchV1().Jobs("qm-vision").Get(ctx, "qm-l-7-ssh-shell", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkPodSpec(t, "workspace Job's pod template", wsJob.Spec.Template.Labels, wsJob.Spec.Template.Spec, "interactive", 1, "team-storage")
	if d := wsJob.Spec.ActiveDeadlineSeconds; d == nil || *d != 3600 {
		t.Errorf("workspace deadline %v, want 3600", d)
	}
	if wsJob.Spec.Template.Spec.Affinity != nil {
		t.Errorf("an unplaced lease of a shared class has an affinity: %+v", wsJob.Spec.Template.Spec.Affinity)
	}
	svc, err := cs.CoreV1().Services("qm-vision").Get(ctx, "qm-l-7-ssh-shell", metav1.GetOptions{})
	if err != nil || svc.Labels[kube.LabelLease] != "L-7" || svc.Labels[kube.LabelInstance] != kube.DefaultInstance {
		t.Errorf("service %v, %v", svc, err)
	}
	// A retried start adopts what is there.
	if st2, err := b.Start(ctx, ws); err != nil || st2.Ref != st.Ref {
		t.Errorf("second start: %+v, %v", st2, err)
	}

	if _, err := cs.CoreV1().PersistentVolumeClaims("qm-language").Create(ctx, pvc("qm-language", "language-data"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	batch := &qm.Lease{ID: 8, User: "lee@acme.example", Team: "language", Class: "train", GPUs: 2, Duration: 90 * time.Minute,
		Template: "cuda-smoke", Params: map[string]string{"size": "4096"}}
	st, err = b.Start(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if st.Ref != "job/qm-language/qm-l-8-cuda-smoke" || st.Connect != "" {
		t.Errorf("batch started %+v", st)
	}
	job, err := cs.BatchV1().Jobs("qm-language").Get(ctx, "qm-l-8-cuda-smoke", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if job.Labels[kube.LabelLease] != "L-8" || job.Labels[kube.LabelTeam] != "language" {
		t.Errorf("job labels %v", job.Labels)
	}
	if d := job.Spec.ActiveDeadlineSeconds; d == nil || *d != 5400 {
		t.Errorf("job deadline %v, want 5400", d)
	}
	checkPodSpec(t, "job's pod template", job.Spec.Template.Labels, job.Spec.Template.Spec, "train", 2, "language-data")
	if args := strings.Join(job.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(args, "4096") {
		t.Errorf("the job does not run with size=4096: %s", args)
	}
}

func checkPodSpec(t *testing.T, what string, labels map[string]string, spec corev1.PodSpec, class string, gpus int64, claim string) {
	t.Helper()
	if labels[kube.LabelLease] == "" || labels[kube.LabelTeam] == "" || labels[kube.LabelClass] != class || labels[kube.LabelInstance] != kube.DefaultInstance {
		t.Errorf("%s labels %v", what, labels)
	}
	if spec.NodeSelector["gpu.acme/class"] != class {
		t.Errorf("%s node selector %v, want gpu.acme/class=%s", what, spec.NodeSelector, class)
	}
	lim := spec.Containers[0].Resources.Limits[corev1.ResourceName("nvidia.com/gpu")]
	if !lim.Equal(*resource.NewQuantity(gpus, resource.DecimalSI)) {
		t.Errorf("%s GPU limit %s, want %d", what, lim.String(), gpus)
	}
	found := false
	for _, v := range spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
			found = true
		}
	}
	if !found {
		t.Errorf("%s does not mount PVC %s: %+v", what, claim, spec.Volumes)
	}
}

type world struct {
	t     *testing.T
	cs    *fake.Clientset
	svc   *qm.Service
	notes *qmtest.NoticeLog
}

// newWorld is a lease service on a fake cluster with the example policy's GPU nodes: gpu-a (4
// GPUs of class interactive), gpu-b and gpu-c (8 of class train). Its reconcile pass reads them
// into the inventory, after which the service places leases itself.
func newWorld(t *testing.T) *world {
	t.Helper()
	p := examplePolicy(t)
	cs := fake.NewClientset(pvc("qm-vision", "team-storage"),
		gpuNode("gpu-a", "interactive", 4, true), gpuNode("gpu-b", "train", 8, true), gpuNode("gpu-c", "train", 8, true))
	w := &world{t: t, cs: cs, notes: &qmtest.NoticeLog{}}
	w.svc = &qm.Service{Policy: p, Store: storetest.Open(t, storetest.SQLite(t)), Backend: newBackend(t, p, cs),
		Clock: sim.NewClock(time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)), Directory: p, Notifier: w.notes, Logger: storetest.Logger(t)}
	return w
}

func (w *world) request(gpus int, class, tmpl string) *qm.Lease {
	w.t.Helper()
	out, err := w.svc.Request(context.Background(), qm.LeaseRequest{User: "alice@acme.example", GPUs: gpus, Class: class, Duration: 2 * time.Hour, Template: tmpl})
	if err != nil {
		w.t.Fatal(err)
	}
	return out.Lease
}

func (w *world) reconcile() qm.ReconcileReport {
	w.t.Helper()
	rep, err := w.svc.Reconcile(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	return rep
}

func (w *world) lease(id qm.LeaseID) *qm.Lease {
	w.t.Helper()
	l, err := w.svc.Get(context.Background(), id)
	if err != nil {
		w.t.Fatal(err)
	}
	return l
}

// setPod plays the scheduler and kubelet: it rewrites a pod's node and status.
func (w *world) setPod(ns, name string, fn func(*corev1.Pod)) {
	w.t.Helper()
	ctx := context.Background()
	p, err := w.cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	fn(p)
	if _, err := w.cs.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) setJob(ns, name string, fn func(*batchv1.Job)) {
	w.t.Helper()
	ctx := context.Background()
	k, err := w.cs.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	fn(k)
	if _, err := w.cs.BatchV1().Jobs(ns).Update(ctx, k, metav1.UpdateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

// addJobPod plays the Job controller: a pod of the Job with its labels, named JOB-x1.
func (w *world) addJobPod(ns, job string, phase corev1.PodPhase, node string) {
	w.t.Helper()
	k, err := w.cs.BatchV1().Jobs(ns).Get(context.Background(), job, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job + "-x1", Labels: k.Spec.Template.Labels, UID: types.UID(job + "-x1-uid"),
		OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: job, APIVersion: "batch/v1"}}},
		Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
	if _, err := w.cs.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

func unschedulable(p *corev1.Pod) {
	p.Status.Phase = corev1.PodPending
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."}}
}

func running(node string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.NodeName = node
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = nil
	}
}

// TestStatusDrivesLeases: pod and Job status, polled through the clientset, move leases: an
// unschedulable pod queues its lease, a running one activates it with its node, a finished Job
// releases it, a deadline expires it, a failure fails it; the owner is told each time.
func TestStatusDrivesLeases(t *testing.T) {
	w := newWorld(t)
	ws := w.request(1, "interactive", "")
	if ws.State != qm.Provisioning || ws.Ref != "job/qm-vision/qm-l-1-ssh-shell" {
		t.Fatalf("workspace lease %s: %s %q", ws.ID, ws.State, ws.Ref)
	}
	w.addJobPod("qm-vision", "qm-l-1-ssh-shell", corev1.PodPending, "")
	w.setPod("qm-vision", "qm-l-1-ssh-shell-x1", unschedulable)
	if rep := w.reconcile(); rep.Queued != 1 {
		t.Errorf("report %v", rep)
	}
	if l := w.lease(ws.ID); l.State != qm.Queued || !strings.Contains(l.Reason, "Insufficient nvidia.com/gpu") {
		t.Errorf("unschedulable: %s %q", l.State, l.Reason)
	}
	// Placed but still pulling its image: no change.
	w.setPod("qm-vision", "qm-l-1-ssh-shell-x1", func(p *corev1.Pod) { p.Spec.NodeName = "gpu-a"; p.Status.Conditions = nil })
	w.reconcile()
	if l := w.lease(ws.ID); l.State != qm.Queued {
		t.Errorf("starting pod: lease %s", l.State)
	}
	w.setPod("qm-vision", "qm-l-1-ssh-shell-x1", running("gpu-a"))
	if rep := w.reconcile(); rep.Activated != 1 {
		t.Errorf("report %v", rep)
	}
	l := w.lease(ws.ID)
	if l.State != qm.Active || l.Node != "gpu-a" || l.Connect != "ssh -p 2222 alice@qm-l-1-ssh-shell.qm-vision.svc" {
		t.Errorf("running pod: %s on %q, connect %q", l.State, l.Node, l.Connect)
	}

	done := w.request(1, "train", "cuda-smoke")
	w.addJobPod("qm-vision", "qm-l-2-cuda-smoke", corev1.PodRunning, "gpu-b")
	w.reconcile()
	if l := w.lease(done.ID); l.State != qm.Active || l.Node != "gpu-b" {
		t.Errorf("running Job: %s on %q", l.State, l.Node)
	}
	// Extended in chat: the extension raises the Job's deadline to the lease's new length at
	// once, so the next pass has nothing left to raise.
	if _, err := w.svc.Extend(context.Background(), "alice@acme.example", done.ID, time.Hour); err != nil {
		t.Fatal(err)
	}
	if rep := w.reconcile(); rep.Retimed != 0 {
		t.Errorf("report after an extension %v", rep)
	}
	if k, _ := w.cs.BatchV1().Jobs("qm-vision").Get(context.Background(), "qm-l-2-cuda-smoke", metav1.GetOptions{}); *k.Spec.ActiveDeadlineSeconds != 3*3600 {
		t.Errorf("deadline after a 1h extension of a 2h lease: %d", *k.Spec.ActiveDeadlineSeconds)
	}
	w.setJob("qm-vision", "qm-l-2-cuda-smoke", func(k *batchv1.Job) {
		k.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	})

	late := w.request(1, "train", "cuda-smoke")
	w.setJob("qm-vision", "qm-l-3-cuda-smoke", func(k *batchv1.Job) {
		k.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded"}}
	})
	broken := w.request(1, "train", "cuda-smoke")
	w.addJobPod("qm-vision", "qm-l-4-cuda-smoke", corev1.PodFailed, "gpu-c")
	w.setPod("qm-vision", "qm-l-4-cuda-smoke-x1", func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}}}}
	})
	w.setJob("qm-vision", "qm-l-4-cuda-smoke", func(k *batchv1.Job) {
		k.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"}}
	})
	if rep := w.reconcile(); rep.Ended != 3 {
		t.Errorf("report %v", rep)
	}
	for _, c := range []struct {
		id     qm.LeaseID
		state  qm.State
		why    string
		notice qm.NoticeKind
	}{
		{done.ID, qm.Released, "finished", qm.NoticeFinished},
		{late.ID, qm.Expired, "time limit", qm.NoticeExpired},
		{broken.ID, qm.Failed, "exit code 3 (Kubernetes: Error, BackoffLimitExceeded)", qm.NoticeFailed},
	} {
		l := w.lease(c.id)
		k := w.notes.Kinds(c.id)
		if l.State != c.state || !strings.Contains(l.Reason, c.why) || len(k) == 0 || k[len(k)-1] != c.notice {
			t.Errorf("%s: %s %q, notices %v; want %s %q and %s", c.id, l.State, l.Reason, k, c.state, c.why, c.notice)
		}
	}
}

// TestReconcileCluster: an object carrying a lease id that has no live lease is deleted; a live
// lease whose Job was deleted behind the service's back fails and its owner is told; release
// deletes the lease's Job, its pods and its Service.
func TestReconcileCluster(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "qm-vision", Name: "qm-l-999-ssh-shell",
		Labels: map[string]string{kube.LabelLease: "L-999", kube.LabelTeam: "vision", kube.LabelInstance: kube.DefaultInstance}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	foreign := orphan.DeepCopy()
	foreign.Name, foreign.Labels = "someone-elses", map[string]string{kube.LabelLease: "L-999", kube.LabelInstance: "other"}
	for _, p := range []*corev1.Pod{orphan, foreign} {
		if _, err := w.cs.CoreV1().Pods("qm-vision").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	gone := w.request(1, "interactive", "")
	w.addJobPod("qm-vision", "qm-l-1-ssh-shell", corev1.PodRunning, "gpu-a")
	kept := w.request(1, "interactive", "jupyterlab")
	w.addJobPod("qm-vision", "qm-l-2-jupyterlab", corev1.PodRunning, "gpu-a")
	w.reconcile()

	if err := w.cs.BatchV1().Jobs("qm-vision").Delete(ctx, "qm-l-1-ssh-shell", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	rep := w.reconcile()
	if rep.Cancelled != 0 || rep.Vanished != 1 {
		t.Errorf("report %v", rep)
	}
	if _, err := w.cs.CoreV1().Pods("qm-vision").Get(ctx, "qm-l-999-ssh-shell", metav1.GetOptions{}); err == nil {
		t.Error("the orphan pod is still there")
	}
	if _, err := w.cs.CoreV1().Pods("qm-vision").Get(ctx, "someone-elses", metav1.GetOptions{}); err != nil {
		t.Errorf("another instance's pod was touched: %v", err)
	}
	if l := w.lease(gone.ID); l.State != qm.Failed || !strings.Contains(l.Reason, "gone") {
		t.Errorf("deleted pod: lease %s %q", l.State, l.Reason)
	}
	if k := w.notes.Kinds(gone.ID); len(k) == 0 || k[len(k)-1] != qm.NoticeFailed {
		t.Errorf("owner told %v", k)
	}

	l := w.lease(kept.ID)
	if l.State != qm.Active || !strings.HasPrefix(l.Connect, "http://qm-l-2-jupyterlab.qm-vision.svc:8888/lab?token=") {
		t.Fatalf("jupyterlab lease %s, connect %q", l.State, l.Connect)
	}
	if _, err := w.svc.Release(ctx, "alice@acme.example", kept.ID); err != nil {
		t.Fatal(err)
	}
	jobs, _ := w.cs.BatchV1().Jobs("qm-vision").List(ctx, metav1.ListOptions{LabelSelector: kube.LabelLease + "=L-2"})
	pods, _ := w.cs.CoreV1().Pods("qm-vision").List(ctx, metav1.ListOptions{LabelSelector: kube.LabelLease + "=L-2"})
	svcs, _ := w.cs.CoreV1().Services("qm-vision").List(ctx, metav1.ListOptions{LabelSelector: kube.LabelLease + "=L-2"})
	if len(jobs.Items)+len(pods.Items)+len(svcs.Items) != 0 {
		t.Errorf("after release: %d Jobs, %d pods and %d services of L-2 left", len(jobs.Items), len(pods.Items), len(svcs.Items))
	}
}

// TestTeamWithUnderscoreGetsAWorkload: the policy allows "_" in team and class names (and a team
// not in the policy is named after an IdP group such as ml_research), which a namespace cannot
// hold: such a team's lease becomes a Job in a namespace of its own that is a DNS label, labelled
// with the team's name, instead of failing to start.
func TestTeamWithUnderscoreGetsAWorkload(t *testing.T) {
	ctx := context.Background()
	p := examplePolicy(t)
	p.Classes[1].Name = "h100_sxm"
	cs := fake.NewClientset()
	b := newBackend(t, p, cs)
	l := &qm.Lease{ID: 9, User: "kim@acme.example", Team: "ml_research", Class: "h100_sxm", GPUs: 2, Duration: time.Hour}
	ns := templates.TeamNamespace("ml_research")
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 || ns == templates.TeamNamespace("ml-research") {
		t.Fatalf("namespace %q: %v", ns, errs)
	}
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc(ns, "team-storage"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := b.Start(ctx, l)
	if err != nil {
		t.Fatalf("start for team ml_research: %v", err)
	}
	if st.Ref != "job/"+ns+"/qm-l-9-ssh-shell" {
		t.Errorf("started %+v", st)
	}
	n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil || n.Labels[kube.LabelTeam] != "ml_research" {
		t.Fatalf("namespace %v: %v", n, err)
	}
	job, err := cs.BatchV1().Jobs(ns).Get(ctx, "qm-l-9-ssh-shell", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if job.Spec.Template.Labels[kube.LabelTeam] != "ml_research" || job.Spec.Template.Labels[kube.LabelClass] != "h100_sxm" {
		t.Errorf("pod labels %v", job.Spec.Template.Labels)
	}
	jobs, err := b.Jobs(ctx)
	if err != nil || len(jobs) != 1 || jobs[0].Lease != 9 {
		t.Errorf("jobs %+v, %v", jobs, err)
	}
}

// TestImagePullErrorFailsTheLease: a pod placed on its node whose image cannot be pulled
// (a wrong tag, a registry that refuses) waits there, holding its GPUs, until its Job's deadline:
// Kubernetes never fails it. The lease fails at once with Kubernetes's words and the image, its
// owner is told, and its Job and Service are deleted so the GPUs are free again.
func TestImagePullErrorFailsTheLease(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ reason, message string }{
		{"ImagePullBackOff", `Back-off pulling image "registry.example/vision/jupyter:nope"`},
		{"ErrImagePull", `rpc error: code = NotFound desc = failed to pull and unpack image "registry.example/vision/jupyter:nope": not found`},
		{"InvalidImageName", `Failed to apply default image tag "Registry/UPPER": couldn't parse image name`},
		// Not the image, but as final: the container cannot be made from the pod's spec.
		{"CreateContainerConfigError", `container has runAsNonRoot and image will run as root (pod: "qm-l-1-jupyterlab-x1_qm-vision(1)", container: main)`},
	} {
		t.Run(c.reason, func(t *testing.T) {
			w := newWorld(t)
			ws := w.request(1, "interactive", "jupyterlab")
			w.addJobPod("qm-vision", "qm-l-1-jupyterlab", corev1.PodPending, "gpu-a")
			w.setPod("qm-vision", "qm-l-1-jupyterlab-x1", func(p *corev1.Pod) {
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "registry.example/vision/jupyter:nope",
					State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: c.reason, Message: c.message}}}}
			})
			if rep := w.reconcile(); rep.Ended != 1 {
				t.Errorf("report %v", rep)
			}
			l := w.lease(ws.ID)
			if l.State != qm.Failed || !strings.Contains(l.Reason, c.reason) || !strings.Contains(l.Reason, "registry.example/vision/jupyter:nope") && c.reason != "CreateContainerConfigError" {
				t.Errorf("lease %s %q, want failed naming %s and the image", l.State, l.Reason, c.reason)
			}
			if c.reason == "CreateContainerConfigError" && !strings.Contains(l.Reason, "runAsNonRoot") {
				t.Errorf("lease %s %q, want Kubernetes's words", l.State, l.Reason)
			}
			if k := w.notes.Kinds(ws.ID); len(k) == 0 || k[len(k)-1] != qm.NoticeFailed {
				t.Errorf("owner told %v", k)
			}
			jobs, _ := w.cs.BatchV1().Jobs("qm-vision").List(ctx, metav1.ListOptions{})
			svcs, _ := w.cs.CoreV1().Services("qm-vision").List(ctx, metav1.ListOptions{})
			if len(jobs.Items)+len(svcs.Items) != 0 {
				t.Errorf("%d Jobs and %d Services left holding the failed lease's GPUs", len(jobs.Items), len(svcs.Items))
			}

			// After a crash between failing the lease and deleting its workload, the next pass
			// deletes it as an orphan.
			orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "qm-vision", Name: "qm-l-1-ssh-shell",
				Labels: map[string]string{kube.LabelLease: "L-1", kube.LabelTeam: "vision", kube.LabelInstance: kube.DefaultInstance}},
				Spec: corev1.PodSpec{NodeName: "gpu-a", Containers: []corev1.Container{{Name: "main", Image: "registry.example/vision/jupyter:nope"}}},
				Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "main",
					State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: c.reason, Message: c.message}}}}}}
			if _, err := w.cs.CoreV1().Pods("qm-vision").Create(ctx, orphan, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if rep := w.reconcile(); rep.Cancelled != 1 {
				t.Errorf("report %v, want the failed lease's leftover pod cancelled", rep)
			}
			if _, err := w.cs.CoreV1().Pods("qm-vision").Get(ctx, orphan.Name, metav1.GetOptions{}); err == nil {
				t.Error("the failed lease's pod still waits for its image on gpu-a")
			}
		})
	}
}

// TestReplacedPodRequeuesTheLease: a running workspace whose pod is replaced (evicted, its node
// drained, with a layout whose pod failure policy lets the Job make another) does not run until
// the new pod does, even when the scheduler placed the new pod at once and it is still starting
// on another node: its owner hears that it went back to the queue, then where it runs again.
func TestReplacedPodRequeuesTheLease(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	ws := w.request(2, "train", "cuda-smoke")
	w.addJobPod("qm-vision", "qm-l-1-cuda-smoke", corev1.PodRunning, "gpu-b")
	w.reconcile()
	if l := w.lease(ws.ID); l.State != qm.Active || l.Node != "gpu-b" {
		t.Fatalf("lease %s on %q", l.State, l.Node)
	}
	started := metav1.Time{Time: time.Date(2026, 11, 30, 15, 0, 5, 0, time.UTC)}
	w.setPod("qm-vision", "qm-l-1-cuda-smoke-x1", func(p *corev1.Pod) {
		p.Status.Phase, p.Status.Reason = corev1.PodFailed, "Evicted"
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137, Reason: "Error", StartedAt: started}}}}
	})
	k, err := w.cs.BatchV1().Jobs("qm-vision").Get(ctx, "qm-l-1-cuda-smoke", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	next := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "qm-vision", Name: "qm-l-1-cuda-smoke-x2", Labels: k.Spec.Template.Labels,
		UID: "qm-l-1-cuda-smoke-x2-uid", OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: k.Name, APIVersion: "batch/v1"}}},
		Spec: corev1.PodSpec{NodeName: "gpu-c"}, Status: corev1.PodStatus{Phase: corev1.PodPending,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}}}
	if _, err := w.cs.CoreV1().Pods("qm-vision").Create(ctx, next, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	if l := w.lease(ws.ID); !qm.Requeued(l) {
		t.Errorf("replaced pod starting on gpu-c: lease %s %q, want it back in the queue", l.State, l.Reason)
	}
	if k := w.notes.Kinds(ws.ID); len(k) == 0 || k[len(k)-1] != qm.NoticeRequeued {
		t.Errorf("owner told %v, want requeued last", k)
	}
	w.setPod("qm-vision", "qm-l-1-cuda-smoke-x2", running("gpu-c"))
	w.reconcile()
	if l := w.lease(ws.ID); l.State != qm.Active || qm.Requeued(l) || l.Node != "gpu-c" {
		t.Errorf("replaced pod running: lease %s %q on %q", l.State, l.Reason, l.Node)
	}
	if k := w.notes.Kinds(ws.ID); len(k) != 3 || k[2] != qm.NoticeGranted {
		t.Errorf("owner told %v, want granted, requeued, granted", k)
	}
}

// TestLostNodeSaysWhy: a workspace whose node disappears loses its pod (Kubernetes deletes it,
// saying why in its DisruptionTarget condition) and its Job fails; the lease fails with that
// reason and the node, not only the Job's BackoffLimitExceeded.
func TestLostNodeSaysWhy(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	ws := w.request(2, "train", "cuda-smoke")
	w.addJobPod("qm-vision", "qm-l-1-cuda-smoke", corev1.PodRunning, "gpu-b")
	w.reconcile()
	if err := w.cs.CoreV1().Nodes().Delete(ctx, "gpu-b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	w.setPod("qm-vision", "qm-l-1-cuda-smoke-x1", func(p *corev1.Pod) {
		p.DeletionTimestamp = &now
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: "DeletionByPodGC", Message: "PodGC: node no longer exists"})
	})
	w.setJob("qm-vision", "qm-l-1-cuda-smoke", func(k *batchv1.Job) {
		k.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"}}
	})
	w.reconcile()
	if l := w.lease(ws.ID); l.State != qm.Failed || !strings.Contains(l.Reason, "node no longer exists") {
		t.Errorf("lease %s %q, want failed saying its node is gone", l.State, l.Reason)
	}
}

// TestAFinishedJobIsDeletedADayLater: a Job that finished on its own ends its lease at once, and
// it, its pods and its Service are deleted a day after it finished, so that finished Jobs do not
// pile up in the teams' namespaces (and in every pass's listing) while their owners have a day
// to read their logs.
func TestAFinishedJobIsDeletedADayLater(t *testing.T) {
	w := newWorld(t)
	clock := w.svc.Clock.(*sim.Clock)
	done := w.request(1, "train", "cuda-smoke")
	w.addJobPod("qm-vision", "qm-l-1-cuda-smoke", corev1.PodRunning, "gpu-b")
	w.reconcile()
	w.setJob("qm-vision", "qm-l-1-cuda-smoke", func(k *batchv1.Job) {
		k.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
		k.Status.CompletionTime = &metav1.Time{Time: clock.Now()}
	})
	if rep := w.reconcile(); rep.Ended != 1 || rep.Removed != 0 {
		t.Fatalf("the pass that ends the lease: %v", rep)
	}
	if l := w.lease(done.ID); l.State != qm.Released {
		t.Fatalf("finished Job: lease %s", l.State)
	}
	clock.Advance(12 * time.Hour)
	if rep := w.reconcile(); rep.Removed != 0 {
		t.Errorf("half a day after it finished: %v", rep)
	}
	if _, err := w.cs.BatchV1().Jobs("qm-vision").Get(context.Background(), "qm-l-1-cuda-smoke", metav1.GetOptions{}); err != nil {
		t.Errorf("the Job was deleted within a day: %v", err)
	}
	clock.Advance(13 * time.Hour)
	if rep := w.reconcile(); rep.Removed != 1 {
		t.Errorf("a day after it finished: %v", rep)
	}
	if _, err := w.cs.BatchV1().Jobs("qm-vision").Get(context.Background(), "qm-l-1-cuda-smoke", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Job is still there a day after it finished: %v", err)
	}
}

// TestAWaitingJobOutlivesItsDeadline: a Job's activeDeadlineSeconds counts from the Job's start,
// its wait in the queue included, so a workspace that waits longer than its lease lasts would be
// ended by Kubernetes before it ever ran, and its lease reported expired. While it waits the
// service raises the deadline, about once an hour, to the wait so far and the lease's length.
// The train nodes are not there yet (a pool that scales from zero makes them when a pod asks),
// so the scheduler, not the service, places the workspace.
func TestAWaitingJobOutlivesItsDeadline(t *testing.T) {
	w := newWorld(t)
	clock := w.svc.Clock.(*sim.Clock)
	for _, n := range []string{"gpu-b", "gpu-c"} {
		if err := w.cs.CoreV1().Nodes().Delete(context.Background(), n, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	l := w.request(1, "train", "cuda-smoke") // a 2h lease
	w.setJob("qm-vision", "qm-l-1-cuda-smoke", func(k *batchv1.Job) { k.Status.StartTime = &metav1.Time{Time: clock.Now()} })
	w.addJobPod("qm-vision", "qm-l-1-cuda-smoke", corev1.PodPending, "")
	w.setPod("qm-vision", "qm-l-1-cuda-smoke-x1", unschedulable)
	deadline := func() time.Duration {
		k, err := w.cs.BatchV1().Jobs("qm-vision").Get(context.Background(), "qm-l-1-cuda-smoke", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return time.Duration(*k.Spec.ActiveDeadlineSeconds) * time.Second
	}
	if rep := w.reconcile(); rep.Queued != 1 || rep.Retimed != 0 || deadline() != 2*time.Hour {
		t.Fatalf("just queued: %v, deadline %s", rep, deadline())
	}
	for _, wait := range []time.Duration{time.Hour + 45*time.Minute, 4 * time.Hour, 9 * time.Hour} {
		clock.Set(l.CreatedAt.Add(wait))
		w.reconcile()
		if d := deadline(); d <= wait+30*time.Minute {
			t.Errorf("after waiting %s the deadline is %s: the Job would be ended while it waits", wait, d)
		}
	}
	if got := w.lease(l.ID); got.State != qm.Queued {
		t.Errorf("the lease is %s after waiting 9h", got.State)
	}
	// It runs at last: its 2h end before the deadline.
	w.setPod("qm-vision", "qm-l-1-cuda-smoke-x1", func(p *corev1.Pod) {
		running("gpu-b")(p)
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: clock.Now()}}}}}
	})
	w.reconcile()
	if got := w.lease(l.ID); got.State != qm.Active {
		t.Fatalf("the lease is %s once its pod runs", got.State)
	}
	if d := deadline(); d < 9*time.Hour+2*time.Hour {
		t.Errorf("running after a 9h wait, the deadline is %s: its 2h would be cut short", d)
	}
}

// TestWorkloadsTolerateTheGPUTaint: GPU pools are often tainted with the GPU resource's name
// (nvidia.com/gpu:NoSchedule) so that only pods asking for GPUs land there; every workspace's pods
// tolerate that taint, or they would wait as unschedulable on such a pool.
func TestWorkloadsTolerateTheGPUTaint(t *testing.T) {
	w := newWorld(t)
	w.request(1, "train", "cuda-smoke")
	k, err := w.cs.BatchV1().Jobs("qm-vision").Get(context.Background(), "qm-l-1-cuda-smoke", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ok := false
	for _, tol := range k.Spec.Template.Spec.Tolerations {
		ok = ok || (tol.Key == "nvidia.com/gpu" && tol.Operator == corev1.TolerationOpExists && tol.Effect == corev1.TaintEffectNoSchedule)
	}
	if !ok {
		t.Errorf("the Job's pods do not tolerate nvidia.com/gpu:NoSchedule: %+v", k.Spec.Template.Spec.Tolerations)
	}
}
