package kube

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/acme/quartermaster/internal/qm"
)

// LabelTemplate names the template a lease's objects were rendered from.
const LabelTemplate = "quartermaster.io/template"

// oomKilled reports whether the failed pod's container was killed for going over its memory
// limit, or (its pod gone) the Job keeps that it was.
func oomKilled(k *batchv1.Job, p *corev1.Pod) bool {
	if p != nil {
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && t.Reason == "OOMKilled" {
				return true
			}
		}
		return false
	}
	if k == nil {
		return false
	}
	f, _, ok := keptLoss(k)
	return ok && len(f.words) > 0 && strings.HasPrefix(f.words[0], "OOMKilled")
}

// oomWords says in plain words that a workload ran out of memory, what its memory limit was
// (its main container's resources.limits.memory) and how to get more: with more GPUs where its
// template gives memory per GPU and the template and class allow more GPUs than it had, else
// that its template gives no more. A lease of several pods (pods > 1) has that limit in each pod,
// which the words say, with how many pods and that more GPUs make more pods, not more memory in
// each. "" when the spec has no memory limit to speak of.
func (b *Backend) oomWords(spec *corev1.PodSpec, labels map[string]string, pods int) string {
	var main *corev1.Container
	for i := range spec.Containers {
		if spec.Containers[i].Name == mainContainer || main == nil {
			main = &spec.Containers[i]
		}
	}
	if main == nil {
		return ""
	}
	mem, ok := main.Resources.Limits[corev1.ResourceMemory]
	if !ok || mem.Value() <= 0 {
		return "it ran out of memory and was killed"
	}
	tmpl, class := labels[LabelTemplate], labels[LabelClass]
	var gpus int64
	c, _ := b.cfg.Policy.Class(class)
	if c != nil {
		if q, ok := main.Resources.Limits[classResource(c)]; ok {
			gpus = q.Value()
		}
	}
	out := fmt.Sprintf("it ran out of memory: it was killed at its memory limit of %s", memText(mem.Value()))
	if pods > 1 {
		each := ""
		if gpus > 0 {
			each = fmt.Sprintf(" of %d GPUs each", gpus)
		}
		out = fmt.Sprintf("it ran out of memory: a pod was killed at its memory limit of %s per pod (the lease is %d pods%s, and each has its own %s; more GPUs make more pods, not more memory in each)",
			memText(mem.Value()), pods, each, memText(mem.Value()))
	}
	t, err := b.cfg.Catalog.Get(tmpl)
	if tmpl == "" || err != nil {
		return out
	}
	if gpus <= 0 || c == nil {
		// A CPU-only template sets its memory itself.
		return out + fmt.Sprintf(", which template %s sets; a platform admin can raise its memory_gib", tmpl)
	}
	per := mem.Value() / gpus
	most := int64(t.MaxGPUs)
	if c.MaxGPUs > 0 && int64(c.MaxGPUs) < most {
		most = int64(c.MaxGPUs)
	}
	if size := b.nodeSize(class); size > 0 && size < most {
		most = size // memory is per pod, and a pod has one node's GPUs at most
	}
	if pods > 1 {
		if gpus < most {
			return out + fmt.Sprintf("; template %s gives %s per GPU: for more memory per pod ask for more GPUs per pod, up to %d each (%s per pod)",
				tmpl, memText(per), most, memText(per*most))
		}
		return out + fmt.Sprintf(", the most template %s gives a pod on class %s (%s per GPU, %d GPUs); a platform admin can raise the template's memory_gib_per_gpu",
			tmpl, class, memText(per), gpus)
	}
	if gpus < most {
		return out + fmt.Sprintf(" (template %s gives %s per GPU); for more memory ask for more GPUs: %d GPUs of class %s get %s",
			tmpl, memText(per), most, class, memText(per*most))
	}
	return out + fmt.Sprintf(", the most template %s gives on class %s (%s per GPU, %d GPUs); a platform admin can raise the template's memory_gib_per_gpu",
		tmpl, class, memText(per), gpus)
}

// nodeSize is the most GPUs of a node of class in the inventory; 0 when it knows none.
func (b *Backend) nodeSize(class string) int64 {
	var most int64
	for _, n := range b.Inventory() {
		if n.Class == class && int64(n.GPUs) > most {
			most = int64(n.GPUs)
		}
	}
	return most
}

// memText writes bytes as Kubernetes does: "16Gi", "1536Mi".
func memText(v int64) string {
	return resource.NewQuantity(v, resource.BinarySI).String()
}

// sayOOM puts the plain words of an OOMKilled workload before Kubernetes's own.
func (b *Backend) sayOOM(j *qm.Job, k *batchv1.Job, failed *corev1.Pod) {
	if j.State != qm.JobFailed || !oomKilled(k, failed) {
		return
	}
	var spec *corev1.PodSpec
	var labels map[string]string
	switch {
	case failed != nil && len(failed.Spec.Containers) > 0:
		spec, labels = &failed.Spec, failed.Labels
	case k != nil:
		spec, labels = &k.Spec.Template.Spec, k.Labels
	default:
		return
	}
	pods := 1
	if k != nil && gang(k) > 1 {
		pods = gang(k) // a multi-node lease: its pods run together, each with its own limit
	}
	if w := b.oomWords(spec, labels, pods); w != "" {
		j.Reason = w + " — " + j.Reason
	}
}
