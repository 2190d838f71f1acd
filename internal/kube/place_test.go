package kube_test

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/acme/quartermaster/internal/kube"
	"github.com/acme/quartermaster/internal/qm"
)

// podTemplate starts a lease and returns its Job's pod template.
func podTemplate(t *testing.T, b *kube.Backend, cs *fake.Clientset, l *qm.Lease) corev1.PodTemplateSpec {
	t.Helper()
	st, err := b.Start(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	name := st.Ref[strings.LastIndexByte(st.Ref, '/')+1:]
	k, err := cs.BatchV1().Jobs("qm-"+l.Team).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return k.Spec.Template
}

// repels reports whether the pod template's required anti-affinity keeps it off a node that
// runs a pod with these labels in namespace ns (and, since the scheduler applies an existing
// pod's anti-affinity too, keeps such a pod off its node).
func repels(t *testing.T, tmpl corev1.PodTemplateSpec, ns string, podLabels map[string]string) bool {
	t.Helper()
	a := tmpl.Spec.Affinity
	if a == nil || a.PodAntiAffinity == nil {
		return false
	}
	for _, term := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		if term.TopologyKey != "kubernetes.io/hostname" {
			t.Errorf("anti-affinity topology %q, want per node", term.TopologyKey)
		}
		// Without a namespace selector a term sees only its own namespace: other teams' pods,
		// in their own namespaces, would be invisible to it.
		if term.NamespaceSelector == nil || len(term.NamespaceSelector.MatchLabels)+len(term.NamespaceSelector.MatchExpressions) != 0 {
			if ns != tmpl.Namespace && (len(term.Namespaces) == 0 || term.Namespaces[0] != ns) {
				t.Errorf("anti-affinity term %+v does not look at namespace %s", term, ns)
				continue
			}
		}
		sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
		if err != nil {
			t.Fatal(err)
		}
		if sel.Matches(labels.Set(podLabels)) {
			return true
		}
	}
	return false
}

// TestPlacedLeaseIsPinned: a lease the service placed runs only on its node(s), by node name;
// one it did not place carries no node affinity.
func TestPlacedLeaseIsPinned(t *testing.T) {
	cs := fake.NewClientset(pvc("qm-vision", "team-storage"))
	b := newBackend(t, examplePolicy(t), cs)
	tmpl := podTemplate(t, b, cs, &qm.Lease{ID: 5, User: "alice@acme.example", Team: "vision", Class: "interactive", GPUs: 1,
		Duration: time.Hour, Node: "l40s-02", GPUIndex: []int{3}})
	na := tmpl.Spec.Affinity.NodeAffinity
	if na == nil || na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		t.Fatalf("placed lease without a required node affinity: %+v", tmpl.Spec.Affinity)
	}
	terms := na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || len(terms[0].MatchFields) != 1 || terms[0].MatchFields[0].Key != "metadata.name" ||
		terms[0].MatchFields[0].Operator != corev1.NodeSelectorOpIn || strings.Join(terms[0].MatchFields[0].Values, ",") != "l40s-02" {
		t.Errorf("node affinity %+v, want metadata.name In [l40s-02]", terms)
	}
	if tmpl.Spec.Affinity.PodAntiAffinity != nil {
		t.Errorf("a shared class keeps others away: %+v", tmpl.Spec.Affinity.PodAntiAffinity)
	}

	tmpl = podTemplate(t, b, cs, &qm.Lease{ID: 6, User: "alice@acme.example", Team: "vision", Class: "interactive", GPUs: 1, Duration: time.Hour})
	if tmpl.Spec.Affinity != nil {
		t.Errorf("an unplaced lease of a shared class has an affinity: %+v", tmpl.Spec.Affinity)
	}
}

// TestExclusiveClassKeepsTeamsApart: on an exclusive class, a team's pods never share a node with
// another team's pods of that class, in whatever namespace, even where the scheduler places;
// pods of the same team, and of other classes, may. A reservation keeps every other lease off.
func TestExclusiveClassKeepsTeamsApart(t *testing.T) {
	cs := fake.NewClientset(pvc("qm-vision", "team-storage"), pvc("qm-language", "team-storage"))
	b := newBackend(t, examplePolicy(t), cs)
	vision := podTemplate(t, b, cs, &qm.Lease{ID: 1, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 2, Duration: time.Hour, Node: "h100-01"})
	language := podTemplate(t, b, cs, &qm.Lease{ID: 2, User: "lee@acme.example", Team: "language", Class: "train", GPUs: 2, Duration: time.Hour})
	shared := podTemplate(t, b, cs, &qm.Lease{ID: 3, User: "lee@acme.example", Team: "language", Class: "interactive", GPUs: 1, Duration: time.Hour})

	if !repels(t, vision, "qm-language", language.Labels) || !repels(t, language, "qm-vision", vision.Labels) {
		t.Error("two teams' pods of the exclusive class may share a node")
	}
	other := podTemplate(t, b, cs, &qm.Lease{ID: 4, User: "bob@acme.example", Team: "vision", Class: "train", GPUs: 2, Duration: time.Hour})
	if repels(t, vision, "qm-vision", other.Labels) {
		t.Error("one team's own pods of the exclusive class are kept apart")
	}
	if repels(t, vision, "qm-language", shared.Labels) || repels(t, shared, "qm-vision", vision.Labels) {
		t.Error("a shared class's pod is kept off an exclusive class's node")
	}

	res := podTemplate(t, b, cs, &qm.Lease{ID: 9, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 8, Duration: time.Hour,
		Node: "h100-02", Exclusive: true})
	if !repels(t, res, "qm-vision", other.Labels) || !repels(t, res, "qm-language", shared.Labels) {
		t.Error("a reservation shares its node with another lease")
	}
	if repels(t, res, "qm-vision", res.Labels) {
		t.Error("a reservation keeps its own pods apart")
	}
	if repels(t, res, "kube-system", map[string]string{"k8s-app": "nvidia-device-plugin"}) {
		t.Error("a reservation keeps the node's own daemons off")
	}
	// Another installation on the cluster numbers its leases alike: its L-9 is another lease.
	theirs := map[string]string{}
	for k, v := range res.Labels {
		theirs[k] = v
	}
	theirs[kube.LabelInstance] = "staging"
	if !repels(t, res, "qm-vision", theirs) {
		t.Error("a reservation shares its node with another installation's lease of the same number")
	}
}

// TestExtendedWorkspaceRunsOn: a workspace is a Job, whose deadline the reconcile pass raises
// when its lease is extended; the deadline counts from when the Job was made, so the time it
// waited before it ran (rounded up to whole minutes) is added.
func TestExtendedWorkspaceRunsOn(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	ws := w.request(1, "interactive", "") // 2 hours
	if !strings.HasPrefix(ws.Ref, "job/") {
		t.Fatalf("workspace %s is %q, want a Job", ws.ID, ws.Ref)
	}
	made := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
	w.setJob("qm-vision", "qm-l-1-ssh-shell", func(k *batchv1.Job) { k.Status.StartTime = &metav1.Time{Time: made} })
	w.addJobPod("qm-vision", "qm-l-1-ssh-shell", corev1.PodRunning, "gpu-a")
	w.setPod("qm-vision", "qm-l-1-ssh-shell-x1", func(p *corev1.Pod) {
		p.Status.StartTime = &metav1.Time{Time: made.Add(3*time.Minute + 20*time.Second)} // waited for a node
	})
	deadline := func() int64 {
		k, err := w.cs.BatchV1().Jobs("qm-vision").Get(ctx, "qm-l-1-ssh-shell", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return *k.Spec.ActiveDeadlineSeconds
	}
	if rep := w.reconcile(); rep.Activated != 1 {
		t.Errorf("first pass %v, want the workspace activated", rep)
	}
	if rep := w.reconcile(); rep.Retimed != 1 {
		t.Errorf("second pass %v, want the deadline moved by the wait", rep)
	}
	if got := deadline(); got != 2*3600+4*60 {
		t.Errorf("deadline after a 3m20s wait: %d s, want %d", got, 2*3600+4*60)
	}
	if rep := w.reconcile(); rep.Retimed != 0 {
		t.Errorf("the deadline is moved again on the next pass: %v", rep)
	}
	if _, err := w.svc.Extend(ctx, "alice@acme.example", ws.ID, time.Hour); err != nil {
		t.Fatal(err)
	}
	// The extension raised the deadline itself: the next pass has nothing left to raise.
	if rep := w.reconcile(); rep.Retimed != 0 {
		t.Errorf("pass after an extension %v", rep)
	}
	if got := deadline(); got != 3*3600+4*60 {
		t.Errorf("deadline after a 1h extension: %d s, want %d (3h from its start, the wait rounded up)", got, 3*3600+4*60)
	}
	jobs, err := w.svc.Backend.(qm.Watcher).Jobs(ctx)
	if err != nil || len(jobs) != 1 || jobs[0].TimeLimit != 3*time.Hour {
		t.Errorf("jobs %+v, %v; want one with a 3h limit", jobs, err)
	}
}

// TestFailedWorkspaceSaysWhy: a workspace that fails at once is reported with Kubernetes's state
// and reason, the exit code, its times and the last lines of its log (read once).
func TestFailedWorkspaceSaysWhy(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	var mu sync.Mutex
	var asked []*corev1.PodLogOptions
	log := "Generating public/private ed25519 key pair.\n" + strings.Repeat("progress 10%\rprogress 100%\n", 12) +
		"\x1b[31mbash: line 3: /usr/sbin/sshd: No such file or directory\x1b[0m\n"
	w.cs.PrependReactor("get", "pods/log", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		asked = append(asked, a.(k8stesting.GenericAction).GetValue().(*corev1.PodLogOptions))
		mu.Unlock()
		return true, &runtime.Unknown{Raw: []byte(log)}, nil
	})
	ws := w.request(1, "interactive", "")
	started := time.Date(2026, 11, 30, 15, 0, 5, 0, time.UTC)
	w.addJobPod("qm-vision", "qm-l-1-ssh-shell", corev1.PodFailed, "gpu-a")
	w.setPod("qm-vision", "qm-l-1-ssh-shell-x1", func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 127, Reason: "Error", StartedAt: metav1.Time{Time: started}, FinishedAt: metav1.Time{Time: started.Add(time.Second)}}}}}
	})
	w.setJob("qm-vision", "qm-l-1-ssh-shell", func(k *batchv1.Job) {
		k.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded",
			LastTransitionTime: metav1.Time{Time: started.Add(2 * time.Second)}}}
	})
	jobs, err := w.svc.Backend.(qm.Watcher).Jobs(ctx)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("jobs %+v, %v", jobs, err)
	}
	j := jobs[0]
	wantOut := strings.TrimSpace(strings.Repeat("progress 100%\n", 9) + "bash: line 3: /usr/sbin/sshd: No such file or directory")
	if j.State != qm.JobFailed || j.ExitCode != "127" || j.Reason != "exit code 127 (Kubernetes: Error, BackoffLimitExceeded)" ||
		!j.StartedAt.Equal(started) || !j.EndedAt.Equal(started.Add(2*time.Second)) || j.Output != wantOut || j.Node != "gpu-a" {
		t.Errorf("failed workspace reported as %+v\nwant exit code 127, Kubernetes's reason, its times and output %q", j, wantOut)
	}
	if len(asked) != 1 || asked[0].Container != "main" || asked[0].TailLines == nil || *asked[0].TailLines != 10 {
		t.Errorf("log asked with %+v, want the main container's last 10 lines", asked)
	}
	w.reconcile()
	if l := w.lease(ws.ID); l.State != qm.Failed || !strings.Contains(l.Reason, "exit code 127") {
		t.Errorf("lease %s %q, want failed with the exit code", l.State, l.Reason)
	}
	if _, err := w.svc.Backend.(qm.Watcher).Jobs(ctx); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 {
		t.Errorf("the log was read %d times; once is enough", len(asked))
	}

	// A log the API will not give leaves the output empty, not the report.
	w.cs.PrependReactor("get", "pods/log", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, io.ErrUnexpectedEOF
	})
	_ = w.request(1, "interactive", "")
	w.addJobPod("qm-vision", "qm-l-2-ssh-shell", corev1.PodFailed, "gpu-a")
	w.setJob("qm-vision", "qm-l-2-ssh-shell", func(k *batchv1.Job) {
		k.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"}}
	})
	jobs, err = w.svc.Backend.(qm.Watcher).Jobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Lease == 2 && (j.State != qm.JobFailed || j.Output != "" || j.Reason != "Kubernetes: BackoffLimitExceeded") {
			t.Errorf("failed workspace without a log: %+v", j)
		}
	}
}
