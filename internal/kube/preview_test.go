package kube_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/acme/quartermaster/internal/kube"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/workload"
)

// A GPU job is made as its preview shows it (/gpu template, quartermaster templates render:
// workload.Render with the install's settings): its Job and Service carry the labels, selectors,
// node selector, tolerations (the GPU taint's among them) and affinity the preview shows, nothing
// added after; on an installation of its own instance too.
func TestAGPUJobIsMadeAsItsPreviewShows(t *testing.T) {
	ctx := context.Background()
	p, err := policy.Load([]byte(cpuOnlyPolicy), "cpu-only.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, instance := range []string{"", "qm-staging"} {
		a10 := node("a10-1", map[string]string{"accel": "a10"}, "nvidia.com/gpu", 4)
		h100 := node("h100-1", map[string]string{"pool": "h100", "zone": "west"}, "nvidia.com/gpu", 8)
		shared := node("l4-1", nil, "nvidia.com/gpu.shared", 8)
		cs := fake.NewClientset(pvc("qm-data", "team-storage"), a10, h100, shared)
		b, err := kube.New(kube.Config{Policy: p, Catalog: catalog(t), Client: cs, Instance: instance})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.RefreshInventory(ctx); err != nil {
			t.Fatal(err)
		}
		// The settings a preview renders with: the install's, its instance as QM_KUBE_INSTANCE says.
		preview := workload.Settings{KubernetesInstance: instance, GPUNodes: func() []string { return workload.GPUNodes(b.Inventory()) }}
		id := 40
		for _, class := range []string{"a10", "big", "timeshared"} {
			for _, tmpl := range []string{"cuda-smoke", "jupyterlab"} {
				id++
				l := &qm.Lease{ID: qm.LeaseID(id), User: "dana@lab.example", Team: "data", Class: class, GPUs: 1, Duration: time.Hour, Template: tmpl}
				w, err := workload.Render(catalog(t), p, l, preview)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := b.Start(ctx, l); err != nil {
					t.Fatal(err)
				}
				for _, doc := range strings.Split(w.KubernetesYAML, "\n---\n") {
					obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
					if err != nil {
						t.Fatal(err)
					}
					switch want := obj.(type) {
					case *batchv1.Job:
						got, err := cs.BatchV1().Jobs(want.Namespace).Get(ctx, want.Name, metav1.GetOptions{})
						if err != nil {
							t.Fatalf("instance %q, %s on %s: the Job the preview names is not made: %v", instance, tmpl, class, err)
						}
						// The workspace's secret is drawn afresh for each lease.
						for _, spec := range []*corev1.PodSpec{&got.Spec.Template.Spec, &want.Spec.Template.Spec} {
							for i := range spec.Containers[0].Env {
								if spec.Containers[0].Env[i].Name == "QM_TOKEN" {
									spec.Containers[0].Env[i].Value = "secret"
								}
							}
						}
						if !reflect.DeepEqual(got.Labels, want.Labels) || !reflect.DeepEqual(got.Spec, want.Spec) {
							t.Errorf("instance %q, %s on %s: the Job is made with labels %v, pod labels %v, tolerations %+v; its preview shows %v, %v, %+v",
								instance, tmpl, class, got.Labels, got.Spec.Template.Labels, got.Spec.Template.Spec.Tolerations,
								want.Labels, want.Spec.Template.Labels, want.Spec.Template.Spec.Tolerations)
						}
					case *corev1.Service:
						got, err := cs.CoreV1().Services(want.Namespace).Get(ctx, want.Name, metav1.GetOptions{})
						if err != nil {
							t.Fatalf("instance %q, %s on %s: the Service the preview names is not made: %v", instance, tmpl, class, err)
						}
						if !reflect.DeepEqual(got.Labels, want.Labels) || !reflect.DeepEqual(got.Spec, want.Spec) {
							t.Errorf("instance %q, %s on %s: the Service is made with labels %v, selector %v; its preview shows %v, %v",
								instance, tmpl, class, got.Labels, got.Spec.Selector, want.Labels, want.Spec.Selector)
						}
					}
				}
			}
		}
	}
}
