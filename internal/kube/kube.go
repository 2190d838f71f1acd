// Package kube is the Kubernetes backend, on client-go: every lease is a Job rendered from its
// template (an interactive workspace as much as a batch job), in a namespace per team, with the
// class's GPU limits and node selector, the team's PersistentVolumeClaim, activeDeadlineSeconds
// from the lease and labels that carry the lease id, team and class. The inventory comes from
// the cluster (RefreshInventory: nodes matching each class's selector and their allocatable
// GPUs); a lease the service placed is pinned to its node(s) with a node affinity, and an
// exclusive class keeps other teams off its nodes with a pod anti-affinity. Jobs polls the API
// through the clientset so the service's reconcile pass drives lease states. This is the only
// package that imports client-go.
package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
)

// Labels the templates put on every object, and the one this backend adds.
const (
	LabelLease    = "quartermaster.io/lease"
	LabelTeam     = "quartermaster.io/team"
	LabelClass    = "quartermaster.io/class"
	LabelInstance = "quartermaster.io/instance"
	// DefaultInstance is the instance label's value when Config.Instance is empty.
	DefaultInstance = templates.DefaultInstance
)

// Config configures the backend.
type Config struct {
	Policy   *policy.Policy
	Catalog  *templates.Catalog
	Workload workload.Settings
	// Client is the clientset: kubernetes.NewForConfig in production, fake.NewClientset in tests.
	Client kubernetes.Interface
	// Instance is the value of the quartermaster.io/instance label on every object; the reconcile
	// pass touches only objects with it. Services sharing a cluster need different instances.
	Instance string
	Logger   *slog.Logger
}

// Backend runs leases as Pods and Jobs.
type Backend struct {
	cfg Config
	c   kubernetes.Interface
	log *slog.Logger
	inv atomic.Pointer[[]qm.Node] // the last good inventory; nil before the first
	// credsRefused is set while the API server refuses the service's credentials (401): from the
	// first call it refused until a read of the inventory or Ping succeeds (refusesCredentials).
	credsRefused atomic.Bool
	// away: why every node of a class takes no new work, by class, as the last good inventory
	// found them (NodesAway)
	away atomic.Pointer[map[string]string]

	mu      sync.Mutex
	outputs map[string]string // the log tail of failed workloads, by Ref and pod UID, read once
	left    []qm.LeaseID      // leases with objects but no Pod or Job, as the last Jobs found them
	ranOn   map[string]*ranOn // by "namespace/job": where its pod ran, for when it is gone (whyLost)
}

var _ qm.Watcher = (*Backend)(nil)
var _ qm.Retimer = (*Backend)(nil)
var _ qm.InventoryRefresher = (*Backend)(nil)
var _ qm.GPUIndexKnower = (*Backend)(nil)
var _ qm.LeftoverFinder = (*Backend)(nil)
var _ qm.NodesAwayTeller = (*Backend)(nil)

// KnowsGPUIndexes is false: the device plugin picks the devices a pod gets (a MIG slice, a GPU of
// its node) and the API never says which, so the GPU indexes a lease records are only the
// service's count of its node's GPUs, never shown as the lease's.
func (b *Backend) KnowsGPUIndexes(string) bool { return false }

// New checks the configuration and makes a backend. It does not talk to the API server.
func New(cfg Config) (*Backend, error) {
	if cfg.Policy == nil || cfg.Catalog == nil || cfg.Client == nil {
		return nil, errors.New("kube: a policy, a template catalog and a clientset are required")
	}
	for _, c := range cfg.Policy.Classes {
		if c.Kubernetes.Resource == "" && len(c.Kubernetes.NodeSelector) == 0 {
			return nil, fmt.Errorf("kube: class %s has no kubernetes mapping (resource, node_selector) in the policy", c.Name)
		}
	}
	if cfg.Instance == "" {
		cfg.Instance = DefaultInstance
	}
	// The instance is a label value on everything the backend makes: one the API server would
	// refuse is refused here, at start, rather than failing every lease.
	if errs := validation.IsValidLabelValue(cfg.Instance); len(errs) > 0 {
		return nil, fmt.Errorf("kube: instance %q (QM_KUBE_INSTANCE) is not a Kubernetes label value, which is at most 63 letters, digits, '-', '_' and '.', beginning and ending with a letter or digit; example: qm-prod",
			cfg.Instance)
	}
	// Installations sharing a cluster number their leases alike: each one's objects are named
	// after its instance, so that one's L-1 never takes the other's.
	cfg.Workload.KubernetesInstance = cfg.Instance
	b := &Backend{cfg: cfg, c: cfg.Client, log: cfg.Logger}
	if b.cfg.Workload.GPUNodes == nil {
		// A CPU-only job keeps off the GPU nodes of the inventory (workload.Settings.GPUNodes).
		b.cfg.Workload.GPUNodes = func() []string { return workload.GPUNodes(b.Inventory()) }
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	return b, nil
}

// Ping checks that the API server answers (its /version), for the service's readiness check.
func (b *Backend) Ping(ctx context.Context) error {
	d := b.c.Discovery()
	if d == nil || d.RESTClient() == nil {
		return errors.New("kube: the clientset has no REST client to check the API server with")
	}
	if err := d.RESTClient().Get().AbsPath("/version").Do(ctx).Error(); err != nil {
		if b.refusesCredentials(err) {
			return fmt.Errorf("kube: %s", credentialsRefusedWords)
		}
		return fmt.Errorf("kube: the API server does not answer: %w", err)
	}
	// Asked with the service's credentials, the API server took them.
	b.credentialsAccepted()
	return nil
}

// credentialsRefusedWords says that the API server refuses the service's credentials, and who
// must act.
const credentialsRefusedWords = "the cluster's Kubernetes API server refuses the service's credentials (401 Unauthorized: revoked or expired); a platform admin must renew them (the kubeconfig or service account token the service runs with)"

// refusesCredentials reports whether err is the API server refusing the service's credentials
// (401 Unauthorized), and records it: the first of an outage is logged, once, until a read of the
// inventory or Ping succeeds (credentialsAccepted).
func (b *Backend) refusesCredentials(err error) bool {
	if !apierrors.IsUnauthorized(err) {
		return false
	}
	if b.credsRefused.CompareAndSwap(false, true) {
		b.log.Error(credentialsRefusedWords+"; no lease starts until then, no ended lease's objects are deleted, and /readyz says not ready", "err", err)
	}
	return true
}

// credentials is err as a qm.Unreachable naming the refused credentials where it is a 401
// (refusesCredentials), for the lease's reason where a start waits, for the user's reply where a
// release's delete waits, and for the log where a reconcile pass fails; else err as it is.
func (b *Backend) credentials(err error) error {
	if err == nil || !b.refusesCredentials(err) {
		return err
	}
	return &qm.Unreachable{Reason: credentialsRefusedWords, Err: fmt.Errorf("%s: %w", credentialsRefusedWords, err),
		Waiting: qm.ReasonCredentialsPrefix + ": the cluster's Kubernetes API server refuses them (401 Unauthorized: revoked or expired); " +
			"a platform admin must renew them (the kubeconfig or service account token the service runs with), and the lease is handed to it once they are"}
}

// credentialsAccepted records a call the API server took, ending an outage of refusesCredentials.
func (b *Backend) credentialsAccepted() {
	if b.credsRefused.CompareAndSwap(true, false) {
		b.log.Info("the Kubernetes API server accepts the service's credentials again")
	}
}

// Ref names a lease's workload object: "pod/NAMESPACE/NAME" or "job/NAMESPACE/NAME".
func Ref(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

func parseRef(ref string) (kind, namespace, name string, ok bool) {
	parts := strings.Split(ref, "/")
	if len(parts) != 3 || (parts[0] != "pod" && parts[0] != "job") || parts[1] == "" || parts[2] == "" {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// GoneWords says which of a live lease's Pod or Job is gone, as Kubernetes names it: "its Job
// qm-l-7-jupyterlab in namespace qm-vision is gone from the cluster (deleted outside
// Quartermaster)".
func (b *Backend) GoneWords(ref string) string {
	kind, ns, name, ok := parseRef(ref)
	if !ok {
		return fmt.Sprintf("its job %s is gone from the cluster", ref)
	}
	what := "Job"
	if kind == "pod" {
		what = "Pod"
	}
	return fmt.Sprintf("its %s %s in namespace %s is gone from the cluster (deleted outside Quartermaster)", what, name, ns)
}

var _ qm.GoneNamer = (*Backend)(nil)

// Start renders the lease's template and creates its objects: the team's namespace if it is
// missing, then the Service (if any) and the Pod or Job. The team's PersistentVolumeClaim must
// exist, or nothing is made. Creating what exists already (a retried start) adopts it; a create
// that fails deletes what the start made. An API server that does not answer (unanswered: after
// client-go's own retries) is a qm.Unreachable, and the lease waits for it in the service's queue.
func (b *Backend) Start(ctx context.Context, l *qm.Lease) (qm.Started, error) {
	w, err := workload.Render(b.cfg.Catalog, b.cfg.Policy, l, b.cfg.Workload)
	if err != nil {
		return qm.Started{}, err
	}
	objs, err := b.objects(w)
	if err != nil {
		return qm.Started{}, err
	}
	// The claim first: a lease refused for want of it leaves nothing made, not even the namespace.
	if err := b.checkClaim(ctx, w, l.Team); err != nil {
		return qm.Started{}, b.notAnswered(err)
	}
	if err := b.ensureNamespace(ctx, w.Namespace, l.Team); err != nil {
		return qm.Started{}, b.notAnswered(err)
	}
	st := qm.Started{State: qm.Provisioning}
	var made [][3]string // what this start created: kind, namespace, name
	for _, o := range objs {
		var err error
		var name string
		switch o := o.(type) {
		case *corev1.Service:
			name = o.Name
			_, err = b.c.CoreV1().Services(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.Pod:
			name = o.Name
			_, err = b.c.CoreV1().Pods(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			st.Ref = Ref("pod", o.Namespace, o.Name)
		case *batchv1.Job:
			name = o.Name
			_, err = b.c.BatchV1().Jobs(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			st.Ref = Ref("job", o.Namespace, o.Name)
		}
		if err == nil {
			made = append(made, [3]string{kindOf(o), w.Namespace, name})
		}
		if apierrors.IsAlreadyExists(err) {
			// A retried start finds what it made before and takes it; an object of that name
			// that is not this lease's (made before it was asked for, or without its labels) is
			// left alone, and the lease fails, saying what is in the way.
			if why := b.inTheWay(ctx, kindOf(o), w.Namespace, name, l); why != "" {
				b.undoMade(ctx, l.ID, made)
				return qm.Started{}, &qm.Refused{Reason: why, Err: errors.New("kube: " + why)}
			}
			continue
		}
		if err != nil {
			// The lease fails: what was made of it (its Service, before its Job was refused) goes
			// with it, or nothing would ever delete it.
			b.undo(ctx, w.Namespace, l.ID)
			return qm.Started{}, b.notAnswered(createError(l.ID, kindOf(o), err))
		}
	}
	if w.KubernetesConnect != nil {
		st.Connect = w.KubernetesConnect.Address("", w.Input.Token)
	}
	b.log.Info("created", "lease", l.ID, "object", st.Ref, "template", w.Template.Name)
	return st, nil
}

// checkClaim checks that the team's PersistentVolumeClaim is in its namespace. A missing one is a
// refusal the user reads, naming the claim and the namespace (and saying when the namespace is
// missing too), since only a cluster admin can make them.
func (b *Backend) checkClaim(ctx context.Context, w *workload.Workload, team string) error {
	claim := w.Input.Storage.PVC
	if claim == "" {
		claim = templates.DefaultPVC
	}
	_, err := b.c.CoreV1().PersistentVolumeClaims(w.Namespace).Get(ctx, claim, metav1.GetOptions{})
	switch {
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("kube: PersistentVolumeClaim %s/%s: %w", w.Namespace, claim, err)
	}
	why := fmt.Sprintf("team %s has no PersistentVolumeClaim %s in namespace %s; a cluster admin must create it", team, claim, w.Namespace)
	if _, err := b.c.CoreV1().Namespaces().Get(ctx, w.Namespace, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		why = fmt.Sprintf("team %s has no namespace %s and so no PersistentVolumeClaim %s; a cluster admin must create both", team, w.Namespace, claim)
	}
	return &qm.Refused{Reason: why, Err: errors.New("kube: " + why)}
}

// inTheWay says why an object that has the name of one of the lease's is not the lease's: it lacks
// the lease's and instance's labels, or the API server made it before the lease was asked for
// (give or take clock skew between the two), which a retried start's object never is: left by an
// installation whose database started afresh and numbers its leases from L-1 again, or made by
// hand. "" when it is the lease's (or cannot be read: the create's answer stands).
func (b *Backend) inTheWay(ctx context.Context, kind, ns, name string, l *qm.Lease) string {
	var meta metav1.Object
	var err error
	what := "Job"
	switch kind {
	case "service":
		what = "Service"
		meta, err = b.c.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	case "pod":
		what = "Pod"
		meta, err = b.c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	case "job":
		meta, err = b.c.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
	default:
		return ""
	}
	if err != nil {
		return ""
	}
	labels := meta.GetLabels()
	made := meta.GetCreationTimestamp().Time
	const skew = 5 * time.Minute
	before := !made.IsZero() && !l.CreatedAt.IsZero() && made.Before(l.CreatedAt.Add(-skew))
	if labels[LabelLease] == l.ID.String() && labels[LabelInstance] == b.cfg.Instance && !before {
		return ""
	}
	when := ""
	if before {
		when = " (made " + made.UTC().Format("2006-01-02 15:04 MST") + ", before the lease was asked for)"
	}
	return fmt.Sprintf("namespace %s already has a %s %s that is not this lease's%s; ask again, and the new lease's objects get names of their own",
		ns, what, clip(qm.OneLine(name)), when)
}

// undoMade deletes what a start made before it found an object in the way of the lease's, and
// nothing else: the object in the way may carry the lease's labels too.
func (b *Backend) undoMade(ctx context.Context, id qm.LeaseID, made [][3]string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for _, m := range made {
		if err := b.delete(ctx, m[0], m[1], m[2]); err != nil {
			b.log.Warn("delete what a failed start made", "lease", id, "err", err)
		}
	}
}

// undo deletes what a failed start made of the lease, even when the start's context is done; what
// it cannot delete is logged (the lease's labels still name it).
func (b *Backend) undo(ctx context.Context, ns string, id qm.LeaseID) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := b.deleteLease(ctx, ns, id.String()); err != nil {
		b.log.Warn("delete what a failed start made", "lease", id, "err", err)
	}
}

// objects decodes the rendered manifest, as it is: the renderer gives everything the lease, team,
// class and instance labels, each Service a selector of the lease's and instance's pods, and the
// pods their placement (the GPU taint's toleration among it), so a preview shows what is made. A
// manifest without the labels the backend finds its objects by is refused, not labelled after.
func (b *Backend) objects(w *workload.Workload) ([]runtime.Object, error) {
	labels := map[string]string{LabelLease: w.Input.Lease, LabelTeam: w.Input.Team, LabelClass: w.Input.Class, LabelInstance: b.cfg.Instance}
	var out []runtime.Object
	workloads := 0
	for _, doc := range strings.Split(w.KubernetesYAML, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			return nil, fmt.Errorf("kube: template %s renders a manifest the API does not read: %w", w.Template.Name, err)
		}
		if err := checkGrant(w, obj); err != nil {
			return nil, err
		}
		var bad string // a label the backend finds the object by that it lacks
		switch o := obj.(type) {
		case *corev1.Service:
			bad = lacks(o.Labels, labels)
			if len(o.Spec.Selector) > 0 && bad == "" {
				// Only this installation's pods: another one sharing the cluster has an L-42 too.
				bad = lacks(o.Spec.Selector, map[string]string{LabelLease: w.Input.Lease, LabelInstance: b.cfg.Instance})
			}
		case *corev1.Pod:
			bad = lacks(o.Labels, labels)
			workloads++
		case *batchv1.Job:
			if bad = lacks(o.Labels, labels); bad == "" {
				bad = lacks(o.Spec.Template.Labels, labels)
			}
			workloads++
		default:
			return nil, fmt.Errorf("kube: template %s renders a %T, which this backend does not create", w.Template.Name, obj)
		}
		if bad != "" {
			return nil, fmt.Errorf("kube: template %s renders a %s without the label %s", w.Template.Name, kindOf(obj), bad)
		}
		out = append(out, obj)
	}
	if workloads != 1 {
		return nil, fmt.Errorf("kube: template %s renders %d pods and jobs, not one", w.Template.Name, workloads)
	}
	// The Pod or Job last, so its Service is there when it starts.
	sort.SliceStable(out, func(i, j int) bool { return kindOf(out[i]) == "service" && kindOf(out[j]) != "service" })
	return out, nil
}

// lacks is the first of want (sorted by key) that got does not have, as key=value; "" where none.
func lacks(got, want map[string]string) string {
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if got[k] != want[k] {
			return k + "=" + want[k]
		}
	}
	return ""
}

func kindOf(o runtime.Object) string {
	switch o.(type) {
	case *corev1.Service:
		return "service"
	case *corev1.Pod:
		return "pod"
	case *batchv1.Job:
		return "job"
	}
	return fmt.Sprintf("%T", o)
}

// ensureNamespace creates the team's namespace when it is missing.
func (b *Backend) ensureNamespace(ctx context.Context, name, team string) error {
	_, err := b.c.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("kube: namespace %s: %w", name, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{LabelTeam: team, LabelInstance: b.cfg.Instance}}}
	if _, err := b.c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("kube: create namespace %s: %w", name, err)
	}
	return nil
}

// Stop deletes everything that carries the lease's label: its Pod or Job (with its pods) and its
// Service. What is gone already is not an error.
func (b *Backend) Stop(ctx context.Context, l *qm.Lease) error {
	ns := ""
	if _, namespace, _, ok := parseRef(l.Ref); ok {
		ns = namespace
	}
	return b.credentials(b.deleteLease(ctx, ns, l.ID.String()))
}

// Sweep deletes what is left of a lease whose Job or Pod is gone (deleted outside Quartermaster):
// its Service, and its pods where the Job was deleted without them (the API's default for a
// batch/v1 Job, kubectl delete --cascade=orphan), which would hold their GPUs until they end.
func (b *Backend) Sweep(ctx context.Context, l *qm.Lease) error { return b.Stop(ctx, l) }

var _ qm.SweepAdviser = (*Backend)(nil)

// SweepAdvice says what an operator can do about a lease whose leftovers keep failing to delete:
// give the service account the right to delete them where the API server forbids it, else look
// for a namespace stuck terminating; and how to delete them by hand either way.
func (b *Backend) SweepAdvice(id qm.LeaseID, err error) string {
	byHand := fmt.Sprintf("kubectl delete jobs,pods,services -A -l %s=%s,%s=%s", LabelLease, id, LabelInstance, b.cfg.Instance)
	if apierrors.IsForbidden(err) {
		return "the service account may not delete them: let it delete jobs, pods and services in that namespace (a Role or ClusterRole bound to it), or delete them by hand: " + byHand
	}
	return "check whether their namespace is stuck terminating (kubectl get namespace; a finalizer that never finishes keeps it), or delete them by hand: " + byHand
}

// Cancel deletes a job no live lease owns, and what else carries its lease's label.
func (b *Backend) Cancel(ctx context.Context, j qm.Job) error {
	return b.credentials(b.cancel(ctx, j))
}

func (b *Backend) cancel(ctx context.Context, j qm.Job) error {
	kind, ns, name, ok := parseRef(j.Ref)
	if !ok {
		return fmt.Errorf("kube: %q is not a pod or job reference", j.Ref)
	}
	if err := b.delete(ctx, kind, ns, name); err != nil {
		return err
	}
	// The lease's other objects (its Service, pods its Job left) go with it, unless another Pod or
	// Job carries the lease's labels: the lease's own workload, beside a stray copy of its labels
	// that this cancel was for. A pod made by hand must never take a running lease's Job with it.
	sel := metav1.ListOptions{LabelSelector: LabelLease + "=" + j.Lease.String() + "," + LabelInstance + "=" + b.cfg.Instance}
	jobs, err := b.c.BatchV1().Jobs(ns).List(ctx, sel)
	if err != nil {
		return fmt.Errorf("kube: list jobs of %s: %w", j.Lease, err)
	}
	pods, err := b.c.CoreV1().Pods(ns).List(ctx, sel)
	if err != nil {
		return fmt.Errorf("kube: list pods of %s: %w", j.Lease, err)
	}
	var others []string
	for _, k := range jobs.Items {
		if kind != "job" || k.Name != name {
			others = append(others, Ref("job", k.Namespace, k.Name))
		}
	}
	for i := range pods.Items {
		if p := &pods.Items[i]; len(p.OwnerReferences) == 0 && jobOwner(p) == "" && (kind != "pod" || p.Name != name) {
			others = append(others, Ref("pod", p.Namespace, p.Name))
		}
	}
	if len(others) > 0 {
		b.log.Info("deleted one of the objects carrying a lease's labels and left the others", "lease", j.Lease, "deleted", j.Ref, "left", others)
		return nil
	}
	return b.deleteLease(ctx, ns, j.Lease.String())
}

func (b *Backend) delete(ctx context.Context, kind, ns, name string) error {
	var err error
	switch kind {
	case "pod":
		err = b.c.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{})
	case "job":
		policy := metav1.DeletePropagationBackground
		err = b.c.BatchV1().Jobs(ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &policy})
	case "service":
		err = b.c.CoreV1().Services(ns).Delete(ctx, name, metav1.DeleteOptions{})
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("kube: delete %s %s/%s: %w", kind, ns, name, err)
	}
	return nil
}

// deleteLease deletes the Jobs, Pods and Services of one lease of this instance, in namespace ns
// ("" for every namespace).
func (b *Backend) deleteLease(ctx context.Context, ns, lease string) error {
	sel := metav1.ListOptions{LabelSelector: LabelLease + "=" + lease + "," + LabelInstance + "=" + b.cfg.Instance}
	var errs []error
	jobs, err := b.c.BatchV1().Jobs(ns).List(ctx, sel)
	if err != nil {
		return fmt.Errorf("kube: list jobs of %s: %w", lease, err)
	}
	for _, j := range jobs.Items {
		errs = append(errs, b.delete(ctx, "job", j.Namespace, j.Name))
	}
	pods, err := b.c.CoreV1().Pods(ns).List(ctx, sel)
	if err != nil {
		return fmt.Errorf("kube: list pods of %s: %w", lease, err)
	}
	for _, p := range pods.Items {
		errs = append(errs, b.delete(ctx, "pod", p.Namespace, p.Name))
	}
	svcs, err := b.c.CoreV1().Services(ns).List(ctx, sel)
	if err != nil {
		return fmt.Errorf("kube: list services of %s: %w", lease, err)
	}
	for _, s := range svcs.Items {
		errs = append(errs, b.delete(ctx, "service", s.Namespace, s.Name))
	}
	return errors.Join(errs...)
}

// Jobs lists this instance's Pods and Jobs in every namespace and says what each is doing. A Job
// is judged by its conditions and its pods; a pod that belongs to a Job is not listed on its own.
// A failed one carries its exit code, Kubernetes's reason and the last lines of its log.
func (b *Backend) Jobs(ctx context.Context) ([]qm.Job, error) {
	sel := metav1.ListOptions{LabelSelector: LabelInstance + "=" + b.cfg.Instance}
	pods, err := b.c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, sel)
	if err != nil {
		return nil, b.credentials(fmt.Errorf("kube: list pods: %w", err))
	}
	jobs, err := b.c.BatchV1().Jobs(metav1.NamespaceAll).List(ctx, sel)
	if err != nil {
		return nil, b.credentials(fmt.Errorf("kube: list jobs: %w", err))
	}
	b.credentialsAccepted()
	podsOf := map[string][]*corev1.Pod{} // "namespace/job name" -> its pods
	var out []qm.Job
	seen := map[string]bool{}
	// A lease is one Pod or one Job: a pod of no Job beside a Job of the same lease, in its
	// namespace, is a copy of the lease's labels made by someone else, and no workload of it.
	jobLeases := map[string]bool{} // "namespace/L-7"
	for i := range jobs.Items {
		if id, ok := leaseOf(jobs.Items[i].Labels); ok {
			jobLeases[jobs.Items[i].Namespace+"/"+id.String()] = true
		}
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if owner := jobOwner(p); owner != "" {
			podsOf[p.Namespace+"/"+owner] = append(podsOf[p.Namespace+"/"+owner], p)
			continue
		}
		id, ok := leaseOf(p.Labels)
		if !ok || jobLeases[p.Namespace+"/"+id.String()] {
			continue
		}
		j := podJob(p)
		j.Lease, j.Ref, j.Kept = id, Ref("pod", p.Namespace, p.Name), true
		if j.State == qm.JobFailed {
			j.Output = b.output(ctx, j.Ref, p, seen)
			b.sayOOM(&j, nil, p)
		}
		out = append(out, j)
	}
	listedJobs := map[string]bool{}  // "namespace/job"
	nodeWords := map[string]string{} // what unplaced found of each node it read, in this pass
	for i := range jobs.Items {
		k := &jobs.Items[i]
		id, ok := leaseOf(k.Labels)
		if !ok {
			continue
		}
		kp := ownPods(k, podsOf[k.Namespace+"/"+k.Name])
		b.keepLoss(ctx, k, kp)
		j, failed := batchJob(k, kp)
		if (j.State == qm.JobStarting || j.State == qm.JobPending) && !j.SuspendedFree {
			// Fewer pods than its workload needs (none yet, or a multi-node lease's pods but
			// one): the Job controller may have been refused them (FailedCreate).
			j = b.createFailure(ctx, k, kp, j)
		}
		if (j.State == qm.JobStarting || j.State == qm.JobPending) && !j.SuspendedFree && j.StartedAt.IsZero() {
			j.Unplaced = b.unplaced(ctx, k, kp, nodeWords)
		}
		j.Lease, j.Ref, j.Kept = id, Ref("job", k.Namespace, k.Name), true
		if d := k.Spec.ActiveDeadlineSeconds; d != nil && *d > 0 {
			j.TimeLimit = time.Duration(*d)*time.Second - waited(k, kp)
		}
		if j.State == qm.JobPending && k.Status.StartTime != nil {
			j.DeadlineFrom = k.Status.StartTime.Time // the deadline counts the wait too
		}
		if failed != nil {
			j.Output = b.output(ctx, j.Ref, failed, seen)
		}
		b.sayOOM(&j, k, failed)
		key := k.Namespace + "/" + k.Name
		if strings.Contains(j.Reason, lostWords) {
			if w := b.whyLost(ctx, key, kp); w != "" {
				j.Reason = strings.Replace(j.Reason, lostWords, w, 1)
			}
		}
		b.sawRun(key, kp)
		listedJobs[key] = true
		out = append(out, j)
	}
	left := b.leftovers(ctx, out, podsOf, jobs.Items)
	b.mu.Lock()
	for key := range b.outputs {
		if !seen[key] {
			delete(b.outputs, key)
		}
	}
	b.left = left
	for key := range b.ranOn {
		if !listedJobs[key] {
			delete(b.ranOn, key)
		}
	}
	b.mu.Unlock()
	return out, nil
}

// unplaced says why a waiting Job can never run where the service placed its lease: a node its
// pods are pinned to (a required node affinity on the node's name, matchFields metadata.name In)
// that none of its live pods is bound to is cordoned, or gone from the cluster, so the pod meant
// for it can never be placed. "" when every such node is there and takes pods, when the Job is
// pinned to none (the Kubernetes scheduler places it), or when a node cannot be read. The service
// then deletes the Job and places its lease again, rather than leave it waiting until its deadline.
// seen keeps what was found of each node read in this pass, so that each is read once.
func (b *Backend) unplaced(ctx context.Context, k *batchv1.Job, pods []*corev1.Pod, seen map[string]string) string {
	bound := map[string]bool{}
	for _, p := range pods {
		if alive(p) && p.Spec.NodeName != "" {
			bound[p.Spec.NodeName] = true
		}
	}
	for _, node := range pinnedNodes(k.Spec.Template.Spec) {
		if bound[node] {
			continue
		}
		words, ok := seen[node]
		if !ok {
			n, err := b.c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
			name := clip(qm.OneLine(node))
			switch {
			case apierrors.IsNotFound(err):
				words = "its node " + name + " is no longer in the cluster, and its pod was never placed there"
			case err != nil:
				b.log.Debug("the node a waiting Job is pinned to", "job", k.Namespace+"/"+k.Name, "node", node, "err", err)
			case nodeAway(n) == "cordoned" && !schedulable(n):
				words = "its node " + name + " was cordoned before its pod was placed there"
			}
			seen[node] = words
		}
		if words != "" {
			return words
		}
	}
	return ""
}

// pinnedNodes are the nodes a pod spec's required node affinity names by metadata.name In: where
// the service placed the lease.
func pinnedNodes(spec corev1.PodSpec) []string {
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	var out []string
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range term.MatchFields {
			if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpIn {
				out = append(out, f.Values...)
			}
		}
	}
	return out
}

// Leftovers are the leases that, as the last Jobs found them, have objects of this instance in
// the cluster but no Pod or Job: a Service, or pods whose Job was deleted without them. The
// reconcile pass sweeps those whose lease has ended.
func (b *Backend) Leftovers() []qm.LeaseID {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]qm.LeaseID(nil), b.left...)
}

// leftovers finds the leases of this instance's Services, and of its pods whose Job is not in
// the list, that have no Pod or Job of their own in jobs; in lease order.
func (b *Backend) leftovers(ctx context.Context, jobs []qm.Job, podsOf map[string][]*corev1.Pod, listed []batchv1.Job) []qm.LeaseID {
	has := map[qm.LeaseID]bool{}
	for _, j := range jobs {
		has[j.Lease] = true
	}
	found := map[qm.LeaseID]bool{}
	add := func(labels map[string]string) {
		if id, ok := leaseOf(labels); ok && !has[id] && labels[LabelInstance] == b.cfg.Instance {
			found[id] = true
		}
	}
	known := map[string]bool{}
	for i := range listed {
		known[listed[i].Namespace+"/"+listed[i].Name] = true
	}
	for key, pods := range podsOf {
		if known[key] {
			continue
		}
		for _, p := range pods {
			add(p.Labels)
		}
	}
	svcs, err := b.c.CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: LabelInstance + "=" + b.cfg.Instance})
	if err != nil {
		// The pods' are still found; the Services wait for the next pass.
		b.log.Warn("list services to find what ended leases left", "err", err)
	} else {
		for i := range svcs.Items {
			add(svcs.Items[i].Labels)
		}
	}
	out := make([]qm.LeaseID, 0, len(found))
	for id := range found {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// keepLoss writes on the Job why its pod that ran is failing or being deleted (AnnotationLostPod),
// so that the lease's reason still says so once Kubernetes has deleted the pod. A write that
// fails (the Job changed meanwhile) is tried again on the next pass while the pod is there.
func (b *Backend) keepLoss(ctx context.Context, k *batchv1.Job, pods []*corev1.Pod) {
	v, ok := goingPod(pods)
	if !ok || k.Annotations[AnnotationLostPod] == v || k.DeletionTimestamp != nil {
		return
	}
	u := k.DeepCopy()
	if u.Annotations == nil {
		u.Annotations = map[string]string{}
	}
	u.Annotations[AnnotationLostPod] = v
	got, err := b.c.BatchV1().Jobs(k.Namespace).Update(ctx, u, metav1.UpdateOptions{})
	if err != nil {
		b.log.Debug("keeping why a pod went on its Job", "job", k.Namespace+"/"+k.Name, "err", err)
		return
	}
	*k = *got
}

// output is the last lines of a failed pod's main container log, read once per pod; "" when the
// log cannot be read (the node is gone, the API refuses).
func (b *Backend) output(ctx context.Context, ref string, p *corev1.Pod, seen map[string]bool) string {
	key := ref + "/" + string(p.UID)
	seen[key] = true
	b.mu.Lock()
	out, ok := b.outputs[key]
	b.mu.Unlock()
	if ok {
		return out
	}
	tail, limit := int64(workload.OutputLines), int64(16<<10)
	rc, err := b.c.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: mainContainer, TailLines: &tail, LimitBytes: &limit}).Stream(ctx)
	if err != nil {
		b.log.Debug("log of a failed pod", "pod", p.Namespace+"/"+p.Name, "err", err)
	} else {
		data, err := io.ReadAll(io.LimitReader(rc, limit))
		rc.Close()
		if err == nil {
			out = workload.OutputTail(string(data), workload.OutputLines)
		}
	}
	b.mu.Lock()
	if b.outputs == nil {
		b.outputs = map[string]string{}
	}
	b.outputs[key] = out
	b.mu.Unlock()
	return out
}

// SetTimeLimit raises a Job's activeDeadlineSeconds after its lease was extended, so its
// workload runs d from when its first pod was placed: the deadline counts from the Job's start,
// so the time it waited for a node is added. Only Jobs are asked; a bare Pod's deadline cannot
// be raised (Kubernetes lets it only go down), which is why workspaces are Jobs.
func (b *Backend) SetTimeLimit(ctx context.Context, j qm.Job, d time.Duration) error {
	kind, ns, name, ok := parseRef(j.Ref)
	if !ok || kind != "job" {
		return fmt.Errorf("kube: %q is not a Job, whose deadline can be raised", j.Ref)
	}
	k, err := b.c.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("kube: job %s/%s: %w", ns, name, err)
	}
	pods, err := b.c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelInstance + "=" + b.cfg.Instance})
	if err != nil {
		return fmt.Errorf("kube: pods of job %s/%s: %w", ns, name, err)
	}
	var mine []*corev1.Pod
	for i := range pods.Items {
		mine = append(mine, &pods.Items[i])
	}
	mine = ownPods(k, mine)
	secs := int64((d + waited(k, mine) + time.Second - 1) / time.Second)
	k.Spec.ActiveDeadlineSeconds = &secs
	if _, err := b.c.BatchV1().Jobs(ns).Update(ctx, k, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("kube: raise the deadline of job %s/%s: %w", ns, name, err)
	}
	return nil
}

func leaseOf(labels map[string]string) (qm.LeaseID, bool) {
	v := labels[LabelLease]
	if !strings.HasPrefix(v, "L-") {
		return 0, false
	}
	id, err := qm.ParseLeaseID(v)
	return id, err == nil
}

func jobOwner(p *corev1.Pod) string {
	for _, o := range p.OwnerReferences {
		if o.Kind == "Job" {
			return o.Name
		}
	}
	if n := p.Labels["batch.kubernetes.io/job-name"]; n != "" {
		return n
	}
	return p.Labels["job-name"]
}

// ownPods are those of pods that the Job owns: an owner reference to it, by its name and UID, as
// the Job controller writes on the pods it makes (and on those it adopts). A pod that only
// carries the Job's labels (its lease's, its job-name), or names the Job as its owner with another
// UID, was made by someone else: it is not the lease's workload, and does not start it, bill it
// or end it.
func ownPods(k *batchv1.Job, pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		for _, o := range p.OwnerReferences {
			if o.Kind == "Job" && o.Name == k.Name && (o.UID == "" || k.UID == "" || o.UID == k.UID) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// PodUIDs lists the UIDs of the pods behind a lease's Ref: the pod itself, or a Job's pods (those
// it owns: ownPods). The node agent names the pod of each GPU process by its UID (from its
// cgroup), so this is how the service finds a Kubernetes lease's telemetry.
func (b *Backend) PodUIDs(ctx context.Context, ref string) ([]string, error) {
	kind, ns, name, ok := parseRef(ref)
	if !ok {
		return nil, fmt.Errorf("kube: %q is not a pod or job reference", ref)
	}
	if kind == "pod" {
		p, err := b.c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("kube: get pod %s/%s: %w", ns, name, err)
		}
		return []string{string(p.UID)}, nil
	}
	k, err := b.c.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("kube: get job %s/%s: %w", ns, name, err)
	}
	pods, err := b.c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelInstance + "=" + b.cfg.Instance})
	if err != nil {
		return nil, fmt.Errorf("kube: list pods of job %s/%s: %w", ns, name, err)
	}
	all := make([]*corev1.Pod, 0, len(pods.Items))
	for i := range pods.Items {
		all = append(all, &pods.Items[i])
	}
	var uids []string
	for _, p := range ownPods(k, all) {
		uids = append(uids, string(p.UID))
	}
	return uids, nil
}

// createError is the error of a create the lease's workspace needed. Where the API server
// answered that it will not take the object (a ResourceQuota, a LimitRange, an admission
// policy: a 4xx status), it is a qm.Refused with the server's message, which the user is shown;
// a server that could not be reached or failed itself says nothing the user can act on.
func createError(id qm.LeaseID, kind string, err error) error {
	full := fmt.Errorf("kube: create %s for %s: %w", kind, id, err)
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return full
	}
	if code := st.Status().Code; code < 400 || code >= 500 || code == 401 || code == 408 || code == 429 {
		return full
	}
	msg := st.Status().Message
	if msg == "" {
		return full
	}
	return &qm.Refused{Reason: msg, Err: full}
}

// unanswered reports whether err is the API server not answering, or answering that it cannot
// answer now, as client-go gives it after its own retries: too many requests (429), a failure of
// its own (500, 502, 503, 504: etcd, a leader change, an overloaded server), a timeout on either
// side, or a connection refused, reset or dropped. A later try may be taken; nothing was refused.
func unanswered(err error) bool {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		switch st.Status().Code {
		case 429, 500, 502, 503, 504:
			return true
		}
		return apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
			apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err)
	}
	return errors.Is(err, context.DeadlineExceeded) || utilnet.IsTimeout(err) || utilnet.IsConnectionRefused(err) ||
		utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) || utilnet.IsHTTP2ConnectionLost(err)
}

// notAnswered is err as a qm.Unreachable where the API server did not answer (unanswered), with
// what client-go said of it for the lease's reason: the lease waits in the service's queue, and
// its start is tried again once the API answers. So is a 401 (refusesCredentials): the service's
// credentials, not the lease, are refused, and the lease waits for a platform admin to renew
// them, saying so. Any other error is returned as it is.
func (b *Backend) notAnswered(err error) error {
	var refused *qm.Refused
	if err == nil || errors.As(err, &refused) {
		return err
	}
	if b.refusesCredentials(err) {
		return b.credentials(err)
	}
	if !unanswered(err) {
		return err
	}
	said := ""
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		said = st.Status().Message
	}
	switch {
	case said != "":
	case utilnet.IsTimeout(err) || errors.Is(err, context.DeadlineExceeded):
		said = "it timed out"
	default:
		// The innermost error says what happened ("connect: connection refused"), not the
		// URL and the wrapping around it.
		inner := err
		for u := errors.Unwrap(inner); u != nil; u = errors.Unwrap(inner) {
			inner = u
		}
		said = inner.Error()
	}
	why := "the cluster's Kubernetes API server did not answer"
	if said = clip(qm.OneLine(said)); said != "" {
		why += ": " + said
	}
	return &qm.Unreachable{Reason: why, Err: err}
}

// createFailure says why the Job controller could not make a pod the Job's workload needs (its
// one pod, or one of a multi-node lease's), from its latest FailedCreate event on the Job, where
// that is newer than the Job's last pod made (its latest SuccessfulCreate event, its newest pod): the
// API server refused the pod (a ResourceQuota or LimitRange of the namespace, an admission
// webhook or policy: "… is forbidden: …", "… is invalid: …", "… denied the request …"), and the
// lease fails, its Job held so that the service deletes it (with any pod of it that runs) rather
// than leave it retrying until its deadline; or the create failed on the server's side (a webhook
// it cannot reach), and the lease waits, saying why. j is returned as it is when the Job has all
// the pods it needs, or no such event since it last made a pod (or its events cannot be read).
func (b *Backend) createFailure(ctx context.Context, k *batchv1.Job, pods []*corev1.Pod, j qm.Job) qm.Job {
	need, n, run := 1, gang(k), 0
	if n > 0 {
		need = n
	}
	live := 0
	for _, p := range pods {
		if alive(p) {
			live++
			if p.Status.Phase == corev1.PodRunning {
				run++
			}
		}
	}
	if live >= need || (n == 0 && k.Status.Active > 0) {
		return j
	}
	sel := "involvedObject.kind=Job,involvedObject.name=" + k.Name
	evs, err := b.c.CoreV1().Events(k.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		b.log.Debug("events of a Job short of pods", "job", k.Namespace+"/"+k.Name, "err", err)
		return j
	}
	// made is when the Job controller last made a pod of the Job: its latest SuccessfulCreate
	// event, or its newest pod still listed (the event may be gone, an hour after). A FailedCreate
	// that last happened before it is of an earlier try (a quota raised since, a webhook back):
	// the pod it was refused was made after all, and it says nothing of the Job's pods now.
	var made time.Time
	for _, p := range pods {
		if t := p.CreationTimestamp.Time; t.After(made) {
			made = t
		}
	}
	var last *corev1.Event
	var lastAt time.Time
	for i := range evs.Items {
		e := &evs.Items[i]
		o := e.InvolvedObject
		// The field selector is the server's; the check is kept here too (and names the Job
		// by its UID, so that a Job of the same name deleted before says nothing of this one).
		if o.Kind != "Job" || o.Name != k.Name || (o.UID != "" && k.UID != "" && o.UID != k.UID) {
			continue
		}
		at := eventTime(e)
		switch e.Reason {
		case "SuccessfulCreate":
			if at.After(made) {
				made = at
			}
		case "FailedCreate":
			if last == nil || at.After(lastAt) {
				last, lastAt = e, at
			}
		}
	}
	if last != nil && made.After(lastAt) {
		last = nil
	}
	if last == nil {
		return j
	}
	msg := strings.TrimPrefix(qm.OneLine(last.Message), "Error creating: ")
	why := "Kubernetes: FailedCreate"
	if msg != "" {
		why += ": " + clip(msg)
	}
	if refusedCreate(msg) && (n > 0 || !quotaFillsLater(msg)) {
		// A multi-node lease's pods that run count in the namespace's quota themselves, and
		// hold their GPUs while the lease waits: it fails even where the quota is only full.
		if n > 0 {
			why += fmt.Sprintf(", one of its %d pods", n)
		}
		return qm.Job{State: qm.JobFailed, Reason: why, Refused: true, Held: true, EndedAt: lastAt, StartedAt: j.StartedAt}
	}
	if n > 0 {
		why = fmt.Sprintf("%d of %d pods running; waiting for %d (%s)", run, n, n-run, why)
	}
	return qm.Job{State: qm.JobPending, Reason: why, StartedAt: j.StartedAt}
}

// refusedCreate reports whether a FailedCreate message is the API server's refusal of the pod
// (403 Forbidden from a ResourceQuota, a LimitRange or an admission webhook; 422 Invalid), not a
// failure of its own that a later try may not meet.
func refusedCreate(msg string) bool {
	return strings.Contains(msg, " is forbidden: ") || strings.Contains(msg, " is invalid: ") || strings.Contains(msg, " denied the request")
}

// quotaFillsLater reports whether a refusal is a ResourceQuota's that the pod fits once others
// end: "exceeded quota: fjord-gpus, requested: requests.nvidia.com/gpu=1, used:
// requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=4", where no resource the pod asks
// for is more than the quota's limit. A pod that alone asks for more than a limit never fits, and
// a LimitRange or webhook refusal is no quota's.
func quotaFillsLater(msg string) bool {
	_, rest, ok := strings.Cut(msg, "exceeded quota: ")
	if !ok {
		return false
	}
	list := func(label string) map[string]resource.Quantity {
		_, v, ok := strings.Cut(rest, ", "+label+": ")
		if !ok {
			return nil
		}
		v, _, _ = strings.Cut(v, ", ")
		out := map[string]resource.Quantity{}
		for _, kv := range strings.Split(v, ",") {
			k, q, ok := strings.Cut(strings.TrimSpace(kv), "=")
			if !ok {
				continue
			}
			if qty, err := resource.ParseQuantity(q); err == nil {
				out[k] = qty
			}
		}
		return out
	}
	requested, limited := list("requested"), list("limited")
	if len(requested) == 0 || len(limited) == 0 {
		return false
	}
	for k, r := range requested {
		if l, ok := limited[k]; ok && r.Cmp(l) > 0 {
			return false
		}
	}
	return true
}

// eventTime is when an event last happened: the Job controller's recorder counts an event that
// happens again on the one it recorded first (count) and dates it anew (lastTimestamp); one
// recorded through events.k8s.io dates its repeats in its series (lastObservedTime).
func eventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}
