package kube_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/acme/quartermaster/internal/kube"
	"github.com/acme/quartermaster/internal/qm"
)

// gpuNode is a node as the kubelet and the device plugin report it.
func gpuNode(name, class string, gpus int64, ready bool) *corev1.Node {
	status := corev1.ConditionTrue
	if !ready {
		status = corev1.ConditionFalse
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("128")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}},
		}}
	if class != "" {
		n.Labels["gpu.acme/class"] = class
	}
	if gpus > 0 {
		n.Status.Allocatable["nvidia.com/gpu"] = *resource.NewQuantity(gpus, resource.DecimalSI)
	}
	return n
}

// gpuPod is a pod that holds GPUs on a node.
func gpuPod(ns, name, node string, gpus int64, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)}}}}},
		Status: corev1.PodStatus{Phase: phase}}
}

// TestInventoryFromNodes: the inventory lists the nodes whose labels match each class's
// node_selector, with their allocatable GPUs, the resource the class counts, and the GPUs that
// pods not ended, and not this service's leases', hold on them; cordoned and not-Ready nodes are
// left out.
func TestInventoryFromNodes(t *testing.T) {
	ctx := context.Background()
	cordoned := gpuNode("h100-03", "train", 8, true)
	cordoned.Spec.Unschedulable = true
	unreachable := gpuNode("h100-04", "train", 8, true)
	unreachable.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}}
	withInit := gpuPod("ml", "prep", "h100-02", 1, corev1.PodPending)
	withInit.Spec.InitContainers = []corev1.Container{{Name: "warmup",
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}}}}
	ours := gpuPod("qm-vision", "lease-7", "h100-01", 4, corev1.PodRunning) // the service counts it itself
	ours.Labels = map[string]string{kube.LabelLease: "L-7", kube.LabelInstance: kube.DefaultInstance}
	otherInstance := gpuPod("qm-vision", "staging-lease", "h100-01", 1, corev1.PodRunning)
	otherInstance.Labels = map[string]string{kube.LabelLease: "L-7", kube.LabelInstance: "staging"}
	cs := fake.NewClientset(ours, otherInstance,
		gpuNode("h100-01", "train", 8, true), gpuNode("h100-02", "train", 8, true), cordoned, unreachable,
		gpuNode("h100-05", "train", 8, false), gpuNode("l40s-01", "interactive", 4, true),
		gpuNode("cpu-01", "", 0, true), gpuNode("l40s-02", "interactive", 0, true),
		gpuPod("qm-vision", "a", "h100-01", 2, corev1.PodRunning),
		gpuPod("research", "b", "h100-01", 3, corev1.PodRunning), // not Quartermaster's: still in use
		gpuPod("qm-vision", "done", "h100-01", 8, corev1.PodSucceeded),
		gpuPod("qm-vision", "broke", "h100-01", 8, corev1.PodFailed),
		gpuPod("qm-vision", "waiting", "", 8, corev1.PodPending),
		withInit,
		gpuPod("qm-language", "c", "l40s-01", 1, corev1.PodRunning),
	)
	b := newBackend(t, examplePolicy(t), cs)
	if inv := b.Inventory(); inv != nil {
		t.Fatalf("inventory before the first refresh: %v, want nil (unknown)", inv)
	}
	if err := b.RefreshInventory(ctx); err != nil {
		t.Fatal(err)
	}
	want := []qm.Node{
		{Name: "l40s-01", Class: "interactive", GPUs: 4, Used: 1, GRES: "nvidia.com/gpu"},
		{Name: "h100-01", Class: "train", GPUs: 8, Used: 6, GRES: "nvidia.com/gpu"},
		{Name: "h100-02", Class: "train", GPUs: 8, Used: 4, GRES: "nvidia.com/gpu"},
	}
	if got := b.Inventory(); !reflect.DeepEqual(got, want) {
		t.Errorf("inventory\n got %+v\nwant %+v", got, want)
	}

	// The API server fails: the last inventory stays, and the error says why.
	cs.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("the server is currently unable to handle the request")
	})
	if err := b.RefreshInventory(ctx); err == nil || !strings.Contains(err.Error(), "unable to handle") {
		t.Errorf("refresh with the API server down: %v", err)
	}
	if got := b.Inventory(); !reflect.DeepEqual(got, want) {
		t.Errorf("after a failed refresh: %+v, want the last inventory", got)
	}
}
