package kube_test

import (
	"context"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/acme/quartermaster/internal/kube"
)

// TestPodUIDs: the node agent names pods by UID; a workspace's Ref finds its pod's UID and a batch
// Job's Ref the UIDs of the Job's pods (those it owns, by its UID), and nobody else's: a pod made
// by hand with the Job's labels does not lend the lease its GPUs' activity.
func TestPodUIDs(t *testing.T) {
	ctx := context.Background()
	pod := func(name, uid, job string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "qm-vision", Name: name, UID: types.UID(uid),
			Labels: map[string]string{kube.LabelInstance: kube.DefaultInstance}}}
		if job != "" {
			p.Labels["batch.kubernetes.io/job-name"] = job
		}
		return p
	}
	owned := func(p *corev1.Pod, job, uid string) *corev1.Pod {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job, UID: types.UID(uid)}}
		return p
	}
	job := func(name, uid string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "qm-vision", Name: name, UID: types.UID(uid),
			Labels: map[string]string{kube.LabelInstance: kube.DefaultInstance}}}
	}
	cs := fake.NewClientset(
		pod("qm-l-7-ssh-shell", "11111111-2222-3333-4444-555555555555", ""),
		job("qm-l-8-train", "job-8"), job("qm-l-9-other", "job-9"),
		owned(pod("qm-l-8-train-abcde", "66666666-7777-8888-9999-000000000000", "qm-l-8-train"), "qm-l-8-train", "job-8"),
		owned(pod("qm-l-9-other-xyz", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "qm-l-9-other"), "qm-l-9-other", "job-9"),
		// Made by hand with the Job's labels, or an owner reference by its name only: not its pods.
		pod("copied-labels", "bbbbbbbb-0000-0000-0000-000000000000", "qm-l-8-train"),
		owned(pod("forged-owner", "cccccccc-0000-0000-0000-000000000000", "qm-l-8-train"), "qm-l-8-train", "not-job-8"),
	)
	b := newBackend(t, examplePolicy(t), cs)
	if got, err := b.PodUIDs(ctx, "pod/qm-vision/qm-l-7-ssh-shell"); err != nil || !slices.Equal(got, []string{"11111111-2222-3333-4444-555555555555"}) {
		t.Errorf("the workspace pod's UIDs = %v, %v", got, err)
	}
	if got, err := b.PodUIDs(ctx, "job/qm-vision/qm-l-8-train"); err != nil || !slices.Equal(got, []string{"66666666-7777-8888-9999-000000000000"}) {
		t.Errorf("the Job's pod UIDs = %v, %v", got, err)
	}
	if _, err := b.PodUIDs(ctx, "pod/qm-vision/gone"); err == nil {
		t.Error("a pod that is gone has UIDs")
	}
	if _, err := b.PodUIDs(ctx, "1234"); err == nil {
		t.Error("a Slurm job id was read as a Kubernetes reference")
	}
}
