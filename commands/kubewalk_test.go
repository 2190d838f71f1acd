package commands

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/kube"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	"github.com/acme/quartermaster/reports/showback"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// kubeHarness is the whole bot on the Kubernetes backend, over client-go's fake clientset (an
// object store with no scheduler or controllers: the tests write pod and Job status themselves).
type kubeHarness struct {
	*harness
	cs *fake.Clientset
}

func kubeNode(name string, lbl map[string]string, res string, n int64) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbl},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceName(res): *resource.NewQuantity(n, resource.DecimalSI)},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
}

func newKubeHarness(t *testing.T, policyFile string, objs ...runtime.Object) *kubeHarness {
	t.Helper()
	p, err := policy.LoadFile(policyFile)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), "sqlite::memory:", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	cs := fake.NewClientset(objs...)
	b, err := kube.New(kube.Config{Policy: p, Catalog: cat, Client: cs})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, clock: sim.NewClock(start)}
	h.svc = &qm.Service{Policy: p, Store: st, Clock: h.clock, Backend: b, Directory: p}
	h.bot = &Bot{Svc: h.svc}
	AddTemplates(h.bot, cat, workload.Settings{})
	AddReport(h.bot, &showback.Service{Policy: p, Source: st, Clock: h.clock})
	h.svc.Notifier = &Notices{Bot: h.bot, Sender: bot.SenderFunc(func(_ context.Context, r bot.Reply) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.sent = append(h.sent, r)
		return nil
	})}
	return &kubeHarness{harness: h, cs: cs}
}

func (k *kubeHarness) reconcile() {
	k.t.Helper()
	if _, err := k.svc.Reconcile(context.Background()); err != nil {
		k.t.Fatal(err)
	}
}

func (k *kubeHarness) job(ns, name string) *batchv1.Job {
	k.t.Helper()
	j, err := k.cs.BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		k.t.Fatal(err)
	}
	return j
}

func (k *kubeHarness) setJob(ns, name string, fn func(*batchv1.Job)) {
	k.t.Helper()
	j := k.job(ns, name)
	fn(j)
	if _, err := k.cs.BatchV1().Jobs(ns).Update(context.Background(), j, metav1.UpdateOptions{}); err != nil {
		k.t.Fatal(err)
	}
}

// addPod plays the Job controller: a pod of the Job with its template's labels.
func (k *kubeHarness) addPod(ns, job, name string, fn func(*corev1.Pod)) {
	k.t.Helper()
	j := k.job(ns, job)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: j.Spec.Template.Labels, UID: types.UID(name + "-uid"),
		OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: job, APIVersion: "batch/v1"}}},
		Spec: *j.Spec.Template.Spec.DeepCopy(), Status: corev1.PodStatus{Phase: corev1.PodPending}}
	fn(p)
	if _, err := k.cs.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		k.t.Fatal(err)
	}
}

func (k *kubeHarness) setPod(ns, name string, fn func(*corev1.Pod)) {
	k.t.Helper()
	p, err := k.cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		k.t.Fatal(err)
	}
	fn(p)
	if _, err := k.cs.CoreV1().Pods(ns).Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		k.t.Fatal(err)
	}
}

func (k *kubeHarness) deletePod(ns, name string) {
	k.t.Helper()
	if err := k.cs.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		k.t.Fatal(err)
	}
}

func podRunsOn(node string, at time.Time) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.NodeName = node
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = nil
		p.Status.StartTime = &metav1.Time{Time: at}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: at}}}}}
	}
}

func podUnschedulable(msg string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.NodeName = ""
		p.Status.Phase = corev1.PodPending
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: msg}}
	}
}

// borealisNodes is the cluster of testdata/borealis-kube.yaml: one MIG node with three
// 2g.20gb slices, tainted for its class, and two H200 nodes of 8.
func borealisNodes() []runtime.Object {
	return []runtime.Object{
		kubeNode("mig-1", map[string]string{"pool.borealis.io/tier": "mig"}, "nvidia.com/mig-2g.20gb", 3),
		kubeNode("h200-1", map[string]string{"pool.borealis.io/tier": "h200"}, "nvidia.com/gpu", 8),
		kubeNode("h200-2", map[string]string{"pool.borealis.io/tier": "h200"}, "nvidia.com/gpu", 8),
	}
}

// TestAMissingTeamClaimIsNamedToTheUser: a team whose PersistentVolumeClaim a cluster admin has
// not made yet cannot start a workspace; its member reads which claim is missing, in which
// namespace, and that an admin must make it, not a bare "could not be started".
func TestAMissingTeamClaimIsNamedToTheUser(t *testing.T) {
	k := newKubeHarness(t, "testdata/borealis-kube.yaml", borealisNodes()...)
	k.reconcile()
	r := k.say("ines@borealis.example", "/gpu request 1 slice 2h")
	for _, want := range []string{"PersistentVolumeClaim rl-scratch", "namespace qm-rl-agents-a4b8f902", "cluster admin", "nothing is charged"} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("reply %q\nwant it to say %q", r.Text, want)
		}
	}
	id := leaseIn(t, r.Text)
	if l, err := k.svc.Get(context.Background(), id); err != nil || l.State != qm.Failed || !strings.Contains(l.Reason, "rl-scratch") {
		t.Errorf("lease: %+v %v", l, err)
	}
}

// borealisClaims are the teams' claims of testdata/borealis-kube.yaml, which a cluster admin
// made before their first leases.
func borealisClaims() []runtime.Object {
	return []runtime.Object{
		&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "qm-rl-agents-a4b8f902", Name: "rl-scratch"}},
		&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "qm-speech", Name: "team-storage"}},
	}
}

// suspend plays someone outside Quartermaster (a cluster admin's kubectl patch, a queueing
// controller) suspending a Job, and the Job controller, which deletes its pods: a suspended
// Job holds no GPU.
func (k *kubeHarness) suspend(ns, job, pod string) {
	k.t.Helper()
	k.setJob(ns, job, func(j *batchv1.Job) {
		on := true
		j.Spec.Suspend = &on
		j.Status.Active, j.Status.StartTime = 0, nil // its deadline does not count while it is suspended
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue,
			Reason: "JobSuspended", Message: "Job suspended", LastTransitionTime: metav1.Time{Time: k.clock.Now()}})
	})
	k.deletePod(ns, pod)
}

// resume plays the Job resumed (its start time reset, as Kubernetes does) and a new pod of it running.
func (k *kubeHarness) resume(ns, job, pod, node string) {
	k.t.Helper()
	now := k.clock.Now()
	k.setJob(ns, job, func(j *batchv1.Job) {
		off := false
		j.Spec.Suspend = &off
		j.Status.StartTime = &metav1.Time{Time: now}
		for i := range j.Status.Conditions {
			if j.Status.Conditions[i].Type == batchv1.JobSuspended {
				j.Status.Conditions[i].Status, j.Status.Conditions[i].Reason = corev1.ConditionFalse, "JobResumed"
			}
		}
	})
	k.addPod(ns, job, pod, podRunsOn(node, now))
}

// TestASuspendedJobIsToldAsSuspendedAndNotBilled: a running workspace whose Job someone outside
// Quartermaster suspends gives its GPUs back (Kubernetes deletes a suspended Job's pods). Its
// owner reads that it was suspended, not that it waits in the scheduler's queue; that it is not
// billed until it runs again; that its GPUs still count in the team's quota; when the lease
// still ends; and no address to connect to while nothing runs. The bill leaves the suspension
// out, and the notice of its return estimates what the bill will be to the lease's end.
func TestASuspendedJobIsToldAsSuspendedAndNotBilled(t *testing.T) {
	k := newKubeHarness(t, "testdata/borealis-kube.yaml", append(borealisNodes(), borealisClaims()...)...)
	k.reconcile()
	const ines, ns = "ines@borealis.example", "qm-rl-agents-a4b8f902"
	id := leaseIn(t, k.say(ines, "/gpu request 2 slice 3h").Text)
	l, _ := k.svc.Get(context.Background(), id)
	job := l.Ref[strings.LastIndex(l.Ref, "/")+1:]
	k.addPod(ns, job, job+"-a", podRunsOn("mig-1", k.clock.Now()))
	k.reconcile()
	k.notices(ines)

	k.advance(time.Hour)
	k.suspend(ns, job, job+"-a")
	k.reconcile()
	told := k.notices(ines)
	if len(told) != 1 {
		t.Fatalf("notices on suspension: %+v", told)
	}
	text := told[0].Text
	for _, want := range []string{"suspended", "not billed", "the quota of team rl_agents still counts its 2 GPUs", "The lease still ends Mon 30 Nov 13:00 EST"} {
		if !strings.Contains(text, want) {
			t.Errorf("suspension notice %q\nwant it to say %q", text, want)
		}
	}
	if strings.Contains(text, "scheduler's queue") {
		t.Errorf("suspension notice %q: a suspended Job does not wait in the scheduler's queue", text)
	}
	if st := k.say(ines, "/gpu status "+id.String()).Text; strings.Contains(st, "Connect:") || !strings.Contains(st, "suspended") {
		t.Errorf("status while suspended: %q; want it suspended and no address, since nothing runs", st)
	}
	if st := k.say(ines, "/gpu status "+id.String()).PlainText(); strings.Contains(st, "Node: mig-1") || !strings.Contains(st, "Last ran on: mig-1") {
		t.Errorf("status while suspended: %q; want mig-1 as where it last ran, not where it is", st)
	}
	// An extension meanwhile moves its end, and does not say it runs.
	if r := k.say(ines, "/gpu extend "+id.String()+" 1h").Text; strings.Contains(r, "now runs") || !strings.Contains(r, "now ends Mon 30 Nov 14:00 EST") || !strings.Contains(r, "does not run until its job runs again") {
		t.Errorf("extension while suspended: %q", r)
	}
	// The quota says the same rule: the GPUs count, and the wait is not billed.
	if q := k.say(ines, "/gpu quota").PlainText(); !strings.Contains(q, "slice: 2 of 3 GPUs in use, 2 of them by leases waiting to run (counted here, not billed until they run)") {
		t.Errorf("quota while suspended: %q", q)
	}

	k.advance(30 * time.Minute)
	k.resume(ns, job, job+"-b", "mig-1")
	k.reconcile()
	told = k.notices(ines)
	// Back at 11:30 to 14:00: 2h30m more of 2 GPUs at 0.40, after 1h already run: 2.80 CAD in all.
	if len(told) != 1 || !strings.Contains(told[0].Text, "Estimated cost 2.80 CAD") || !strings.Contains(told[0].Text, "Connect:") {
		t.Errorf("notices on resumption: %+v\nwant the address and the lease's estimated bill, 2.80 CAD", told)
	}

	k.advance(30 * time.Minute)
	// Ran 10:00-11:00 and 11:30-12:00: 1h30m of 2 GPUs, 1.20 CAD.
	if r := k.say(ines, "/gpu release "+id.String()).Text; !strings.Contains(r, "It used 3.00 GPU-hours, 1.20 CAD.") {
		t.Errorf("release: %q; want the suspension left out of the bill", r)
	}
}

// TestAFailedLeaseSaysWhatItCost: a lease that fails tells its owner what it cost, as every other
// end does: a two-node job of the exclusive class whose second pod is evicted after 30 minutes
// ran 16 GPUs for 30 minutes; a workspace whose image cannot be pulled never ran and cost nothing.
func TestAFailedLeaseSaysWhatItCost(t *testing.T) {
	k := newKubeHarness(t, "testdata/borealis-kube.yaml", append(borealisNodes(), borealisClaims()...)...)
	k.reconcile()
	const ines, ns = "ines@borealis.example", "qm-rl-agents-a4b8f902"
	id := leaseIn(t, k.say(ines, "/gpu submit pytorch-ddp nnodes=2 script=train.py class=bigiron").Text)
	l, _ := k.svc.Get(context.Background(), id)
	job := l.Ref[strings.LastIndex(l.Ref, "/")+1:]
	k.addPod(ns, job, job+"-0", podRunsOn("h200-1", k.clock.Now()))
	k.addPod(ns, job, job+"-1", podRunsOn("h200-2", k.clock.Now()))
	k.reconcile()
	k.notices(ines)
	k.advance(30 * time.Minute)
	k.setPod(ns, job+"-1", func(p *corev1.Pod) {
		p.Status.Phase, p.Status.Reason, p.Status.Message = corev1.PodFailed, "Evicted", "The node was low on resource: memory."
	})
	k.reconcile()
	told := posted(k.notices(ines))
	if len(told) != 1 || !strings.Contains(told[0].Text, "failed") || !strings.Contains(told[0].Text, "It used 8.00 GPU-hours, 32.00 CAD") {
		t.Errorf("notices of the failed job: %+v\nwant its bill, 8.00 GPU-hours and 32.00 CAD", told)
	}

	id = leaseIn(t, k.say(ines, "/gpu request 1 slice 1h template jupyterlab").Text)
	l, _ = k.svc.Get(context.Background(), id)
	job = l.Ref[strings.LastIndex(l.Ref, "/")+1:]
	k.addPod(ns, job, job+"-a", func(p *corev1.Pod) {
		p.Spec.NodeName = "mig-1"
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "manifest unknown"}}}}
	})
	k.reconcile()
	told = k.notices(ines)
	if len(told) != 1 || !strings.Contains(told[0].Text, "ErrImagePull") || !strings.Contains(told[0].Text, "It never started, so nothing was billed.") {
		t.Errorf("notices of the workspace that could not pull its image: %+v\nwant that it never started and cost nothing", told)
	}
}

// TestALeaseThatNeverRanSaysWhyWhenItsDeadlinePasses: a workspace the scheduler never placed
// (its node lost the class's label) is ended by its Job's deadline. Its owner reads that it
// never ran and what it waited for, not that a workspace was ended, and that nothing was billed.
func TestALeaseThatNeverRanSaysWhyWhenItsDeadlinePasses(t *testing.T) {
	k := newKubeHarness(t, "testdata/borealis-kube.yaml", append(borealisNodes(), borealisClaims()...)...)
	k.reconcile()
	const pim, ns = "pim@borealis.example", "qm-speech"
	id := leaseIn(t, k.say(pim, "/gpu request 1 slice 1h").Text)
	l, _ := k.svc.Get(context.Background(), id)
	job := l.Ref[strings.LastIndex(l.Ref, "/")+1:]
	k.addPod(ns, job, job+"-a", podUnschedulable("0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."))
	k.setJob(ns, job, func(j *batchv1.Job) { j.Status.StartTime = &metav1.Time{Time: k.clock.Now()} })
	k.reconcile()
	k.notices(pim) // that it waits, and why
	k.advance(61 * time.Minute)
	k.setJob(ns, job, func(j *batchv1.Job) {
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded",
			Message: "Job was active longer than specified deadline", LastTransitionTime: metav1.Time{Time: k.clock.Now()}}}
	})
	k.deletePod(ns, job+"-a")
	k.reconcile()
	told := k.notices(pim)
	if len(told) != 1 {
		t.Fatalf("notices: %+v", told)
	}
	text := told[0].Text
	for _, want := range []string{"never ran", "didn't match Pod's node affinity/selector", "nothing was billed"} {
		if !strings.Contains(text, want) {
			t.Errorf("notice %q\nwant it to say %q", text, want)
		}
	}
	if strings.Contains(text, "workspace was ended") {
		t.Errorf("notice %q: no workspace ever ran to be ended", text)
	}
}

// TestAWorkspaceTheSchedulerCannotPlaceIsToldOnce: the request's reply says the scheduler is
// placing the workspace; when Kubernetes then says it cannot (no free MIG slice), its owner is
// told once that it waits and why, that nothing is billed until it runs, and can cancel it; a
// later pass that finds it still waiting says nothing more.
func TestAWorkspaceTheSchedulerCannotPlaceIsToldOnce(t *testing.T) {
	k := newKubeHarness(t, "testdata/borealis-kube.yaml", append(borealisNodes(), borealisClaims()...)...)
	k.reconcile()
	const pim, ns = "pim@borealis.example", "qm-speech"
	id := leaseIn(t, k.say(pim, "/gpu request 1 slice 1h").Text)
	l, _ := k.svc.Get(context.Background(), id)
	job := l.Ref[strings.LastIndex(l.Ref, "/")+1:]
	k.addPod(ns, job, job+"-a", podUnschedulable("0/3 nodes are available: 1 Insufficient nvidia.com/mig-2g.20gb."))
	k.reconcile()
	told := k.notices(pim)
	if len(told) != 1 {
		t.Fatalf("notices when Kubernetes cannot place it: %+v; want one", told)
	}
	text := told[0].Text
	for _, want := range []string{id.String(), "Insufficient nvidia.com/mig-2g.20gb", "Nothing is billed until it runs"} {
		if !strings.Contains(text, want) {
			t.Errorf("notice %q\nwant it to say %q", text, want)
		}
	}
	if a := told[0].Actions; len(a) != 1 || a[0].Command != "/gpu cancel "+id.String() {
		t.Errorf("notice actions %+v; want one to cancel it", a)
	}
	k.advance(5 * time.Minute)
	k.reconcile()
	if again := k.notices(pim); len(again) != 0 {
		t.Errorf("a later pass told it again: %+v", again)
	}
}

// TestAJobDeletedOutsideQuartermasterIsNamedAsKubernetesNamesIt: someone deletes a running
// workspace's Job (kubectl delete). Its owner reads which Job in which namespace is gone, as
// Kubernetes names it, not the service's own reference to it ("job job/qm-speech/…"), and what
// the lease cost up to then.
func TestAJobDeletedOutsideQuartermasterIsNamedAsKubernetesNamesIt(t *testing.T) {
	k := newKubeHarness(t, "testdata/borealis-kube.yaml", append(borealisNodes(), borealisClaims()...)...)
	k.reconcile()
	const pim, ns = "pim@borealis.example", "qm-speech"
	id := leaseIn(t, k.say(pim, "/gpu request 1 slice 2h").Text)
	l, _ := k.svc.Get(context.Background(), id)
	job := l.Ref[strings.LastIndex(l.Ref, "/")+1:]
	k.addPod(ns, job, job+"-a", podRunsOn("mig-1", k.clock.Now()))
	k.reconcile()
	k.notices(pim)
	k.advance(30 * time.Minute)
	if err := k.cs.BatchV1().Jobs(ns).Delete(context.Background(), job, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	k.deletePod(ns, job+"-a")
	k.reconcile()
	told := posted(k.notices(pim))
	want := "its Job " + job + " in namespace " + ns + " is gone from the cluster"
	if len(told) != 1 || !strings.Contains(told[0].Text, want) || strings.Contains(told[0].Text, "job/") || !strings.Contains(told[0].Text, "0.20 CAD") {
		t.Errorf("notices: %+v\nwant one saying %q and the bill, 0.20 CAD", told, want)
	}
}

// TestASuspensionWhileTheServiceWasDownIsNotBilled: a Job suspended while the service was down
// gave its GPUs back when Kubernetes says it was suspended (its Suspended condition), not when
// the service came back and saw it: the bill leaves out the whole suspension.
func TestASuspensionWhileTheServiceWasDownIsNotBilled(t *testing.T) {
	k := newKubeHarness(t, "testdata/borealis-kube.yaml", append(borealisNodes(), borealisClaims()...)...)
	k.reconcile()
	const pim, ns = "pim@borealis.example", "qm-speech"
	id := leaseIn(t, k.say(pim, "/gpu request 1 slice 2h").Text)
	l, _ := k.svc.Get(context.Background(), id)
	job := l.Ref[strings.LastIndex(l.Ref, "/")+1:]
	k.addPod(ns, job, job+"-a", podRunsOn("mig-1", k.clock.Now()))
	k.reconcile()
	k.advance(30 * time.Minute)
	k.suspend(ns, job, job+"-a") // dated now, 30 minutes in
	k.advance(45 * time.Minute)  // the service is down: no pass sees it
	k.reconcile()
	// Ran 30 minutes of its 1h15m: 0.50 GPU-hours, 0.20 CAD.
	if r := k.say(pim, "/gpu release "+id.String()).Text; !strings.Contains(r, "It used 0.50 GPU-hours, 0.20 CAD.") {
		t.Errorf("release: %q; want only the 30 minutes it ran billed", r)
	}
}
