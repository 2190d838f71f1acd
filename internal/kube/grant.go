package kube

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
)

// checkGrant checks that a rendered object gives the workload only its team's storage: it lives
// in the team's namespace, and its pods mount nothing but the team's PersistentVolumeClaim and
// scratch space (no host paths, no other claim, no other kind of volume), whatever the template
// or its parameters asked for.
func checkGrant(w *workload.Workload, obj runtime.Object) error {
	ns := w.Namespace
	claim := w.Input.Storage.PVC
	if claim == "" {
		claim = templates.DefaultPVC
	}
	var meta *metav1.ObjectMeta
	var spec *corev1.PodSpec
	switch o := obj.(type) {
	case *corev1.Service:
		meta = &o.ObjectMeta
	case *corev1.Pod:
		meta, spec = &o.ObjectMeta, &o.Spec
	case *batchv1.Job:
		meta, spec = &o.ObjectMeta, &o.Spec.Template.Spec
		if o.Spec.Template.Namespace != "" && o.Spec.Template.Namespace != ns {
			return fmt.Errorf("kube: template %s puts a pod of team %s in namespace %s, not the team's %s", w.Template.Name, w.Input.Team, o.Spec.Template.Namespace, ns)
		}
	default:
		return nil // refused by the caller
	}
	if meta.Namespace != ns {
		return fmt.Errorf("kube: template %s puts %s %s of team %s in namespace %q, not the team's %s", w.Template.Name, kindOf(obj), meta.Name, w.Input.Team, meta.Namespace, ns)
	}
	if spec == nil {
		return nil
	}
	for _, v := range spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim:
		case v.EmptyDir != nil:
		case v.PersistentVolumeClaim != nil:
			return fmt.Errorf("kube: template %s mounts PersistentVolumeClaim %s for team %s, whose storage is %s", w.Template.Name, v.PersistentVolumeClaim.ClaimName, w.Input.Team, claim)
		default:
			return fmt.Errorf("kube: template %s mounts volume %s that is neither team %s's PersistentVolumeClaim %s nor scratch space", w.Template.Name, v.Name, w.Input.Team, claim)
		}
	}
	return nil
}
