package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/acme/quartermaster/internal/qm"
)

// mainContainer is the container every template runs its workload in.
const mainContainer = "main"

// podJob says what a lease's own Pod is doing: a workspace started as a bare Pod (before
// workspaces became Jobs, or by a layout of the install's own).
func podJob(p *corev1.Pod) qm.Job {
	j := qm.Job{Node: p.Spec.NodeName, StartedAt: podStarted(p)}
	if p.DeletionTimestamp != nil {
		j.State = qm.JobEnding
		return j
	}
	switch p.Status.Phase {
	case corev1.PodPending:
		pj := pendingPod(p)
		pj.StartedAt = time.Time{}
		return pj
	case corev1.PodRunning:
		j.State = qm.JobRunning
	case corev1.PodSucceeded:
		j.State, j.Reason, j.ExitCode, j.EndedAt = qm.JobCompleted, "exit code 0", "0", podEnded(p)
	case corev1.PodFailed:
		j.EndedAt = podEnded(p)
		if p.Status.Reason == "DeadlineExceeded" {
			j.State = qm.JobTimeout
			return j
		}
		f := podFailure(p)
		j.State, j.ExitCode, j.Reason = qm.JobFailed, f.code, f.reason()
	default:
		j.State = qm.JobEnding
	}
	return j
}

// pendingPod is a pending pod: waiting for the scheduler (queued), placed and starting, or placed
// and unable to pull its image (failed, and held: see pullFailure).
func pendingPod(p *corev1.Pod) qm.Job {
	if p.Spec.NodeName != "" {
		if why := pullFailure(p); why != "" {
			return qm.Job{State: qm.JobFailed, Node: p.Spec.NodeName, Reason: "Kubernetes: " + why, Held: true}
		}
		return qm.Job{State: qm.JobStarting, Node: p.Spec.NodeName, Reason: startingReason(p)}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != "" {
			why := c.Reason
			if c.Message != "" {
				why += ": " + clip(qm.OneLine(c.Message))
			}
			return qm.Job{State: qm.JobPending, Reason: "Kubernetes: " + why}
		}
	}
	return qm.Job{State: qm.JobPending}
}

// startingReason says where a placed pod starts and what Kubernetes says of it ("starting on
// gpu-a (Kubernetes: ContainerCreating)"), so that a queued lease's reason follows its pod from
// the scheduler's word to its node's instead of keeping the first.
func startingReason(p *corev1.Pod) string {
	why := "starting on " + p.Spec.NodeName
	statuses := append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, cs := range statuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return why + " (Kubernetes: " + clip(qm.OneLine(w.Reason)) + ")"
		}
	}
	return why
}

// pullErrors are the waiting reasons of a container whose image the kubelet cannot pull or
// cannot use, and configErrors those of one it cannot make from the pod's spec (a secret or
// config map it names is missing, a security policy it breaks: runAsNonRoot with an image that
// runs as root). Kubernetes never fails such a pod: it waits on its node, holding its GPUs,
// until its deadline.
var (
	pullErrors   = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true}
	configErrors = map[string]bool{"CreateContainerConfigError": true}
)

// pullFailure says why a placed pod cannot start because of its image ("ImagePullBackOff:
// Back-off pulling image …") or its spec ("CreateContainerConfigError: secret "hf-token" not
// found"); "" when none of its containers waits for either.
func pullFailure(p *corev1.Pod) string {
	statuses := append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, cs := range statuses {
		w := cs.State.Waiting
		if w == nil || !pullErrors[w.Reason] && !configErrors[w.Reason] {
			continue
		}
		why := w.Reason
		msg := qm.OneLine(w.Message)
		if msg != "" {
			why += ": " + clip(msg)
		}
		image := cs.Image
		for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
			if c.Name == cs.Name && c.Image != "" {
				image = c.Image
			}
		}
		if pullErrors[w.Reason] && image != "" && !strings.Contains(msg, image) {
			why += " (image " + image + ")"
		}
		return why
	}
	return ""
}

// failure is why a pod failed: its failed container's exit code and Kubernetes's own words.
type failure struct {
	code  string   // "127", "signal 9"; empty when no container exited
	words []string // "Error", "OOMKilled: …", "Evicted: The node was low on resource: memory."
}

// reason reads "exit code 127 (Kubernetes: Error)", "killed by signal 9 (Kubernetes: Error)" or
// "Kubernetes: Evicted: …".
func (f failure) reason() string {
	words := strings.Join(f.words, ", ")
	switch {
	case f.code != "" && words != "":
		return qm.ExitWords(f.code) + " (Kubernetes: " + words + ")"
	case f.code != "":
		return qm.ExitWords(f.code)
	case words != "":
		return "Kubernetes: " + words
	}
	return "the pod failed"
}

// podFailure says why a pod failed: its failed container (main first), else the pod's status.
func podFailure(p *corev1.Pod) failure {
	var f failure
	statuses := append([]corev1.ContainerStatus(nil), p.Status.ContainerStatuses...)
	sort.SliceStable(statuses, func(i, j int) bool { return statuses[i].Name == mainContainer && statuses[j].Name != mainContainer })
	for _, cs := range statuses {
		t := cs.State.Terminated
		if t == nil || (t.ExitCode == 0 && t.Signal == 0) {
			continue
		}
		f.code = strconv.Itoa(int(t.ExitCode))
		if t.Signal != 0 {
			f.code = fmt.Sprintf("signal %d", t.Signal)
		}
		w := t.Reason
		if m := qm.OneLine(t.Message); m != "" {
			if w != "" {
				w += ": "
			}
			w += clip(m)
		}
		if w != "" {
			f.words = append(f.words, w)
		}
		break
	}
	if f.code == "" && p.Status.Reason != "" {
		w := p.Status.Reason
		if m := qm.OneLine(p.Status.Message); m != "" {
			w += ": " + clip(m)
		}
		f.words = append(f.words, w)
	}
	if len(f.words) == 0 {
		// A pod that Kubernetes deleted says why in its DisruptionTarget condition
		// ("DeletionByPodGC: PodGC: node no longer exists", a preemption, a taint).
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason != "" {
				w := c.Reason
				if m := qm.OneLine(c.Message); m != "" {
					w += ": " + clip(m)
				}
				f.words = append(f.words, w)
				break
			}
		}
	}
	return f
}

// podStarted is when the pod's workload started: its main container's start, else when the
// kubelet took the pod; zero when it has not started.
func podStarted(p *corev1.Pod) time.Time {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name != mainContainer {
			continue
		}
		if r := cs.State.Running; r != nil && !r.StartedAt.IsZero() {
			return r.StartedAt.Time
		}
		if t := cs.State.Terminated; t != nil && !t.StartedAt.IsZero() {
			return t.StartedAt.Time
		}
	}
	if p.Status.StartTime != nil && p.Status.Phase != corev1.PodPending {
		return p.Status.StartTime.Time
	}
	return time.Time{}
}

// podEnded is when the pod's last container finished; zero when it does not say.
func podEnded(p *corev1.Pod) time.Time {
	var end time.Time
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.FinishedAt.Time.After(end) {
			end = t.FinishedAt.Time
		}
	}
	return end
}

// batchJob says what a lease's Job is doing, from its conditions and its pods, and which pod
// failed (for its log) when it failed.
func batchJob(k *batchv1.Job, pods []*corev1.Pod) (qm.Job, *corev1.Pod) {
	j := qm.Job{StartedAt: jobStarted(k, pods)}
	if k.DeletionTimestamp != nil {
		j.State = qm.JobEnding
		return j, nil
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	for _, c := range k.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete, batchv1.JobSuccessCriteriaMet:
			// SuccessCriteriaMet: the Job succeeded and its controller stops the pods left (a
			// multi-node Job whose leader finished) before it is Complete.
			j.State, j.Reason, j.ExitCode = qm.JobCompleted, "exit code 0", "0"
			if k.Status.CompletionTime != nil {
				j.EndedAt = k.Status.CompletionTime.Time
			} else {
				j.EndedAt = c.LastTransitionTime.Time
			}
			return j, nil
		case batchv1.JobFailed, batchv1.JobFailureTarget:
			// FailureTarget: the Job failed (a pod failed, its deadline passed) and its
			// controller stops the pods left before it is Failed.
			j.EndedAt = c.LastTransitionTime.Time
			if c.Reason == "DeadlineExceeded" {
				j.State = qm.JobTimeout
				return j, nil
			}
			var failed *corev1.Pod
			for _, p := range pods {
				if p.Status.Phase == corev1.PodFailed {
					failed = p
					break
				}
			}
			for _, p := range pods {
				// Else a pod Kubernetes is deleting (its node is gone, it was preempted): the
				// Job failed because of it.
				if failed == nil && p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded {
					failed = p
				}
			}
			var f failure
			if failed != nil {
				f = podFailure(failed)
				j.Node = failed.Spec.NodeName
				if end := podEnded(failed); j.EndedAt.IsZero() {
					j.EndedAt = end
				}
			} else if lostPods(k, pods) > 0 {
				if lf, node, ok := keptLoss(k); ok {
					f, j.Node = lf, node
				} else {
					f.words = append(f.words, lostWords)
				}
			}
			if c.Reason != "" {
				f.words = append(f.words, c.Reason)
			}
			j.State, j.ExitCode, j.Reason = qm.JobFailed, f.code, f.reason()
			return j, failed
		case batchv1.JobSuspended:
			// Kubernetes deletes a suspended Job's pods: it holds no GPU until it is resumed.
			j.State, j.Reason, j.SuspendedFree, j.HaltedAt = qm.JobPending, "Kubernetes: the Job is suspended", true, c.LastTransitionTime.Time
			return j, nil
		}
	}
	// A pod that cannot pull its image fails the Job, even beside pods that run: Kubernetes
	// would hold it until the deadline.
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodPending {
			if pj := pendingPod(p); pj.State == qm.JobFailed {
				pj.StartedAt = j.StartedAt
				return pj, nil
			}
		}
	}
	lost := lostPods(k, pods)
	if n := gang(k); n > 0 {
		return gangJob(j, k, pods, n, lost)
	}
	live := 0
	// A pod of the Job that ran and failed or is going, or one it counted failed that is gone
	// already: any other is its replacement, and the workload runs again from its start.
	replaced := lost > 0
	for _, p := range pods {
		if (p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodFailed) && !podStarted(p).IsZero() {
			replaced = true
		}
		if alive(p) {
			live++
		}
	}
	if live == 0 {
		switch {
		case k.Status.Active > 0 || deleting(pods) || ended(k, pods):
			// Its pod is going, or gone before the Job controller saw it (the Job still counts
			// it active), or ended before the Job's condition says how: the Job's next status
			// says whether it finished, failed or makes another.
			j.State = qm.JobEnding
			return j, nil
		case lost > 0 && !replacing(k):
			// Gone before a pass saw it fail, and the Job makes no other (its backoffLimit):
			// it fails, and the Job, with nothing left to read, is deleted at once.
			return qm.Job{State: qm.JobFailed, StartedAt: j.StartedAt, Reason: lostReason(k), Held: true}, nil
		case lost > 0:
			return qm.Job{State: qm.JobPending, StartedAt: j.StartedAt, Reason: lostReason(k) + "; the Job is making another"}, nil
		}
		// No pods yet: the Job controller has not made them.
		return qm.Job{State: qm.JobStarting}, nil
	}
	var starting, pending *qm.Job
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		switch p.Status.Phase {
		case corev1.PodRunning:
			j.State, j.Node = qm.JobRunning, p.Spec.NodeName
			if replaced && (k.Spec.Parallelism == nil || *k.Spec.Parallelism <= 1) {
				// A replacement runs (of a Job of one pod; an array's tasks come and go): its
				// owner hears that the workspace restarted, and why.
				j.Restarted = podStarted(p)
				j.Reason = lossWhy(k, pods) + "; a new pod runs on " + p.Spec.NodeName
			}
			return j, nil
		case corev1.PodPending:
			pj := pendingPod(p)
			if pj.State == qm.JobStarting && starting == nil {
				starting = &pj
			}
			if pj.State == qm.JobPending && pending == nil {
				pending = &pj
			}
		}
	}
	if pending != nil {
		return *pending, nil
	}
	if replaced && starting != nil {
		// The workload is gone from its node and its new pod starts elsewhere: it waits, as a
		// requeued job does, whether or not the scheduler was seen holding the new pod.
		return qm.Job{State: qm.JobPending, StartedAt: j.StartedAt, Reason: "Kubernetes: its pod was replaced; the new one is starting on " + starting.Node}, nil
	}
	if starting == nil {
		return qm.Job{State: qm.JobStarting}, nil
	}
	// Placed and starting: its reason says where and what Kubernetes says of it.
	return *starting, nil
}

// lostWords says that a pod is gone without a trace: the Job counted it failed, but it was
// deleted (by someone, or by Kubernetes with its node) before a pass saw why.
const lostWords = "its pod is gone (deleted, or lost with its node)"

// lostPods is how many of the Job's pods it counted failed (or has yet to count: its
// uncountedTerminatedPods) beyond those the pod list still shows failed or being deleted: pods
// gone before a pass saw them end, whose reason nobody can read any more.
func lostPods(k *batchv1.Job, pods []*corev1.Pod) int {
	counted := int(k.Status.Failed)
	if u := k.Status.UncountedTerminatedPods; u != nil {
		counted += len(u.Failed)
	}
	for _, p := range pods {
		if p.Status.Phase == corev1.PodFailed || (p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded) {
			counted--
		}
	}
	return max(0, counted)
}

// replacing reports whether the Job makes another pod for one that failed: its failures are
// within its backoffLimit (6 where it gives none), or it counts them per index.
func replacing(k *batchv1.Job) bool {
	if k.Spec.BackoffLimitPerIndex != nil {
		return true
	}
	limit := int32(6)
	if k.Spec.BackoffLimit != nil {
		limit = *k.Spec.BackoffLimit
	}
	failed := k.Status.Failed
	if u := k.Status.UncountedTerminatedPods; u != nil {
		failed += int32(len(u.Failed))
	}
	return failed <= limit
}

// alive reports whether a pod waits or runs and is not being deleted.
func alive(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && (p.Status.Phase == corev1.PodPending || p.Status.Phase == corev1.PodRunning)
}

// ended reports whether a pod of the Job succeeded or failed, by the pods left or the Job's count
// of succeeded pods.
func ended(k *batchv1.Job, pods []*corev1.Pod) bool {
	if k.Status.Succeeded > 0 || (k.Status.UncountedTerminatedPods != nil && len(k.Status.UncountedTerminatedPods.Succeeded) > 0) {
		return true
	}
	for _, p := range pods {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			return true
		}
	}
	return false
}

// deleting reports whether one of the pods is being deleted and has not succeeded.
func deleting(pods []*corev1.Pod) bool {
	for _, p := range pods {
		if p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded {
			return true
		}
	}
	return false
}

// lossWhy says why a Job's workload was lost: the reason of its pod that ran and failed or is
// being deleted, else that its pod is gone.
func lossWhy(k *batchv1.Job, pods []*corev1.Pod) string {
	for _, p := range pods {
		if (p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodFailed) && !podStarted(p).IsZero() {
			f := podFailure(p)
			if f.code == "" && len(f.words) == 0 {
				return "Kubernetes: its pod was deleted"
			}
			return f.reason()
		}
	}
	return lostReason(k)
}

// AnnotationLostPod keeps on a Job why its pod that ran failed or is being deleted (evicted by a
// drain, preempted, its node gone), as a pass saw it: once Kubernetes has deleted the pod, only
// the Job's count of failed pods is left, and the lease's reason is read from here. Its value is
// JSON: {"code": "137", "words": ["EvictionByEvictionAPI: Eviction API: evicting"], "node": "h100-01"}.
const AnnotationLostPod = "quartermaster.io/lost-pod"

type lostPod struct {
	Code  string   `json:"code,omitempty"`
	Words []string `json:"words,omitempty"`
	Node  string   `json:"node,omitempty"`
}

// goingPod is why a pod of the Job that ran is failing or being deleted, as AnnotationLostPod
// keeps it; ok is false when no such pod says why.
func goingPod(pods []*corev1.Pod) (string, bool) {
	for _, p := range pods {
		if (p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodFailed) || p.Status.Phase == corev1.PodSucceeded || podStarted(p).IsZero() {
			continue
		}
		f := podFailure(p)
		if f.code == "" && len(f.words) == 0 {
			continue
		}
		b, err := json.Marshal(lostPod{Code: f.code, Words: f.words, Node: p.Spec.NodeName})
		if err != nil {
			return "", false
		}
		return string(b), true
	}
	return "", false
}

// keptLoss is the failure AnnotationLostPod keeps on the Job, and the pod's node.
func keptLoss(k *batchv1.Job) (failure, string, bool) {
	v, ok := k.Annotations[AnnotationLostPod]
	if !ok {
		return failure{}, "", false
	}
	var lp lostPod
	if err := json.Unmarshal([]byte(v), &lp); err != nil || (lp.Code == "" && len(lp.Words) == 0) {
		return failure{}, "", false
	}
	// Written by this service from a pod's status, but the Job is the cluster's: clean it again.
	for i, w := range lp.Words {
		lp.Words[i] = clip(qm.OneLine(w))
	}
	return failure{code: clip(qm.OneLine(lp.Code)), words: lp.Words}, clip(qm.OneLine(lp.Node)), true
}

// lostReason says why the Job's pod is gone: what a pass saw of it before it went, else that it
// is gone without a trace.
func lostReason(k *batchv1.Job) string {
	if f, _, ok := keptLoss(k); ok {
		return f.reason()
	}
	return "Kubernetes: " + lostWords
}

// gangJob says what a multi-node Job is doing (one whose pods must all run together; gang),
// once its conditions say it has not ended. Its workload runs only when all its pods do: until
// then it waits, as Slurm starts a multi-node job only when all its nodes are allocated, saying
// how many pods run and why the others wait ("1 of 2 pods running; waiting for 1 (Kubernetes:
// Unschedulable: …)"): queued while one waits for the scheduler, starting while all are placed
// but not all run. A pod that ran and failed or is being deleted (evicted, its node gone) fails
// it at once, even before the Job controller says so: its other pods' ranks cannot go on
// without it (they wait for it until a timeout, or hang), and a replacement pod would join a
// world that no longer exists. The Job is then held (its other pods still hold their GPUs), so
// the service deletes it once it has ended the lease.
func gangJob(j qm.Job, k *batchv1.Job, pods []*corev1.Pod, n, lost int) (qm.Job, *corev1.Pod) {
	ran := false
	for _, p := range pods {
		ran = ran || !podStarted(p).IsZero()
	}
	for _, p := range pods {
		if !ran || p.Status.Phase == corev1.PodSucceeded || (p.Status.Phase != corev1.PodFailed && p.DeletionTimestamp == nil) {
			continue
		}
		f := podFailure(p)
		why := f.reason()
		if f.code == "" && len(f.words) == 0 {
			why = "Kubernetes: the pod was deleted"
			if p.Status.Phase == corev1.PodFailed {
				why = "the pod failed"
			}
		}
		where := ""
		if p.Spec.NodeName != "" {
			where = " on " + p.Spec.NodeName
		}
		j.State, j.ExitCode, j.Node, j.Held = qm.JobFailed, f.code, p.Spec.NodeName, true
		// "Evicted: The node was low on resource: memory on h200-02", not "memory. on".
		j.Reason = fmt.Sprintf("%s%s, one of its %d pods; the others cannot go on without it", strings.TrimRight(why, ". "), where, n)
		if j.EndedAt = podEnded(p); j.EndedAt.IsZero() && p.DeletionTimestamp != nil {
			j.EndedAt = p.DeletionTimestamp.Time
		}
		return j, p
	}
	if lost > 0 && (ran || !replacing(k)) {
		// One of its pods failed and is gone already (deleted, or lost with its node): the
		// Job counts it, though no pod says why.
		j.State, j.Held = qm.JobFailed, true
		j.Reason = fmt.Sprintf("Kubernetes: %s, one of its %d pods; the others cannot go on without it", lostWords, n)
		return j, nil
	}
	live := 0
	for _, p := range pods {
		if alive(p) {
			live++
		}
	}
	if int(k.Status.Active) > live {
		// The Job counts a pod that the list no longer shows: gone before the Job controller
		// saw it. Its next status says whether it failed.
		j.State = qm.JobEnding
		return j, nil
	}
	run, starting := 0, ""
	var waiting *qm.Job
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		switch p.Status.Phase {
		case corev1.PodRunning, corev1.PodSucceeded:
			run++
		case corev1.PodPending:
			switch pj := pendingPod(p); {
			case pj.State == qm.JobPending && waiting == nil:
				waiting = &pj
			case pj.State == qm.JobStarting && starting == "":
				starting = pj.Node
			}
		}
	}
	if run >= n {
		j.State, j.Node = qm.JobRunning, gangNodes(pods)
		return j, nil
	}
	reason := fmt.Sprintf("%d of %d pods running; waiting for %d", run, n, n-run)
	if waiting != nil {
		if waiting.Reason != "" {
			reason += " (" + waiting.Reason + ")"
		}
		return qm.Job{State: qm.JobPending, Reason: reason}, nil
	}
	if starting != "" {
		reason += " (starting on " + starting + ")"
	}
	return qm.Job{State: qm.JobStarting, Reason: reason}, nil
}

// jobStarted is when the Job's first pod started its workload; zero before. A multi-node Job's
// workload starts when the last of its pods does, and not before all have.
func jobStarted(k *batchv1.Job, pods []*corev1.Pod) time.Time {
	var first, last time.Time
	started := 0
	for _, p := range pods {
		t := podStarted(p)
		if t.IsZero() {
			continue
		}
		if p.DeletionTimestamp == nil {
			started++
		}
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if t.After(last) {
			last = t
		}
	}
	if n := gang(k); n > 0 {
		if started < n {
			return time.Time{}
		}
		return last
	}
	return first
}

// gangNodes are the nodes a multi-node Job's live pods are on, by name, joined with commas as a
// whole-node lease's nodes are ("h100-a,h100-b"), so that the lease keeps all of them, not only
// the first pod's.
func gangNodes(pods []*corev1.Pod) string {
	seen := map[string]bool{}
	var nodes []string
	for _, p := range pods {
		if n := p.Spec.NodeName; n != "" && p.DeletionTimestamp == nil && !seen[n] &&
			(p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodSucceeded) {
			seen[n] = true
			nodes = append(nodes, n)
		}
	}
	sort.Strings(nodes)
	return strings.Join(nodes, ",")
}

// gang is the number of pods a Job's workload needs running together: a multi-node lease's
// Indexed Job, whose pods share a subdomain to find each other, needs all of them; 0 for any
// other Job (one pod, or an array's independent tasks).
func gang(k *batchv1.Job) int {
	s := k.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || s.Template.Spec.Subdomain == "" ||
		s.Parallelism == nil || *s.Parallelism < 2 {
		return 0
	}
	return int(*s.Parallelism)
}

// waited is how long the Job waited before its workload started (its first pod's main
// container, as the lease's start is dated), rounded up to whole minutes: the Job's
// activeDeadlineSeconds counts from the Job's start and the lease's time from when its workload
// runs, so the backend adds the wait to the deadline, and rounding up keeps the deadline at or
// after the lease's end (the service stops the workspace at that end; the deadline is the
// backstop). Zero when the Job does not say.
func waited(k *batchv1.Job, pods []*corev1.Pod) time.Duration {
	if k.Status.StartTime == nil {
		return 0
	}
	started := jobStarted(k, pods)
	if started.IsZero() || !started.After(k.Status.StartTime.Time) {
		return 0
	}
	w := started.Sub(k.Status.StartTime.Time)
	return (w + time.Minute - 1) / time.Minute * time.Minute
}

func clip(s string) string {
	if utf8.RuneCountInString(s) > 200 {
		return string([]rune(s)[:200]) + "…"
	}
	return s
}

// ranOn is where a Job's pods ran, as passes saw them (pods: the node of each pod, by name,
// that a pass saw started), and, once a pod is gone without a trace, what the API said of its
// node (words).
type ranOn struct {
	pods  map[string]string
	words string
}

// sawRun records the node of each of the Job's pods that runs now, for whyLost to read if it
// goes before a pass sees it end.
func (b *Backend) sawRun(key string, pods []*corev1.Pod) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range pods {
		if !alive(p) || p.Spec.NodeName == "" || podStarted(p).IsZero() {
			continue
		}
		if b.ranOn == nil {
			b.ranOn = map[string]*ranOn{}
		}
		r := b.ranOn[key]
		if r == nil {
			r = &ranOn{pods: map[string]string{}}
			b.ranOn[key] = r
		}
		r.pods[p.Name] = p.Spec.NodeName
	}
}

// whyLost says, in place of lostWords, what the API tells of a Job's pod gone without a trace,
// by the node a pass last saw it run on (the pods a pass saw run that the list no longer shows):
// gone from the cluster (the pod went with it), there and ready (the pod was deleted outside
// Quartermaster), or there and not ready. "" where it cannot tell: no pass saw the pod run (the
// service started since), the pods gone ran on several nodes, or the node cannot be read. Once
// said, the words stay for the Job's later passes.
func (b *Backend) whyLost(ctx context.Context, key string, pods []*corev1.Pod) string {
	listed := map[string]bool{}
	for _, p := range pods {
		listed[p.Name] = true
	}
	b.mu.Lock()
	r := b.ranOn[key]
	node, words := "", ""
	if r != nil {
		words = r.words
		for name, n := range r.pods {
			if listed[name] {
				continue
			}
			if node != "" && node != n {
				node = "" // gone from several nodes: no one thing to say
				break
			}
			node = n
		}
	}
	b.mu.Unlock()
	if words != "" || node == "" {
		return words
	}
	n, err := b.c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	name := clip(qm.OneLine(node))
	switch {
	case apierrors.IsNotFound(err):
		words = "its pod is gone with its node " + name + ", which is no longer in the cluster"
	case err != nil:
		return ""
	case nodeReady(n):
		words = "its pod was deleted outside Quartermaster (its node " + name + " is still there and ready)"
	default:
		words = "its pod is gone and its node " + name + " is not ready (lost with its node, or deleted)"
	}
	b.mu.Lock()
	r.words = words
	b.mu.Unlock()
	return words
}

// nodeReady reports whether the node's Ready condition is True.
func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
