package kube

import (
	"context"
	"fmt"
	"sort"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/templates"
)

// Inventory is the GPU nodes of every class as the last successful RefreshInventory found them;
// nil before the first. The slice is shared: callers must not change it. Safe for concurrent use.
func (b *Backend) Inventory() []qm.Node {
	if p := b.inv.Load(); p != nil {
		return *p
	}
	return nil
}

// RefreshInventory lists the nodes, the pods that hold GPUs and this instance's Jobs, and makes
// them the inventory: a node belongs to every class whose node_selector its labels match, whose
// GPU resource (kubernetes.resource, default nvidia.com/gpu) it has allocatable and whose pods
// tolerate its taints (toleratesNode); Used is the GPU limits of the pods on it that have not
// ended, but for the leases' own workload pods (ownLeasePod: the service counts its own leases
// itself, in every class that counts their resource: Node.GRES). Cordoned and not-Ready nodes are left out. The lists are read from the API server's
// cache (resourceVersion 0). On an error the last inventory stays.
func (b *Backend) RefreshInventory(ctx context.Context) error {
	nodes, err := b.c.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		b.refusesCredentials(err)
		return fmt.Errorf("kube: list nodes: %w", err)
	}
	b.credentialsAccepted()
	pods, err := b.c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{ResourceVersion: "0",
		FieldSelector: "status.phase!=Succeeded,status.phase!=Failed"})
	if err != nil {
		return fmt.Errorf("kube: list pods: %w", err)
	}
	jobs, err := b.c.BatchV1().Jobs(metav1.NamespaceAll).List(ctx, metav1.ListOptions{ResourceVersion: "0",
		LabelSelector: LabelInstance + "=" + b.cfg.Instance})
	if err != nil {
		return fmt.Errorf("kube: list jobs: %w", err)
	}
	inv := BuildInventory(b.cfg.Policy, nodes.Items, pods.Items, jobs.Items, b.cfg.Instance)
	away := awayNodes(b.cfg.Policy, nodes.Items)
	b.away.Store(&away)
	b.inv.Store(&inv)
	return nil
}

// NodesAway says why no node of class takes new work, where the last refresh found the class's
// nodes and every one cordoned or not ready: "every node of class train is cordoned (gpu-b,
// gpu-c)"; "" otherwise.
func (b *Backend) NodesAway(class string) string {
	if p := b.away.Load(); p != nil {
		return (*p)[class]
	}
	return ""
}

// awayNodes says, for each class whose nodes (those its node_selector matches with its GPU
// resource allocatable) are all left out of the inventory, which they are and why.
func awayNodes(p *policy.Policy, nodes []corev1.Node) map[string]string {
	out := map[string]string{}
	for _, c := range p.Classes {
		sel := labels.SelectorFromSet(c.Kubernetes.NodeSelector)
		r := classResource(c)
		var names []string
		whys := map[string]bool{}
		up := false
		for i := range nodes {
			n := &nodes[i]
			if q, ok := n.Status.Allocatable[r]; !ok || q.Value() <= 0 || !sel.Matches(labels.Set(n.Labels)) || !toleratesNode(c, n) {
				continue
			}
			if schedulable(n) {
				up = true
				break
			}
			why := nodeAway(n)
			whys[why] = true
			names = append(names, n.Name+" "+why)
		}
		if up || len(names) == 0 {
			continue
		}
		sort.Strings(names)
		what := "cordoned or not ready"
		if len(whys) == 1 {
			for w := range whys {
				what = w
			}
			for i := range names {
				names[i] = strings.TrimSuffix(names[i], " "+what)
			}
		}
		if len(names) > 3 {
			names = append(names[:3], fmt.Sprintf("and %d more", len(names)-3))
		}
		out[c.Name] = fmt.Sprintf("every node of class %s is %s (%s)", c.Name, what, strings.Join(names, ", "))
	}
	return out
}

// nodeAway says in a word or two why a node takes no new pods: cordoned, or not ready.
func nodeAway(n *corev1.Node) string {
	if n.Spec.Unschedulable {
		return "cordoned"
	}
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeUnschedulable {
			return "cordoned"
		}
	}
	return "not ready"
}

// BuildInventory maps nodes to the policy's classes and counts the GPUs that pods hold on them,
// whatever their labels, as the kubelet does, but for this instance's leases' own workload pods
// (ownLeasePod), which the service counts itself; jobs are this instance's Jobs. Since those pods
// are left out of Used in every class, each node carries the resource its class counts
// (qm.Node.GRES, e.g. nvidia.com/gpu): where two classes count the same resource of a node (two
// node selectors that match it, or a class without one), a lease of one holds its GPUs on the
// other's side too, which the service counts; classes of other resources (amd.com/gpu, another
// MIG profile) hold none of each other's. Classes come in the policy's order, nodes in name order
// within each.
func BuildInventory(p *policy.Policy, nodes []corev1.Node, pods []corev1.Pod, jobs []batchv1.Job, instance string) []qm.Node {
	jobOf := map[string]*batchv1.Job{} // "namespace/name" -> this instance's Job of a lease
	jobLeases := map[string]bool{}     // "namespace/L-7": a lease of this instance with a Job
	for i := range jobs {
		k := &jobs[i]
		if id, ok := leaseOf(k.Labels); ok && k.Labels[LabelInstance] == instance {
			jobOf[k.Namespace+"/"+k.Name] = k
			jobLeases[k.Namespace+"/"+id.String()] = true
		}
	}
	resources := map[corev1.ResourceName]bool{}
	for _, c := range p.Classes {
		resources[classResource(c)] = true
	}
	used := map[string]map[corev1.ResourceName]int64{} // node -> resource -> GPUs held
	for i := range pods {
		pod := &pods[i]
		if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		if ownLeasePod(pod, instance, jobOf, jobLeases) {
			continue // a lease of this service: it counts its own
		}
		for r := range resources {
			if n := podLimit(pod, r); n > 0 {
				if used[pod.Spec.NodeName] == nil {
					used[pod.Spec.NodeName] = map[corev1.ResourceName]int64{}
				}
				used[pod.Spec.NodeName][r] += n
			}
		}
	}
	sorted := make([]*corev1.Node, 0, len(nodes))
	for i := range nodes {
		if schedulable(&nodes[i]) {
			sorted = append(sorted, &nodes[i])
		}
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	inv := []qm.Node{}
	for _, c := range p.Classes {
		sel := labels.SelectorFromSet(c.Kubernetes.NodeSelector)
		r := classResource(c)
		for _, n := range sorted {
			if !sel.Matches(labels.Set(n.Labels)) || !toleratesNode(c, n) {
				continue
			}
			q, ok := n.Status.Allocatable[r]
			if !ok || q.Value() <= 0 {
				continue
			}
			gpus := int(q.Value())
			inv = append(inv, qm.Node{Name: n.Name, Class: c.Name, GPUs: gpus, Used: int(min(used[n.Name][r], int64(gpus))), GRES: string(r)})
		}
	}
	return inv
}

// ownLeasePod reports whether a pod is the workload of one of this instance's leases, whose GPUs
// the service counts as the lease's: a pod that a Job of the lease owns (an owner reference to
// it, by name and UID, as the Job controller writes), or the lease's own bare Pod (no owner, and
// no Job of the lease in its namespace). Labels alone make no pod the lease's: anyone who may
// make pods in a team's namespace can copy them, and a pod made by hand with a lease's labels
// holds its GPUs as any other does.
func ownLeasePod(p *corev1.Pod, instance string, jobOf map[string]*batchv1.Job, jobLeases map[string]bool) bool {
	id, ok := leaseOf(p.Labels)
	if !ok || p.Labels[LabelInstance] != instance {
		return false
	}
	if len(p.OwnerReferences) == 0 && jobOwner(p) == "" {
		return !jobLeases[p.Namespace+"/"+id.String()]
	}
	for _, o := range p.OwnerReferences {
		if o.Kind != "Job" {
			continue
		}
		k := jobOf[p.Namespace+"/"+o.Name]
		if k != nil && k.Labels[LabelLease] == p.Labels[LabelLease] && (o.UID == "" || k.UID == "" || o.UID == k.UID) {
			return true
		}
	}
	return false
}

func classResource(c *policy.Class) corev1.ResourceName {
	if c.Kubernetes.Resource == "" {
		return templates.DefaultGPUResource
	}
	return corev1.ResourceName(c.Kubernetes.Resource)
}

// podLimit is what a pod holds of an extended resource: its containers' limits together, or its
// largest init container's if that is more (init containers run one at a time, before them).
func podLimit(p *corev1.Pod, r corev1.ResourceName) int64 {
	var sum, initMax int64
	for _, c := range p.Spec.Containers {
		if q, ok := c.Resources.Limits[r]; ok {
			sum += q.Value()
		} else if q, ok := c.Resources.Requests[r]; ok {
			sum += q.Value()
		}
	}
	for _, c := range p.Spec.InitContainers {
		if q, ok := c.Resources.Limits[r]; ok {
			initMax = max(initMax, q.Value())
		}
	}
	return max(sum, initMax)
}

// schedulable reports whether a node takes new pods: not cordoned, Ready, and without the taints
// Kubernetes puts on nodes that are not ready or unreachable.
func schedulable(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, t := range n.Spec.Taints {
		if (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) &&
			(t.Key == corev1.TaintNodeUnschedulable || t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable) {
			return false
		}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// toleratesNode reports whether the class's pods tolerate every taint of the node that keeps
// pods off (NoSchedule, NoExecute): the class's kubernetes.tolerations and the toleration of the
// taint named after its GPU resource that every GPU pod carries (templates.TolerateGPUTaint). A
// node tainted for another class (dedicated=training:NoSchedule) is no node of a class that does
// not tolerate it, whatever its labels: the scheduler never puts the class's pods there. The
// taints of a cordoned or not-ready node are not looked at here; schedulable says those.
func toleratesNode(c *policy.Class, n *corev1.Node) bool {
	tols := make([]templates.Toleration, 0, len(c.Kubernetes.Tolerations)+2)
	for _, t := range c.Kubernetes.Tolerations {
		tols = append(tols, templates.Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: t.Effect})
	}
	tols = templates.TolerateGPUTaint(tols, string(classResource(c)))
	for _, taint := range n.Spec.Taints {
		if taint.Effect != corev1.TaintEffectNoSchedule && taint.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		switch taint.Key {
		case corev1.TaintNodeUnschedulable, corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable:
			continue
		}
		ok := false
		for _, t := range tols {
			ok = ok || tolerates(t, taint)
		}
		if !ok {
			return false
		}
	}
	return true
}

// tolerates reports whether a toleration tolerates a taint, as the Kubernetes scheduler judges
// it: an empty effect matches every effect, an empty key with Exists every key, and an empty
// operator is Equal.
func tolerates(t templates.Toleration, taint corev1.Taint) bool {
	if t.Effect != "" && t.Effect != string(taint.Effect) {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case "", string(corev1.TolerationOpEqual):
		return t.Value == taint.Value
	case string(corev1.TolerationOpExists):
		return true
	}
	return false
}

// NodeNames is the name of every node the API server lists, whatever the policy's classes select
// and cordoned or not: the nodes the cluster knows, for agent-token create to check a node's name
// against. Read from the API server's cache (resourceVersion 0).
func (b *Backend) NodeNames(ctx context.Context) ([]string, error) {
	nodes, err := b.c.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, fmt.Errorf("kube: list nodes: %w", err)
	}
	names := make([]string, 0, len(nodes.Items))
	for _, n := range nodes.Items {
		names = append(names, n.Name)
	}
	return names, nil
}
