package kube

import (
	"fmt"
	"sort"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/acme/quartermaster/internal/qm"
)

// podJob says what a lease's own Pod (an interactive workspace) is doing.
func podJob(p *corev1.Pod) qm.Job {
	if p.DeletionTimestamp != nil {
		return qm.Job{State: qm.JobEnding, Node: p.Spec.NodeName}
	}
	switch p.Status.Phase {
	case corev1.PodPending:
		return pendingPod(p)
	case corev1.PodRunning:
		return qm.Job{State: qm.JobRunning, Node: p.Spec.NodeName}
	case corev1.PodSucceeded:
		return qm.Job{State: qm.JobCompleted, Node: p.Spec.NodeName, Reason: "exit code 0"}
	case corev1.PodFailed:
		if p.Status.Reason == "DeadlineExceeded" {
			return qm.Job{State: qm.JobTimeout, Node: p.Spec.NodeName}
		}
		return qm.Job{State: qm.JobFailed, Node: p.Spec.NodeName, Reason: podFailure(p)}
	}
	return qm.Job{State: qm.JobEnding, Node: p.Spec.NodeName}
}

// pendingPod is a pending pod: waiting for the scheduler (queued), or placed and starting.
func pendingPod(p *corev1.Pod) qm.Job {
	if p.Spec.NodeName != "" {
		return qm.Job{State: qm.JobStarting, Node: p.Spec.NodeName}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != "" {
			why := c.Reason
			if c.Message != "" {
				why += ": " + clip(c.Message)
			}
			return qm.Job{State: qm.JobPending, Reason: "Kubernetes: " + why}
		}
	}
	return qm.Job{State: qm.JobPending}
}

// podFailure says why a pod failed: its status reason, or its first failed container's.
func podFailure(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			s := fmt.Sprintf("exit code %d", t.ExitCode)
			if t.Reason != "" && t.Reason != "Error" {
				s += " (" + t.Reason + ")"
			}
			return s
		}
	}
	if p.Status.Reason != "" {
		s := p.Status.Reason
		if p.Status.Message != "" {
			s += ": " + clip(p.Status.Message)
		}
		return s
	}
	return "the pod failed"
}

// batchJob says what a lease's Job (a batch job) is doing, from its conditions and its pods.
func batchJob(k *batchv1.Job, pods []*corev1.Pod) qm.Job {
	if k.DeletionTimestamp != nil {
		return qm.Job{State: qm.JobEnding}
	}
	for _, c := range k.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return qm.Job{State: qm.JobCompleted, Reason: "exit code 0"}
		case batchv1.JobFailed:
			if c.Reason == "DeadlineExceeded" {
				return qm.Job{State: qm.JobTimeout}
			}
			why := c.Reason
			for _, p := range pods {
				if p.Status.Phase == corev1.PodFailed {
					why = podFailure(p) + ", " + why
					break
				}
			}
			return qm.Job{State: qm.JobFailed, Reason: strings.TrimSuffix(why, ", ")}
		case batchv1.JobSuspended:
			return qm.Job{State: qm.JobPending, Reason: "Kubernetes: the Job is suspended"}
		}
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	starting := ""
	var pending *qm.Job
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		switch p.Status.Phase {
		case corev1.PodRunning:
			return qm.Job{State: qm.JobRunning, Node: p.Spec.NodeName}
		case corev1.PodPending:
			j := pendingPod(p)
			if j.State == qm.JobStarting && starting == "" {
				starting = j.Node
			}
			if j.State == qm.JobPending && pending == nil {
				pending = &j
			}
		}
	}
	if pending != nil {
		return *pending
	}
	// No pods yet (the Job controller has not made them) or all placed and starting.
	return qm.Job{State: qm.JobStarting, Node: starting}
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
